//! A copy of a slot's program that no supervisor watches any more.
//!
//! When a slot's `s6-supervise` dies hard (`kill -9`, the OOM killer),
//! s6-svscan starts a new one, which knows nothing of the program the old
//! one started: it starts a second copy, and the first lives on beside it,
//! unseen by `s6-svstat` and out of reach of `s6-svc` (two servers on one
//! port, two workers on one queue).
//!
//! So a slot's `run` records who it is before anything else
//! ([`PROGRAM_FILE`]: pid and start time; `run` execs into the program, so
//! the pid is the program's), through `svkit slot-claim`, which first ends
//! the copy the previous record names when it still runs: the slot's down
//! signal, then KILL after its `timeout-kill` (or [`DEFAULT_STOP`]). A
//! wanted-down slot's new supervisor starts nothing, so [`find`] lets
//! `svctl status` show such a copy (not healthy) and `svctl stop` end it.
//!
//! A pid alone is not an identity: the record holds the start time too,
//! and every decision re-reads both from `/proc` right before it acts.
//!
//! Nor is s6's status file always the truth: s6-supervise only warns when
//! it cannot write it (a full `/run`) and writes it again at its next
//! change. A recorded program whose parent is the slot's live supervisor
//! is the supervised one whatever the file says ([`unseen`]).

use std::fs;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::Signal;

use crate::lifeline::identity;

/// Written by `run` (through `svkit slot-claim`) in the slot dir: the pid
/// and start time of the program it became.
pub const PROGRAM_FILE: &str = ".svkit-program";

/// The logger's own record, relative to the slot dir: `log/run` (through
/// `svkit log-claim`) keeps a [`PROGRAM_FILE`] in the logger's dir, so
/// that the next logger start ends an s6-log a killed supervisor left.
pub const LOG_PROGRAM_FILE: &str = "log/.svkit-program";

/// How long a stray copy gets after its down signal when the slot has no
/// `timeout-kill` of its own (s6 itself would wait for ever).
pub const DEFAULT_STOP: Duration = Duration::from_secs(3);

/// How long a copy gets to die after KILL before it is called unkillable.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// One process, as identified in [`PROGRAM_FILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy {
    pub pid: i32,
    pub start_time: u64,
}

impl Copy {
    /// The process `pid` as it is now; None when gone or a zombie.
    pub fn of(pid: i32) -> Option<Copy> {
        identity::live_start_time(pid).map(|start_time| Copy { pid, start_time })
    }

    /// Still the same running process?
    pub fn alive(self) -> bool {
        identity::is_alive(self.pid, self.start_time)
    }

    /// Sends `sig` to it (to its process group with `group`), its identity
    /// re-read right before: never to a reused pid
    /// ([`identity::signal_if_same`]). `Ok(false)`: it was gone already.
    pub fn signal(self, sig: Signal, group: bool) -> io::Result<bool> {
        identity::signal_if_same(self.pid, self.start_time, sig, group)
    }

    /// Waits until it is gone, polling, at most `limit`: whether it went.
    pub fn gone_within(self, limit: Duration) -> bool {
        crate::clock::poll_by(Instant::now() + limit, Duration::from_millis(20), || {
            !self.alive()
        })
    }
}

/// Parses a record: `PID START_TIME`, one line. Anything else is no
/// record: a bad one must never lead to a kill.
pub fn parse(text: &str) -> Option<Copy> {
    let mut words = text.lines().next()?.split(' ');
    let pid = words.next()?.parse::<i32>().ok().filter(|p| *p > 1)?;
    let start_time = words.next()?.parse::<u64>().ok()?;
    words.next().is_none().then_some(Copy { pid, start_time })
}

/// The recorded program, alive, when s6's status names another pid (or
/// none): [`unseen`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unseen {
    /// A copy no supervisor knows: its own died and left it (its parent is
    /// no longer the slot's supervisor).
    Stray(Copy),
    /// The program the slot's live supervisor runs (its child), started
    /// when `run` recorded it: s6 could not write its status file since
    /// (a full `/run`), which names a program gone or none. Never a stray.
    Unrecorded(Copy, SystemTime),
}

