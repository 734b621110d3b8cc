//! `svkit stop-leftovers`: the stop hook's last step, once the foreground
//! command and every slot are down.
//!
//! After the cont-finish hooks, s6-overlay sends TERM to every process
//! left, sleeps `S6_KILL_GRACETIME` in full whatever is left, then sends
//! KILL. Two kinds of process still care about that grace, and this step
//! gives each a grace of its own that ends as soon as it is not needed,
//! so the image can set `S6_KILL_GRACETIME=0`:
//!
//! - a stopped slot's logger: it must read what its producer wrote last
//!   and write it out. It is stopped here, once the pipe from its slot is
//!   empty, and waited for: s6-log exits on TERM only after writing out
//!   what it read.
//! - strays (a slot's double-forked child, a background process a hook
//!   left): every process whose parent is PID 1 other than a supervisor
//!   or s6-overlay's stage 2 (which runs the CMD), and their children.
//!   They get TERM, then up to [`STRAY_GRACE`] to exit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::clock::poll_by;
use crate::lifeline::identity::{processes, with_descendants, Stat};
use crate::msg::{self, exit};
use crate::s6::control::{self, SvcCommand};
use crate::s6::status::read_slot;
use crate::slot::logger::{self, PipeLevel};
use crate::stray::Copy;

/// How long the stopped slots' loggers get, all together, to drain their
/// pipe and exit.
pub const LOGGER_WAIT: Duration = Duration::from_millis(500);

/// How long strays get after their TERM, all together.
pub const STRAY_GRACE: Duration = Duration::from_millis(500);

/// The processes the init runs as its children that are not strays:
/// supervisors, s6-svscan (under svkit-init), and s6-overlay's stage 2
/// (`rc.init`, whose child is the CMD: the foreground command had its own
/// grace, svkit-wrap's keep-alive needs none).
const NOT_STRAYS: [&str; 3] = ["s6-supervise", "s6-svscan", "rc.init"];

/// svkit-init names its CMD to the stop hooks (pid), which is no stray
/// either, as stage 2 is not under s6-overlay.
pub const CMD_PID_ENV: &str = "SVKIT_CMD_PID";

/// The strays among `procs`: the children of `reaper` (the container's
/// init) not named in [`NOT_STRAYS`] nor `cmd`, and every descendant of
/// one, never `me` or an ancestor of `me`.
pub fn strays(procs: &[Stat], reaper: i32, cmd: Option<i32>, me: i32) -> Vec<Copy> {
    let mut mine = BTreeSet::from([me]);
    let mut at = me;
    while let Some(p) = procs.iter().find(|p| p.pid == at && p.ppid > 0) {
        mine.insert(p.ppid);
        at = p.ppid;
    }
    let orphans = (procs.iter())
        .filter(|p| p.ppid == reaper && Some(p.pid) != cmd)
        .filter(|p| !NOT_STRAYS.contains(&p.comm.as_str()))
        .map(|p| p.pid)
        .collect();
    let set = with_descendants(procs, orphans);
    (procs.iter())
        .filter(|p| set.contains(&p.pid) && !mine.contains(&p.pid))
        .filter(|p| p.pid > 1 && p.pid != reaper && p.state != 'Z' && p.state != 'X')
        .map(|p| Copy {
            pid: p.pid,
            start_time: p.start_time,
        })
        .collect()
}

/// Each look reads a few small files, and the whole container waits on
/// this step: a look every millisecond costs less than a coarser one
/// saves.
const LOOK_EVERY: Duration = Duration::from_millis(1);

/// Stops each logger of a stopped slot once its pipe is empty, and waits
/// for them, at most `limit` in all: the loggers still up after it.
pub fn stop_loggers(scandir: &Path, limit: Duration) -> Vec<PathBuf> {
    let deadline = Instant::now() + limit;
    let up = |d: &PathBuf| read_slot(&d.join("log")).is_ok_and(|s| s.up);
    // The svkit slots in `scandir` that are down, while their logger is up.
    let names = crate::s6::services(scandir).unwrap_or_default();
    let slots: Vec<PathBuf> = (names.iter())
        .map(|n| scandir.join(n))
        .filter(|d| crate::slot::owner::is_ours(d) && logger::has_logger(d))
        .filter(|d| read_slot(d).is_ok_and(|s| !s.up) && up(d))
        .collect();
    for slot in &slots {
        // An unreadable level (no supervisor to read it through) is no
        // reason to wait.
        poll_by(deadline, LOOK_EVERY, || {
            PipeLevel::read(slot).is_none_or(|l| l.queued == 0)
        });
        if let Err(e) = control::write(&slot.join("log"), &[SvcCommand::Down]) {
            msg::warn(format_args!(
                "unable to stop the logger of {}: {e}",
                slot.display()
            ));
        }
    }
    poll_by(deadline, LOOK_EVERY, || !slots.iter().any(up));
    slots.into_iter().filter(up).collect()
}

/// What became of the strays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strays {
    pub termed: Vec<Copy>,
    pub left: Vec<Copy>,
    pub took: Duration,
}

