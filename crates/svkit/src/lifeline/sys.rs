//! Thin wrappers over Linux calls nix 0.29 does not offer (pidfds) or
//! offers only with an allocation per call (readlink), which the /proc
//! walk makes thousands of.
//!
//! A pidfd names one process for good, so "check its start time, then
//! signal it" cannot hit a recycled pid, and polling it tells when a child
//! exits without a busy loop or SIGCHLD handling.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use nix::libc;

/// `pidfd_open(2)`; `Err` with ENOSYS on kernels before 5.3.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with integer arguments; on success the kernel
    // hands us a new descriptor that nothing else owns.
    let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: r is a fresh descriptor returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
}

/// `pidfd_send_signal(2)`.
pub fn pidfd_send_signal(fd: &OwnedFd, sig: i32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fd is a valid pidfd we own; a null siginfo is allowed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `sig` to `pid` only if it is still the process that started at
/// `start_time`. Returns whether a signal was delivered.
pub fn signal_if_same(
    pid: i32,
    start_time: u64,
    sig: nix::sys::signal::Signal,
) -> io::Result<bool> {
    use super::identity::is_alive;
    match pidfd_open(pid) {
        Ok(fd) => {
            if !is_alive(pid, start_time) {
                return Ok(false);
            }
            match pidfd_send_signal(&fd, sig as i32) {
                Ok(()) => Ok(true),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            // Old kernel: the check-then-kill window remains, but is tiny.
            if !is_alive(pid, start_time) {
                return Ok(false);
            }
            match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig) {
                Ok(()) => Ok(true),
                Err(nix::errno::Errno::ESRCH) => Ok(false),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e),
    }
}

/// `readlinkat(2)` into `out`; the length written (cut at `out.len()`).
pub fn readlink_at(dir: &OwnedFd, name: &std::ffi::CStr, out: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: name is NUL-terminated; the kernel writes at most out.len().
    let r = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            out.as_mut_ptr().cast(),
            out.len(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}