/// The recorded process when it runs and is not `supervised` (s6's pid
/// for the slot, 0 when none): the one rule of a stray, for status,
/// `svctl stop` and `svkit slot-claim`. The process is the child of the
/// slot's live `s6-supervise` (the holder of its `supervise/lock`) only
/// while that supervisor runs it: then s6's status file is stale, not the
/// copy unsupervised. On the usual path (the record names s6's pid) this
/// is one read of the record.
pub fn unseen(slot: &Path, supervised: u32) -> Option<Unseen> {
    let (text, meta) = crate::fsutil::read_record(&slot.join(PROGRAM_FILE), 64).ok()?;
    let c = parse(&text).filter(|c| u32::try_from(c.pid).ok() != Some(supervised))?;
    let st = identity::read_stat(c.pid).ok().flatten()?;
    if st.start_time != c.start_time || matches!(st.state, 'Z' | 'X') {
        return None;
    }
    let supervisor = crate::s6::status::lock_holder(&slot.join("supervise/lock"));
    match supervisor {
        Ok(Some(sup)) if sup > 0 && u32::try_from(st.ppid).ok() == Some(sup) => Some(
            Unseen::Unrecorded(c, meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
        ),
        _ => Some(Unseen::Stray(c)),
    }
}

/// A running copy of the slot's program that no supervisor knows
/// ([`unseen`]'s [`Unseen::Stray`]).
pub fn find(slot: &Path, supervised: u32) -> Option<Copy> {
    match unseen(slot, supervised) {
        Some(Unseen::Stray(c)) => Some(c),
        _ => None,
    }
}

/// Writes the record of `me` in place, in one write: no temp file, so a
/// start makes no new inode beyond the record's first (a file costs far
/// more than a write on some hosts' `/run`). A reader that catches it
/// empty or half written sees no record, or one whose pid and start time
/// name no live process: never a wrong kill, and the copy the previous
/// record named was ended before this write.
pub fn record(slot: &Path, me: Copy) -> io::Result<()> {
    let line = format!("{} {}\n", me.pid, me.start_time);
    crate::fsutil::overwrite(&slot.join(PROGRAM_FILE), line.as_bytes())
}

/// The signal and grace the slot's supervisor would use to stop it: its
/// `down-signal` and `timeout-kill` files, else TERM and [`DEFAULT_STOP`].
pub fn stop_plan(slot: &Path) -> (Signal, Duration) {
    let first_line = |name: &str| -> Option<String> {
        let text = fs::read_to_string(slot.join(name)).ok()?;
        Some(text.lines().next()?.trim().into())
    };
    let sig = first_line("down-signal").and_then(|s| crate::s6::signal::parse(&s));
    let grace = first_line("timeout-kill")
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_STOP, Duration::from_millis);
    (sig.unwrap_or(Signal::SIGTERM), grace)
}

/// How ending a copy went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited after its down signal.
    Stopped,
    /// It needed KILL.
    Killed,
}

/// Ends `copy`: `sig` (and CONT, as s6 does, so a stopped process sees
/// it), then [`kill_after`] `grace`. Errors when it cannot be signalled
/// or outlives KILL.
pub fn end(copy: Copy, sig: Signal, grace: Duration) -> io::Result<Ended> {
    copy.signal(sig, false)?;
    copy.signal(Signal::SIGCONT, false)?;
    kill_after(copy, grace)
}

/// Waits up to `grace` for `copy` to end after its down signal (sent by
/// [`end`], or by its supervisor), then sends KILL to its process group
/// when it leads one (s6-supervise starts programs as session leaders),
/// else to it alone. Errors when it cannot be signalled or outlives KILL.
pub fn kill_after(copy: Copy, grace: Duration) -> io::Result<Ended> {
    if copy.gone_within(grace) {
        return Ok(Ended::Stopped);
    }
    let leads_group = identity::read_stat(copy.pid)
        .ok()
        .flatten()
        .is_some_and(|st| st.pgrp == copy.pid);
    if !copy.signal(Signal::SIGKILL, leads_group)? {
        // It ended between the last look and the KILL.
        return Ok(Ended::Stopped);
    }
    if copy.gone_within(AFTER_KILL) {
        return Ok(Ended::Killed);
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("pid {} still runs after KILL", copy.pid),
    ))
}

