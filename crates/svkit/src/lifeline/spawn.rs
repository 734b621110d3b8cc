//! Spawning the child bound to our lifetime, and stopping it.
//!
//! Three bindings, each covering a way lifeline can go away:
//! - the child leads its own session (`setsid`), so stopping it signals its
//!   whole process group, including whatever it forked;
//! - `PR_SET_PDEATHSIG` (SIGKILL by default) ends it if lifeline dies hard.
//!   The kernel fires it when the *thread* that forked the child exits, so
//!   the thread that spawns must live as long as the child (the binary
//!   spawns from its main thread);
//! - its stdin is a pipe whose only writer lifeline holds, so a child that
//!   watches stdin (`LIFELINE_WATCH_STDIN=1` tells it to) sees EOF the moment
//!   lifeline is gone, however it went.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, SigSet, Signal};
use nix::sys::signalfd::SignalFd;
use nix::unistd::Pid;

use super::identity;
use super::run::Spec;
use super::{Error, Result};
use crate::clock::poll_until;
use crate::sys;

/// Environment variable set for the child: its stdin is a pipe held by
/// lifeline, and EOF on it means "lifeline is gone, exit".
pub const WATCH_STDIN_ENV: &str = "LIFELINE_WATCH_STDIN";

/// A spawned child we are responsible for.
#[derive(Debug)]
pub struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    pidfd: Option<OwnedFd>,
    pub pid: i32,
    pub start_time: u64,
}

/// What ended a wait on the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    Exited(ExitStatus),
    /// The descriptor at this index is readable or hung up.
    Fd(usize),
}

/// `128 + N` for a signal, the code otherwise (shell convention).
pub fn exit_code(status: ExitStatus) -> i32 {
    (status.code()).unwrap_or_else(|| crate::msg::exit::signaled(status.signal().unwrap_or(0)))
}

/// Spawns the child of `spec` (its argv and death signal). See the module
/// doc for what binds it.
pub fn spawn(spec: &Spec) -> Result<Running> {
    let (program, args) = spec
        .argv
        .split_first()
        .ok_or_else(|| Error::Usage("no command given".into()))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env(WATCH_STDIN_ENV, "1")
        .stdin(Stdio::piped());
    let parent = nix::unistd::getpid();
    let sig = spec.death_signal;
    // SAFETY: the closure runs between fork and exec (possibly of a
    // process whose other threads held the allocator's lock) and only makes
    // async-signal-safe system calls (sigprocmask, setsid, prctl, getppid);
    // it allocates nothing, errors included (an OS error code is no box).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            // The binary blocks the signals it reads through a signalfd; the
            // child must not inherit that mask.
            SigSet::empty().thread_set_mask().map_err(io::Error::from)?;
            nix::unistd::setsid().map_err(io::Error::from)?;
            nix::sys::prctl::set_pdeathsig(sig).map_err(io::Error::from)?;
            // If we died between fork and prctl, no death signal will come.
            // ESRCH: the process we were bound to is gone.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| Error::Spawn {
        program: program.to_string_lossy().into_owned(),
        source,
    })?;
    let pid = child.id() as i32;
    // Start time is fixed at fork, so reading it after exec (or even of a
    // zombie) gives the same value.
    let start_time = match identity::read_stat(pid) {
        Ok(Some(st)) => st.start_time,
        other => {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            let _ = child.wait();
            let why = other
                .err()
                .unwrap_or_else(|| io::Error::other("child vanished"));
            return Err(Error::io(format!("unable to read /proc/{pid}/stat"), why));
        }
    };
    Ok(Running {
        stdin: child.stdin.take(),
        child,
        pidfd: sys::pidfd_open(pid).ok(),
        pid,
        start_time,
    })
}

impl Running {
    /// Non-blocking: has the child exited (and been reaped)?
    pub fn try_exit(&mut self) -> Result<Option<ExitStatus>> {
        (self.child.try_wait()).map_err(|e| Error::io("unable to wait for the child", e))
    }

    /// Blocks until the child exits or one of `fds` is readable or hung up.
    /// Without pidfd support (kernel < 5.3) it rechecks the child every 100 ms.
    pub fn wait_event(&mut self, fds: &[BorrowedFd<'_>]) -> Result<Wake> {
        loop {
            if let Some(s) = self.try_exit()? {
                return Ok(Wake::Exited(s));
            }
            let mut all = fds.to_vec();
            all.extend(self.pidfd.as_ref().map(|p| p.as_fd()));
            let timeout = match self.pidfd {
                Some(_) => PollTimeout::NONE,
                None => PollTimeout::from(100u16),
            };
            let ready = poll_ready(&all, timeout).map_err(|e| Error::nix("unable to poll", e))?;
            if let Some(&i) = ready.iter().find(|&&i| i < fds.len()) {
                return Ok(Wake::Fd(i));
            }
        }
    }

    fn group_alive(&self) -> bool {
        !matches!(killpg(Pid::from_raw(self.pid), None), Err(Errno::ESRCH))
    }

    /// Stops the child: close its stdin, SIGTERM its process group, wait up
    /// to `grace` for the whole group to go, SIGKILL what is left, reap. Of
    /// a child that exited on its own, this stops what is left of its group.
    pub fn stop(&mut self, grace: Duration) -> Result<ExitStatus> {
        drop(self.stdin.take());
        let pgid = Pid::from_raw(self.pid);
        let _ = killpg(pgid, Signal::SIGTERM);
        let mut failed = Ok(());
        poll_until(grace, || match self.try_exit() {
            // The group outlives a reaped leader while its members live.
            Ok(exited) => exited.is_some() && !self.group_alive(),
            Err(e) => {
                failed = Err(e);
                true
            }
        });
        failed?;
        // Whatever ignored SIGTERM goes now; ESRCH means nothing was left.
        let _ = killpg(pgid, Signal::SIGKILL);
        (self.child.wait()).map_err(|e| Error::io("unable to wait for the child", e))
    }
}

/// Polls `fds` for input up to `timeout`: the indices of those with any
/// event we asked POLLIN for (readable, hung up, or in error); none when a
/// signal came first.
fn poll_ready(fds: &[BorrowedFd<'_>], timeout: PollTimeout) -> nix::Result<Vec<usize>> {
    let mut pfds: Vec<PollFd> = (fds.iter())
        .map(|fd| PollFd::new(*fd, PollFlags::POLLIN))
        .collect();
    match nix::poll::poll(&mut pfds, timeout) {
        Ok(_) | Err(Errno::EINTR) => {}
        Err(e) => return Err(e),
    }
    let ready = |p: &PollFd| p.revents().is_some_and(|r| !r.is_empty());
    Ok((0..pfds.len()).filter(|&i| ready(&pfds[i])).collect())
}

/// Blocks `sigs` in the calling thread (the binary reads them through a
/// signalfd; spawned children get an empty mask back).
pub fn block_signals(sigs: &[Signal]) -> Result<SigSet> {
    let set: SigSet = sigs.iter().copied().collect();
    (set.thread_block()).map_err(|e| Error::nix("unable to block signals", e))?;
    Ok(set)
}

/// What can ask a running lifeline to stop: its stop signals (read from a
/// signalfd, so one arriving while reaping or probing is queued, not
/// fatal) and, with --watch-stdin, EOF on stdin (the parent went away).
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
        let ready = poll_ready(&self.fds(), PollTimeout::ZERO).unwrap_or_default();
        // Every ready source is drained, whatever the first one says.
        ready
            .into_iter()
            .fold(false, |stop, i| self.drain(i) | stop)
    }
}
