//! The container's foreground command, stopped gracefully at shutdown.
//!
//! s6-overlay does not signal the CMD at `docker stop` (unless
//! `S6_CMD_RECEIVE_SIGNALS` is set): it runs the cont-finish hooks, then
//! sends TERM to everything left, then KILL after `S6_KILL_GRACETIME`. A
//! command svkit-wrap ran in the foreground (an opt-out, or one no
//! redirect matches) would get only that grace. So svkit-wrap records it
//! ([`crate::claim::foreground`]: pid, start time, stop signal, stop
//! timeout, its slot) right before it execs it, and the stop hook runs
//! `svkit foreground-stop MS` ([`main`]) before stopping the slots: the
//! signal, then a wait of up to the recorded timeout (capped by MS).
//! What still runs after that is left to s6-overlay's final TERM/KILL.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::claim::foreground::{read, record_path};
use crate::msg::{self, exit, Fatal};
use crate::slot::end::decided_exitcode;

/// Is this process the container's CMD, the child of s6-overlay's stage 2
/// (`rc.init`) or of svkit-init? Only the CMD is recorded: a `docker exec
/// C svkit-wrap ...` is not the container's command and must not take its
/// record.
pub fn is_the_cmd() -> bool {
    let parent = std::os::unix::process::parent_id();
    if crate::container::supervision() == crate::container::Supervision::Init(parent as i32) {
        return true;
    }
    fs::read(format!("/proc/{parent}/cmdline")).is_ok_and(|argv| {
        argv.split(|b| *b == 0)
            .any(|a| a.ends_with(b"/scripts/rc.init"))
    })
}

/// How stopping the foreground command went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// No (trusted) record: svkit-wrap ran nothing in the foreground.
    NoRecord,
    /// The recorded process no longer runs.
    NotRunning,
    /// It exited after its signal, within its timeout.
    Exited(Duration),
    /// It still ran when its timeout (capped) ran out: left to s6-overlay.
    StillRuns(Duration),
}

/// Sends the recorded command its signal (and CONT, as s6 does, so a
/// stopped process sees it) and waits up to its timeout, at most `cap`.
pub fn stop(path: &Path, cap: Duration) -> io::Result<Stopped> {
    let Some(rec) = read(path) else {
        return Ok(Stopped::NoRecord);
    };
    for sig in [rec.signal, Signal::SIGCONT] {
        if !rec.copy.signal(sig, false)? {
            return Ok(Stopped::NotRunning);
        }
    }
    let t0 = Instant::now();
    Ok(if rec.copy.gone_within(rec.timeout.min(cap)) {
        Stopped::Exited(t0.elapsed())
    } else {
        Stopped::StillRuns(t0.elapsed())
    })
}

