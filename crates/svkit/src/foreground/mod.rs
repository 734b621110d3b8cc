//! The container's foreground command, stopped gracefully at shutdown.
//!
//! s6-overlay does not signal the CMD at `docker stop` (unless
//! `S6_CMD_RECEIVE_SIGNALS` is set): it runs the cont-finish hooks, then
//! sends TERM to everything left, then KILL after `S6_KILL_GRACETIME`. A
//! command svkit-wrap ran in the foreground (an opt-out, or one no
//! redirect matches) would get only that grace. So svkit-wrap records it
//! ([`record_path`]: pid, start time, stop signal, stop timeout) right before
//! it execs it (the pid stays the same across the exec), and the stop hook
//! runs `svkit foreground-stop MS` ([`main`]) before stopping the slots:
//! the signal, then a wait of up to the recorded timeout (capped by MS).
//! What still runs after that is left to s6-overlay's final TERM/KILL.
//!
//! The hook runs as root, so the record is trusted only when safe: never
//! read through a symlink, owned by root or by the process it names, and
//! the pid and start time re-read from `/proc` right before signalling.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::config::Slot;
use crate::msg::{self, exit};
use crate::slot::end::decided_exitcode;
use crate::stray::Copy;

/// Where svkit-wrap records the foreground command, in the run dir (a
/// tmpfs under s6-overlay: it never outlives the container; svkit-init
/// clears it at boot).
pub fn record_path() -> std::path::PathBuf {
    crate::container::run_dir().join("svkit/foreground")
}

/// The wait for a foreground command no slot describes, or whose slot has
/// no `stop_timeout_ms`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the stop hook needs to stop the foreground command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub copy: Copy,
    pub signal: Signal,
    pub timeout: Duration,
}

impl Record {
    /// This process, about to exec a command that `slot` (if any)
    /// describes: its `down_signal` and `stop_timeout_ms`, else TERM and
    /// [`DEFAULT_TIMEOUT`].
    pub fn me(slot: Option<&Slot>) -> Option<Record> {
        let copy = Copy::of(i32::try_from(std::process::id()).ok()?)?;
        let signal = slot
            .and_then(|s| s.down_signal.as_deref())
            .and_then(|s| Signal::from_str(s).ok())
            .unwrap_or(Signal::SIGTERM);
        let timeout = slot
            .and_then(|s| s.stop_timeout_ms)
            .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(u64::from(ms)));
        Some(Record {
            copy,
            signal,
            timeout,
        })
    }

    fn line(&self) -> String {
        format!(
            "{} {} {} {}\n",
            self.copy.pid,
            self.copy.start_time,
            self.signal.as_str(),
            self.timeout.as_millis()
        )
    }
}

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

/// Parses `PID START_TIME SIGNAL TIMEOUT_MS`, one line. Anything else is
/// no record: a bad one must never lead to a signal.
pub fn parse(text: &str) -> Option<Record> {
    let mut words = text.lines().next()?.split(' ');
    let pid = words.next()?.parse::<i32>().ok().filter(|p| *p > 1)?;
    let start_time = words.next()?.parse::<u64>().ok()?;
    let signal = Signal::from_str(words.next()?).ok()?;
    let ms = words.next()?.parse::<u64>().ok()?;
    words.next().is_none().then_some(Record {
        copy: Copy { pid, start_time },
        signal,
        timeout: Duration::from_millis(ms),
    })
}

/// Writes `rec` to `path` atomically; the parent dir is made (0755) when
/// missing and must be a real dir, not a symlink.
pub fn write(path: &Path, rec: &Record) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        match fs::DirBuilder::new().mode(0o755).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        if !fs::symlink_metadata(dir)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", dir.display()),
            ));
        }
    }
    crate::fsutil::write_atomic(path, rec.line().as_bytes(), 0o644, None)
}

/// The record at `path`, if there is a well-formed one that can be
/// trusted: not a symlink, owned by root or by the user of the live
/// process it names.
pub fn read(path: &Path) -> Option<Record> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(128).read_to_string(&mut text).ok()?;
    let rec = parse(&text)?;
    let owner = fs::metadata(format!("/proc/{}", rec.copy.pid)).ok()?.uid();
    (meta.uid() == 0 || meta.uid() == owner).then_some(rec)
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
        msg::fatal("usage: svkit foreground-stop MS (run by the stop hook)");
        return ExitCode::from(exit::USAGE);
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
    let code = match stop(&record_path(), cap) {
        Ok(Stopped::NoRecord | Stopped::NotRunning) => exit::OK,
        Ok(Stopped::Exited(took)) => {
            msg::info(format_args!(
                "the foreground command exited {} ms after its stop signal",
                took.as_millis()
            ));
            exit::OK
        }
        Ok(Stopped::StillRuns(took)) => {
            msg::warn(format_args!(
                "the foreground command still runs {} ms after its stop signal; it gets s6-overlay's final TERM/KILL",
                took.as_millis()
            ));
            exit::OK
        }
        Err(e) => {
            msg::fatal(format_args!(
                "unable to signal the foreground command: {}",
                msg::strerror(&e)
            ));
            exit::SYSTEM
        }
    };
    let _ = msg::out(format!("{}\n", t0.elapsed().as_millis()));
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn rec(pid: i32, start_time: u64) -> Record {
        Record {
            copy: Copy { pid, start_time },
            signal: Signal::SIGTERM,
            timeout: Duration::from_millis(2000),
        }
    }

    #[test]
    fn records_parse_strictly() {
        assert_eq!(parse("42 7 SIGTERM 2000\n"), Some(rec(42, 7)));
        assert_eq!(parse(&rec(42, 7).line()), Some(rec(42, 7)));
        for bad in [
            "",
            "42 7 SIGTERM",
            "42 7 TERM 2000",
            "42 7 SIGTERM -1",
            "1 7 SIGTERM 2000",
            "42 7 SIGTERM 2000 x",
            "x 7 SIGTERM 2000",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_record_is_never_read_through_a_symlink() {
        let t = tempfile::tempdir().expect("tempdir");
        let path = t.path().join("run/foreground");
        let me = Record::me(None).expect("me");
        write(&path, &me).expect("write");
        assert_eq!(read(&path), Some(me));
        fs::remove_file(&path).expect("rm");
        let elsewhere = t.path().join("elsewhere");
        fs::write(&elsewhere, me.line()).expect("write");
        std::os::unix::fs::symlink(&elsewhere, &path).expect("ln");
        assert_eq!(read(&path), None);
        // A symlinked dir is refused for writing.
        let dir2 = t.path().join("run2");
        std::os::unix::fs::symlink(t.path(), &dir2).expect("ln");
        assert!(write(&dir2.join("foreground"), &me).is_err());
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
        let deadline = Instant::now() + Duration::from_secs(5);
        while !term_in(pid, "SigCgt:") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
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
        let deadline = Instant::now() + Duration::from_secs(5);
        while !term_in(pid, "SigIgn:") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
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
