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
//! last saw is in its record (`slot::liveness`; `svctl status` shows it).
//! What it says goes to the slot's log without ever blocking on it ([`crate::msg::say`]).

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::probe::Probe;
use crate::s6::control::SvcCommand;
use crate::s6::status;
use crate::slot::end::{self, send};
use crate::slot::{health, liveness};

#[derive(Debug, Clone)]
pub struct Watcher {
    pub slot: PathBuf,
    /// The process watched (the slot's `run`, which becomes the program):
    /// its record names it.
    pub pid: u32,
    /// `Exec`, `Tcp` or `Http`.
    pub probe: Probe,
    pub interval: Duration,
    pub timeout: Duration,
    pub failures: u32,
}

/// A pidfd of `pid`, to [`watch`] it.
pub fn pidfd(pid: i32) -> io::Result<OwnedFd> {
    crate::sys::pidfd_open(pid)
}

/// Runs the checks until the process behind `pid` ends.
pub fn watch(w: &Watcher, pid: &OwnedFd) -> io::Result<()> {
    let mut failing = 0u32;
    liveness::write(&w.slot, w.pid, failing, w.failures, None);
    loop {
        if crate::sys::pidfd_wait(pid, w.interval)? {
            return Ok(());
        }
        if !checkable(&w.slot) {
            continue;
        }
        match w.probe.attempt(w.timeout) {
            Ok(()) => {
                if failing > 0 {
                    failing = 0;
                    liveness::write(&w.slot, w.pid, 0, w.failures, None);
                }
            }
            Err(why) => {
                failing += 1;
                liveness::write(&w.slot, w.pid, failing, w.failures, Some(&why));
                if failing >= w.failures {
                    // Restart first, then say so: a program hung on a full
                    // log pipe must not take the restart down with it, and
                    // the line never waits on that pipe (msg::say).
                    send(&w.slot, &[SvcCommand::Restart, SvcCommand::Cont])
                        .map_err(io::Error::other)?;
                    crate::msg::say_warn(format_args!(
                        "liveness check of {} failed {failing} times in a row ({why}): restarting it",
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

/// Up, ready by svkit's rule, and not waiting for its dependencies.
fn checkable(slot: &Path) -> bool {
    status::read_slot(slot).is_ok_and(|st| {
        health::ready(&st, health::notifies(slot)) && end::waiting_for(slot, st.up).is_none()
    })
}
