//! Linux calls nix 0.29 does not offer (pidfds), through rustix.
//! Infrastructure: imports nothing of svkit.
//!
//! A pidfd names one process for good, so "check its start time, then
//! signal it" cannot hit a recycled pid, and polling it tells when a child
//! exits without a busy loop or SIGCHLD handling.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

/// `pidfd_open(2)`; `Err` with ENOSYS on kernels before 5.3.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::from_raw_os_error(nix::libc::ESRCH))?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).map_err(io::Error::from)
}

/// `pidfd_send_signal(2)`.
pub fn pidfd_send_signal(fd: &OwnedFd, sig: nix::sys::signal::Signal) -> io::Result<()> {
    let sig = rustix::process::Signal::from_named_raw(sig as i32)
        .ok_or_else(|| io::Error::from_raw_os_error(nix::libc::EINVAL))?;
    rustix::process::pidfd_send_signal(fd, sig).map_err(io::Error::from)
}

/// Waits up to `d` (whole ms, at most a minute) for `fd` to be readable:
/// false when the time ran out or a signal came first.
pub fn readable_within(fd: BorrowedFd<'_>, d: Duration) -> io::Result<bool> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let ms = u16::try_from(d.as_millis()).unwrap_or(u16::MAX);
    match poll(
        &mut [PollFd::new(fd, PollFlags::POLLIN)],
        PollTimeout::from(ms),
    ) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Sleeps up to `d` on the pidfd `pid`: true when its process ended.
pub fn pidfd_wait(pid: &OwnedFd, d: Duration) -> io::Result<bool> {
    let deadline = Instant::now() + d;
    loop {
        // Rounded up: never wake just before the deadline to spin.
        let left = deadline.saturating_duration_since(Instant::now()) + Duration::from_millis(1);
        if readable_within(pid.as_fd(), left)? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
    }
}

/// Gives the heap's free pages back to the system (glibc's `malloc_trim`):
/// a long-lived process keeps otherwise what a peak of work left free.
/// Elsewhere (another libc), nothing.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes a plain integer, touches only the
    // allocator's own state under its locks, and may run at any time.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}