/// Ends the stray copy of the slot in `slot`, if there is one (see
/// [`find`]), the way its supervisor would stop it. `Ok(None)`: none.
pub fn end_stray(slot: &Path, supervised: u32) -> io::Result<Option<(Copy, Ended)>> {
    let Some(copy) = find(slot, supervised) else {
        return Ok(None);
    };
    let (sig, grace) = stop_plan(slot);
    end(copy, sig, grace).map(|how| Some((copy, how)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The record in `slot`, as [`unseen`] reads it.
    fn read(slot: &Path) -> Option<Copy> {
        let (text, _) = crate::fsutil::read_record(&slot.join(PROGRAM_FILE), 64).ok()?;
        parse(&text)
    }

    #[test]
    fn the_loggers_record_is_the_same_file_in_log() {
        assert_eq!(
            Path::new(LOG_PROGRAM_FILE),
            Path::new("log").join(PROGRAM_FILE)
        );
    }

    #[test]
    fn records_parse_strictly() {
        assert_eq!(
            parse("42 123\n"),
            Some(Copy {
                pid: 42,
                start_time: 123
            })
        );
        for bad in [
            "", "\n", "42", "42 ", "42 x", "x 1", "0 1", "1 1", "-5 1", "42 1 9", "42  1", " 42 1",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_record_replaces_a_longer_one_whole_and_never_writes_through_a_symlink() {
        let t = tempfile::tempdir().expect("tempdir");
        let me = Copy::of(std::process::id() as i32).expect("me");
        let long = Copy {
            pid: i32::MAX,
            start_time: u64::MAX,
        };
        record(t.path(), long).expect("record");
        record(t.path(), me).expect("record");
        let text = fs::read_to_string(t.path().join(PROGRAM_FILE)).expect("read");
        assert_eq!(text, format!("{} {}\n", me.pid, me.start_time));
        fs::remove_file(t.path().join(PROGRAM_FILE)).expect("rm");
        let target = t.path().join("elsewhere");
        fs::write(&target, "keep").expect("write");
        std::os::unix::fs::symlink(&target, t.path().join(PROGRAM_FILE)).expect("ln");
        assert!(
            record(t.path(), me).is_err(),
            "a planted symlink is refused"
        );
        assert_eq!(fs::read_to_string(&target).expect("read"), "keep");
    }

    #[test]
    fn a_record_reads_back_never_through_a_symlink() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(t.path()), None);
        let me = Copy::of(std::process::id() as i32).expect("me");
        record(t.path(), me).expect("record");
        assert_eq!(read(t.path()), Some(me));
        fs::remove_file(t.path().join(PROGRAM_FILE)).expect("rm");
        let target = t.path().join("elsewhere");
        fs::write(&target, format!("{} {}\n", me.pid, me.start_time)).expect("write");
        std::os::unix::fs::symlink(&target, t.path().join(PROGRAM_FILE)).expect("ln");
        assert_eq!(read(t.path()), None);
    }

    #[test]
    fn only_a_live_unsupervised_copy_is_a_stray() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = child.id() as i32;
        let c = Copy::of(pid).expect("child");
        record(t.path(), c).expect("record");
        assert_eq!(find(t.path(), 0), Some(c));
        assert_eq!(find(t.path(), pid as u32), None, "the supervised pid");
        let stale = Copy {
            start_time: c.start_time + 1,
            ..c
        };
        record(t.path(), stale).expect("record");
        assert_eq!(find(t.path(), 0), None, "a reused pid is not the copy");
        record(t.path(), c).expect("record");
        // Not SIGHUP: a test run under `nohup` hands its children SIGHUP
        // ignored.
        fs::write(t.path().join("down-signal"), "SIGUSR1\n").expect("write");
        assert_eq!(stop_plan(t.path()).0, Signal::SIGUSR1);
        let ended = end_stray(t.path(), 0).expect("end");
        assert_eq!(ended, Some((c, Ended::Stopped)));
        let _ = child.wait();
        assert_eq!(find(t.path(), 0), None);
    }

    #[test]
    fn a_copy_deaf_to_its_down_signal_is_killed_after_the_grace() {
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; while :; do sleep 1; done"])
            .spawn()
            .expect("sh");
        let c = Copy::of(child.id() as i32).expect("child");
        // Wait (bounded) until the trap is set: until then TERM would kill.
        let deadline = Instant::now() + Duration::from_secs(5);
        let ignores_term = || {
            fs::read_to_string(format!("/proc/{}/status", c.pid))
                .ok()
                .and_then(|s| {
                    let mask = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
                    u64::from_str_radix(mask.trim(), 16).ok()
                })
                .is_some_and(|m| m & (1 << (Signal::SIGTERM as u64 - 1)) != 0)
        };
        while !ignores_term() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let started = Instant::now();
        let how = end(c, Signal::SIGTERM, Duration::from_millis(300)).expect("end");
        assert_eq!(how, Ended::Killed);
        assert!(started.elapsed() >= Duration::from_millis(300));
        let _ = child.wait();
    }

    #[test]
    fn a_kill_after_the_grace_never_hits_a_reused_pid() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("sleep");
        let c = Copy::of(child.id() as i32).expect("child");
        // The same pid, another start: the process it named is gone.
        let other = Copy {
            start_time: c.start_time + 1,
            ..c
        };
        let how = kill_after(other, Duration::from_millis(100)).expect("end");
        assert_eq!(how, Ended::Stopped);
        assert!(c.alive(), "the live process with that pid was hit");
        assert_eq!(
            kill_after(c, Duration::from_millis(100)).expect("end"),
            Ended::Killed
        );
        let _ = child.wait();
    }

    #[test]
    fn stop_plan_defaults_and_reads_the_slot_files() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(stop_plan(t.path()), (Signal::SIGTERM, DEFAULT_STOP));
        fs::write(t.path().join("timeout-kill"), "250\n").expect("write");
        fs::write(t.path().join("down-signal"), "SIGNOPE\n").expect("write");
        assert_eq!(
            stop_plan(t.path()),
            (Signal::SIGTERM, Duration::from_millis(250))
        );
        fs::write(t.path().join("timeout-kill"), "0\n").expect("write");
        assert_eq!(stop_plan(t.path()).1, DEFAULT_STOP);
    }
}