/// Sends TERM (and CONT, so a stopped one sees it) to every stray, then
/// waits at most `grace` while any still runs.
pub fn end_strays(reaper: i32, cmd: Option<i32>, grace: Duration) -> Strays {
    let t0 = Instant::now();
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let mut termed = Vec::new();
    for copy in strays(&processes(), reaper, cmd, me) {
        // A stray gone meanwhile, or one this user may not signal, is
        // none of this step's business: s6-overlay's TERM still reaches it.
        if matches!(copy.signal(Signal::SIGTERM, false), Ok(true)) {
            let _ = copy.signal(Signal::SIGCONT, false);
            termed.push(copy);
        }
    }
    poll_by(t0 + grace, LOOK_EVERY, || termed.iter().all(|c| !c.alive()));
    let left = termed.iter().copied().filter(|c| c.alive()).collect();
    Strays {
        termed,
        left,
        took: t0.elapsed(),
    }
}

/// The container's init, shutting down: s6-overlay's PID 1 (its
/// container results dir exists) or svkit-init. Anywhere else, the
/// children of PID 1 are no strays of ours.
fn container_init() -> Option<i32> {
    let reaper = crate::container::supervision().reaper()?;
    let results = crate::slot::end::container_exitcode();
    results.parent().is_some_and(Path::is_dir).then_some(reaper)
}

fn pids(copies: &[Copy]) -> String {
    let v: Vec<String> = copies.iter().map(|c| c.pid.to_string()).collect();
    v.join(" ")
}

/// `svkit stop-leftovers`, run by the stop hook after `svctl stop --all`.
/// One line for what it did (none when there was nothing to do); exit 0,
/// 100 on bad usage.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    msg::init("svkit stop-leftovers");
    if args.len() > 0 {
        msg::fatal("usage: svkit stop-leftovers (run by the stop hook; no arguments)");
        return ExitCode::from(exit::USAGE);
    }
    let Some(reaper) = container_init() else {
        msg::warn("PID 1 is not s6-overlay's s6-svscan, and no svkit-init runs: nothing to do");
        return ExitCode::SUCCESS;
    };
    for slot in stop_loggers(&crate::container::scandir(), LOGGER_WAIT) {
        msg::warn(format_args!(
            "the logger of {} still runs {} ms after its stop: it gets s6-overlay's final TERM",
            slot.display(),
            LOGGER_WAIT.as_millis()
        ));
    }
    let cmd = std::env::var(CMD_PID_ENV).ok().and_then(|v| v.parse().ok());
    let s = end_strays(reaper, cmd, STRAY_GRACE);
    if s.termed.is_empty() {
        return ExitCode::SUCCESS;
    }
    if s.left.is_empty() {
        msg::info(format_args!(
            "sent TERM to {} stray process(es) ({}); all exited within {} ms",
            s.termed.len(),
            pids(&s.termed),
            s.took.as_millis()
        ));
    } else {
        msg::warn(format_args!(
            "sent TERM to {} stray process(es) ({}); {} still run after {} ms ({}): they get s6-overlay's final TERM and KILL",
            s.termed.len(),
            pids(&s.termed),
            s.left.len(),
            s.took.as_millis(),
            pids(&s.left)
        ));
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, comm: &str) -> Stat {
        Stat {
            pid,
            comm: comm.into(),
            state: 'S',
            ppid,
            pgrp: pid,
            session: pid,
            start_time: 1000 + pid as u64,
            cpu_ticks: 0,
            threads: 1,
            rss_pages: 0,
        }
    }

    fn pids_of(v: &[Copy]) -> Vec<i32> {
        v.iter().map(|c| c.pid).collect()
    }

    #[test]
    fn strays_are_the_orphans_and_their_children_only() {
        let procs = [
            p(1, 0, "s6-svscan"),
            p(17, 1, "rc.init"),
            p(104, 17, "svkit-wrap"),
            p(18, 1, "s6-supervise"),
            p(19, 18, "s6-linux-init-s"),
            p(56, 1, "s6-supervise"),
            p(59, 56, "s6-log"),
            p(80, 1, "daemon"),
            p(81, 80, "worker"),
            p(82, 81, "helper"),
            p(90, 0, "sh"),
            p(91, 90, "sleep"),
            {
                let mut z = p(95, 1, "gone");
                z.state = 'Z';
                z
            },
        ];
        assert_eq!(pids_of(&strays(&procs, 1, None, 19)), vec![80, 81, 82]);
    }

    #[test]
    fn never_itself_nor_its_ancestors() {
        // Run by hand from a process PID 1 adopted: its chain stays.
        let procs = [
            p(1, 0, "s6-svscan"),
            p(40, 1, "sh"),
            p(41, 40, "svkit"),
            p(50, 1, "stray"),
        ];
        assert_eq!(pids_of(&strays(&procs, 1, None, 41)), vec![50]);
    }

    #[test]
    fn under_svkit_init_its_children_but_the_tree_and_the_cmd() {
        // svkit-init is pid 30, not PID 1 (tini is): s6-svscan and the CMD
        // are its children, and the hook running this; tini's are not ours.
        let procs = [
            p(1, 0, "docker-init"),
            p(30, 1, "svkit-init"),
            p(31, 30, "s6-svscan"),
            p(32, 31, "s6-supervise"),
            p(40, 30, "s6-pause"),
            p(41, 30, "sh"),
            p(42, 41, "svkit"),
            p(50, 30, "daemon"),
            p(51, 50, "worker"),
            p(60, 1, "other"),
        ];
        assert_eq!(pids_of(&strays(&procs, 30, Some(40), 42)), vec![50, 51]);
    }
}
