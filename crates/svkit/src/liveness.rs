//! Liveness: a watcher beside a slot's program checks it every interval
//! and restarts the slot after `failures` failed checks in a row.
//!
//! One small process per slot that has a check: s6 runs nothing
//! periodically, and a check must run while the program runs. The slot's
//! `run` starts it (detached, in its own process group) before it execs
//! the program; it holds a pidfd of that process and ends when it ends, so
//! every restart has exactly one watcher. It only checks while the slot is
//! up, ready and not waiting for dependencies. Its restart goes through
//! `slot::end::send`, so `finish` knows the death was asked for. s6 then
//! sends the slot's down signal, and KILL only after a `timeout-kill`:
//! without one, a program hung or deaf to that signal would never end and
//! never be restarted. So the watcher bounds the wait itself, as a stray
//! copy's end is bounded ([`stray::kill_after`]: the slot's
//! `timeout-kill`, else [`stray::DEFAULT_STOP`]), then KILLs the process
//! it watched, its pid and start time re-read first: never a reused pid.
//! What it last saw is in its record (`slot::liveness`; `svctl status` shows it).
//! What it says goes to the container's output, never into the slot's
//! pipe, and never blocks ([`crate::msg::say_beside`]).

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::probe::Probe;
use crate::s6::control::SvcCommand;
use crate::s6::{slot_name as name, status};
use crate::slot::end::{self, send};
use crate::slot::{health, liveness};
use crate::stray::{self, Copy, Ended};

#[derive(Debug, Clone)]
pub struct Watcher {
    pub slot: PathBuf,
    /// The process watched (the slot's `run`, which becomes the program):
    /// its record names its pid; a restart that it outlives ends it.
    pub program: Copy,
    /// `Exec`, `Tcp` or `Http`.
    pub probe: Probe,
    pub interval: Duration,
    pub timeout: Duration,
    pub failures: u32,
}

/// Runs the checks until the process behind `pid` (a pidfd,
/// [`crate::sys::pidfd_open`]) ends.
pub fn watch(w: &Watcher, pid: &OwnedFd) -> io::Result<()> {
    let mut failing = 0u32;
    // A live process's pid: positive.
    let watched = w.program.pid.unsigned_abs();
    liveness::write(&w.slot, watched, failing, w.failures, None);
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
                    liveness::write(&w.slot, watched, 0, w.failures, None);
                }
            }
            Err(why) => {
                failing += 1;
                liveness::write(&w.slot, watched, failing, w.failures, Some(&why));
                if failing >= w.failures {
                    // Restart first, then say so: the line never waits on a
                    // full output (msg::say_beside).
                    send(&w.slot, &[SvcCommand::Restart, SvcCommand::Cont])
                        .map_err(io::Error::other)?;
                    crate::msg::say_beside("warning", format_args!(
                        "liveness check of {} failed {failing} times in a row ({why}): restarting it",
                        name(&w.slot)
                    ));
                    end_restarted(w);
                    // The restart ended the watched process, and so this watch.
                    failing = 0;
                }
            }
        }
    }
}

/// Ends the watched process if the restart's down signal did not: KILL
/// after the slot's `timeout-kill`, else after [`stray::DEFAULT_STOP`]
/// (where s6 would wait for ever). Says so when it had to.
fn end_restarted(w: &Watcher) {
    let (sig, grace) = stray::stop_plan(&w.slot);
    let (slot, pid) = (name(&w.slot), w.program.pid);
    let said = match stray::kill_after(w.program, grace) {
        Ok(Ended::Stopped) => return,
        Ok(Ended::Killed) => format!(
            "slot {slot}: pid {pid} did not end within {} ms of {}: killed it",
            grace.as_millis(),
            sig.as_str()
        ),
        Err(e) => format!(
            "slot {slot}: unable to end pid {pid} for its restart: {}",
            crate::msg::strerror(&e)
        ),
    };
    crate::msg::say_beside("warning", format_args!("{said}"));
}

/// Up, ready by svkit's rule, and not waiting for its dependencies.
fn checkable(slot: &Path) -> bool {
    status::read_slot(slot).is_ok_and(|st| {
        health::ready(&st, health::notifies(slot)) && end::waiting_for(slot, st.up).is_none()
    })
}
