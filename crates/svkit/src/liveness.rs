//! Liveness: a watcher beside a slot's program checks it every interval
//! and restarts the slot after `failures` failed checks in a row.
//!
//! One small process per slot that has a check: s6 runs nothing
//! periodically, and a check must run while the program runs. The slot's
//! `run` starts it (detached, in its own process group) before it execs
//! the program; it holds a pidfd of that process and ends when it ends, so
//! every restart has exactly one watcher. It only checks while the slot is
//! up, ready and not waiting for dependencies. Its restart goes through
//! `slot::end::send`, so `finish` knows the death was asked for. What it
//! last saw is in its record (`slot::liveness`) (`svctl status` shows it). What it says
//! goes to the slot's log without ever blocking on it ([`crate::msg::say`]).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::lifeline::ready::Probe;
use crate::s6::control::Command6;
use crate::s6::status;
use crate::slot::end::{self, send};
use crate::slot::{health, liveness};

/// One check, resolved.
#[derive(Debug, Clone)]
pub enum Check {
    Probe(Probe),
    /// argv (with the privilege drop in front when the slot has a user).
    Exec(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Watch {
    pub slot: PathBuf,
    pub check: Check,
    pub interval: Duration,
    pub timeout: Duration,
    pub failures: u32,
}

/// A pidfd of `pid`, to [`watch`] it.
pub fn pidfd(pid: i32) -> io::Result<OwnedFd> {
    crate::lifeline::sys::pidfd_open(pid)
}

/// Runs the checks until the process behind `pid` ends.
pub fn watch(w: &Watch, pid: &OwnedFd) -> io::Result<()> {
    let mut failing = 0u32;
    liveness::write(&w.slot, failing, w.failures, None);
    loop {
        if ended(pid, w.interval)? {
            return Ok(());
        }
        if !checkable(&w.slot) {
            continue;
        }
        match attempt(&w.check, w.timeout) {
            Ok(()) => {
                if failing > 0 {
                    failing = 0;
                    liveness::write(&w.slot, 0, w.failures, None);
                }
            }
            Err(why) => {
                failing += 1;
                liveness::write(&w.slot, failing, w.failures, Some(&why));
                if failing >= w.failures {
                    // Restart first, then say so: a program hung on a full
                    // log pipe must not take the restart down with it, and
                    // the line never waits on that pipe (msg::say).
                    send(&w.slot, &[Command6::Restart, Command6::Cont])
                        .map_err(io::Error::other)?;
                    crate::msg::say(&format!(
                        "svkit: liveness check of {} failed {failing} times in a row ({why}): restarting it",
                        name(&w.slot)
                    ));
                    // The restart ends the watched process, and so this watch.
                    failing = 0;
                }
            }
        }
    }
}

fn name(slot: &Path) -> String {
    slot.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Sleeps up to `d` on the pidfd: true when the process ended.
fn ended(pid: &OwnedFd, d: Duration) -> io::Result<bool> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let deadline = Instant::now() + d;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up: never wake just before the deadline to spin.
        let ms = u16::try_from(left.as_millis() + 1).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(pid.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) if Instant::now() >= deadline => return Ok(false),
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => return Ok(true),
            Err(e) => return Err(io::Error::from_raw_os_error(e as i32)),
        }
    }
}

/// Up, ready by svkit's rule, and not waiting for its dependencies.
fn checkable(slot: &Path) -> bool {
    status::read_slot(slot).is_ok_and(|st| {
        health::ready(&st, health::notifies(slot)) && end::waiting_for(slot, st.up).is_none()
    })
}

fn attempt(check: &Check, timeout: Duration) -> Result<(), String> {
    match check {
        Check::Probe(p) => p.attempt(timeout),
        Check::Exec(argv) => exec(argv, timeout),
    }
}

/// Runs `argv` with its output discarded; passes on exit 0 within `timeout`,
/// else it is killed.
fn exec(argv: &[String], timeout: Duration) -> Result<(), String> {
    let Some((prog, args)) = argv.split_first() else {
        return Err("empty command".into());
    };
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    let fd = crate::lifeline::sys::pidfd_open(i32::try_from(child.id()).unwrap_or(0))
        .map_err(|e| format!("pidfd: {e}"))?;
    let done = ended(&fd, timeout).map_err(|e| e.to_string())?;
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("timed out after {} ms", timeout.as_millis()));
    }
    match child.wait() {
        Ok(s) if s.success() => Ok(()),
        // "exited 1", not ExitStatus's own "exited exit status: 1".
        Ok(s) => Err(
            match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => format!("exited {c}"),
                (None, Some(n)) => format!("killed by signal {n}"),
                (None, None) => format!("ended: {s}"),
            },
        ),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_passes_fails_and_times_out() {
        let argv = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(exec(&argv(&["true"]), Duration::from_secs(5)), Ok(()));
        assert_eq!(
            exec(&argv(&["false"]), Duration::from_secs(5)),
            Err("exited 1".into())
        );
        let e = exec(&argv(&["sleep", "5"]), Duration::from_millis(50)).unwrap_err();
        assert_eq!(e, "timed out after 50 ms");
        assert!(exec(&argv(&["/nonexistent"]), Duration::from_secs(1)).is_err());
    }
}
