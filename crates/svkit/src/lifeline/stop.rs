//! What can ask a running lifeline to stop: its stop signals (read from a
//! signalfd, so one arriving while reaping or probing is queued, not
//! fatal) and, with --watch-stdin, EOF on stdin (the parent went away).

use std::os::fd::{AsFd, BorrowedFd};

use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signalfd::SignalFd;

pub struct StopSources {
    signals: SignalFd,
    watch_stdin: bool,
    stdin: std::io::Stdin,
}

impl StopSources {
    pub fn new(signals: SignalFd, watch_stdin: bool) -> StopSources {
        StopSources {
            signals,
            watch_stdin,
            stdin: std::io::stdin(),
        }
    }

    /// The fds to wait on: the signalfd, then stdin when watched.
    pub fn fds(&self) -> Vec<BorrowedFd<'_>> {
        let mut v = vec![self.signals.as_fd()];
        if self.watch_stdin {
            v.push(self.stdin.as_fd());
        }
        v
    }

    /// Drains what is pending on source `i`; true if it means "stop".
    /// Called only after poll reported `i` ready, so the read does not block
    /// (stdin is left blocking: O_NONBLOCK would leak to whoever shares it).
    pub fn drain(&mut self, i: usize) -> bool {
        if i == 0 {
            return matches!(self.signals.read_signal(), Ok(Some(_)));
        }
        let mut buf = [0u8; 4096];
        match nix::unistd::read(0, &mut buf) {
            Ok(0) => true,
            Ok(_) | Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => false,
            // An unreadable stdin cannot tell us anything any more: treat it
            // like EOF rather than spin on it.
            Err(_) => true,
        }
    }

    /// Non-blocking check of every source.
    pub fn requested(&mut self) -> bool {
        let mut pfds: Vec<PollFd> = (self.fds().into_iter())
            .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
            .collect();
        if nix::poll::poll(&mut pfds, PollTimeout::ZERO).unwrap_or(0) <= 0 {
            return false;
        }
        let ready: Vec<usize> = (0..pfds.len())
            .filter(|&i| pfds[i].revents().is_some_and(|r| !r.is_empty()))
            .collect();
        // Every ready source is drained, whatever the first one says.
        ready
            .into_iter()
            .fold(false, |stop, i| self.drain(i) | stop)
    }
}
