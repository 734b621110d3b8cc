//! Linux calls nix 0.29 does not offer (pidfds) or offers only with an
//! allocation per call (readlink, which the /proc walk makes thousands
//! of), through rustix.
//!
//! A pidfd names one process for good, so "check its start time, then
//! signal it" cannot hit a recycled pid, and polling it tells when a child
//! exits without a busy loop or SIGCHLD handling.

use std::io;
use std::os::fd::OwnedFd;

/// `pidfd_open(2)`; `Err` with ENOSYS on kernels before 5.3.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::from_raw_os_error(libc_esrch()))?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).map_err(io::Error::from)
}

/// `pidfd_send_signal(2)`.
pub fn pidfd_send_signal(fd: &OwnedFd, sig: nix::sys::signal::Signal) -> io::Result<()> {
    let sig = rustix::process::Signal::from_named_raw(sig as i32)
        .ok_or_else(|| io::Error::from_raw_os_error(nix::libc::EINVAL))?;
    rustix::process::pidfd_send_signal(fd, sig).map_err(io::Error::from)
}

fn libc_esrch() -> i32 {
    nix::libc::ESRCH
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
            match pidfd_send_signal(&fd, sig) {
                Ok(()) => Ok(true),
                Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => Ok(false),
        Err(e) if e.raw_os_error() == Some(nix::libc::ENOSYS) => {
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
    rustix::fs::readlinkat_raw(dir, name, &mut *out).map_err(io::Error::from)
}