/// `svkit foreground-stop MS`, run by the stop hook: stops the recorded
/// foreground command, waiting at most MS, says what happened in one line
/// (none when there is nothing to stop) and prints the milliseconds it
/// took on stdout, so the hook gives the slots what is left. Exit 0, but
/// 100 on bad usage and 111 when the signal could not be sent.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    msg::init("svkit foreground-stop");
    let args: Vec<OsString> = args.collect();
    let cap = match args.as_slice() {
        [ms] => ms.to_str().and_then(|m| m.parse::<u64>().ok()),
        _ => None,
    };
    let Some(cap) = cap.map(Duration::from_millis) else {
        return Fatal::usage("usage: svkit foreground-stop MS (run by the stop hook)", "").report();
    };
    let t0 = Instant::now();
    // An essential slot ended the container and wrote its code: when the
    // command exits, s6-overlay's stage 2 (its parent) would write the
    // command's code over it and ask for a second halt, which cuts this
    // stage short. So the command is left to the final TERM, which ends
    // stage 2 with it, and the container ends as the slot decided.
    if let Ok(code) = fs::read_to_string(decided_exitcode()) {
        msg::info(format_args!(
            "the container ends with exit code {} as an essential slot decided: the foreground command gets s6-overlay's final TERM",
            code.trim()
        ));
        let _ = msg::out("0\n");
        return ExitCode::SUCCESS;
    }
    let mut code = exit::OK;
    match stop(&record_path(), cap) {
        Ok(Stopped::NoRecord | Stopped::NotRunning) => {}
        Ok(Stopped::Exited(took)) => msg::info(format_args!(
            "the foreground command exited {} ms after its stop signal",
            took.as_millis()
        )),
        Ok(Stopped::StillRuns(took)) => msg::warn(format_args!(
            "the foreground command still runs {} ms after its stop signal; it gets s6-overlay's final TERM/KILL",
            took.as_millis()
        )),
        Err(e) => {
            let why = msg::strerror(&e);
            msg::fatal(format_args!("unable to signal the foreground command: {why}"));
            code = exit::SYSTEM;
        }
    }
    let _ = msg::out(format!("{}\n", t0.elapsed().as_millis()));
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::foreground::{write, Record, DEFAULT_TIMEOUT};
    use crate::stray::Copy;
    use std::process::Command;

    fn rec(pid: i32, start_time: u64) -> Record {
        Record {
            copy: Copy { pid, start_time },
            signal: Signal::SIGTERM,
            timeout: Duration::from_millis(2000),
            slot: None,
        }
    }

    #[test]
    fn stop_signals_the_live_process_and_waits_for_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let path = t.path().join("foreground");
        assert_eq!(
            stop(&path, DEFAULT_TIMEOUT).expect("stop"),
            Stopped::NoRecord
        );
        // TERM handled in 300 ms: stop waits for it.
        let mut child = Command::new("sh")
            .args([
                "-c",
                "trap 'sleep 0.3; exit 0' TERM; while :; do sleep 0.05; done",
            ])
            .spawn()
            .expect("sh");
        let pid = child.id() as i32;
        let copy = Copy::of(pid).expect("child");
        // Wait (bounded) until the trap is set: until then TERM would kill.
        crate::clock::poll_until(Duration::from_secs(5), || term_in(pid, "SigCgt:"));
        // A reused pid (another start time) is never signalled.
        let stale = Record {
            copy: Copy {
                start_time: copy.start_time + 1,
                ..copy
            },
            ..rec(pid, 0)
        };
        write(&path, &stale).expect("write");
        assert_eq!(
            stop(&path, DEFAULT_TIMEOUT).expect("stop"),
            Stopped::NotRunning
        );
        assert!(copy.alive());
        let reaper = std::thread::spawn(move || child.wait());
        write(&path, &rec(pid, copy.start_time)).expect("write");
        match stop(&path, DEFAULT_TIMEOUT).expect("stop") {
            Stopped::Exited(took) => assert!(took >= Duration::from_millis(250), "{took:?}"),
            other => panic!("{other:?}"),
        }
        let _ = reaper.join();
    }

    #[test]
    fn the_wait_is_capped() {
        let t = tempfile::tempdir().expect("tempdir");
        let path = t.path().join("foreground");
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; while :; do sleep 0.05; done"])
            .spawn()
            .expect("sh");
        let pid = child.id() as i32;
        let copy = Copy::of(pid).expect("child");
        crate::clock::poll_until(Duration::from_secs(5), || term_in(pid, "SigIgn:"));
        write(&path, &rec(pid, copy.start_time)).expect("write");
        match stop(&path, Duration::from_millis(200)).expect("stop") {
            Stopped::StillRuns(took) => assert!(took < Duration::from_millis(1500), "{took:?}"),
            other => panic!("{other:?}"),
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Is TERM in the `field` mask (`SigCgt:` caught, `SigIgn:` ignored)?
    fn term_in(pid: i32, field: &str) -> bool {
        fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                let mask = s.lines().find_map(|l| l.strip_prefix(field))?;
                u64::from_str_radix(mask.trim(), 16).ok()
            })
            .is_some_and(|m| m & (1 << (Signal::SIGTERM as u64 - 1)) != 0)
    }
}
