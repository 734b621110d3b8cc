//! The record of the container's foreground command ([`record_path`]):
//! svkit-wrap writes it right before it execs the command (the pid stays
//! the same across the exec), naming the slot whose program it runs when
//! it is a redirect's opt-out. Two readers: the stop hook, which stops the
//! command gracefully (`crate::foreground`), and every start of that slot
//! ([`running`]), which must never run a second copy beside it.
//!
//! The hook runs as root, so the record is trusted only when safe: never
//! read through a symlink, owned by root or by the process it names, and
//! the pid and start time re-read from `/proc` right before acting.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::config::Slot;
use crate::stray::Copy;

/// Where svkit-wrap records the foreground command, in the run dir (a
/// tmpfs under s6-overlay: it never outlives the container; svkit-init
/// clears it at boot).
pub fn record_path() -> PathBuf {
    crate::container::run_dir().join("svkit/foreground")
}

/// The wait for a foreground command no slot describes, or whose slot has
/// no `stop_timeout_ms`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The foreground command: who it is, how the stop hook stops it, and the
/// slot whose program it runs (an opt-out), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub copy: Copy,
    pub signal: Signal,
    pub timeout: Duration,
    pub slot: Option<String>,
}

impl Record {
    /// This process, about to exec a command that `slot` (if any)
    /// describes: its `down_signal` and `stop_timeout_ms`, else TERM and
    /// [`DEFAULT_TIMEOUT`].
    pub fn me(slot: Option<&Slot>) -> Option<Record> {
        let copy = Copy::of(i32::try_from(std::process::id()).ok()?)?;
        let signal = slot
            .and_then(|s| s.down_signal.as_deref())
            .and_then(crate::s6::signal::parse)
            .unwrap_or(Signal::SIGTERM);
        let timeout = slot
            .and_then(|s| s.stop_timeout_ms)
            .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(u64::from(ms)));
        Some(Record {
            copy,
            signal,
            timeout,
            slot: slot.map(|s| s.name.clone()),
        })
    }

    /// `PID START_TIME SIGNAL TIMEOUT_MS[ SLOT]` (a slot name holds no
    /// space).
    pub fn line(&self) -> String {
        let (c, sig, ms) = (self.copy, self.signal.as_str(), self.timeout.as_millis());
        let slot = (self.slot.as_ref()).map_or(String::new(), |s| format!(" {s}"));
        format!("{} {} {sig} {ms}{slot}\n", c.pid, c.start_time)
    }
}

/// Parses `PID START_TIME SIGNAL TIMEOUT_MS[ SLOT]`, one line. Anything
/// else is no record: a bad one must never lead to a signal.
pub fn parse(text: &str) -> Option<Record> {
    let mut words = text.lines().next()?.split(' ');
    let pid = words.next()?.parse::<i32>().ok().filter(|p| *p > 1)?;
    let start_time = words.next()?.parse::<u64>().ok()?;
    let signal = crate::s6::signal::parse(words.next()?)?;
    let ms = words.next()?.parse::<u64>().ok()?;
    let slot = match words.next() {
        Some("") => return None,
        slot => slot.map(str::to_string),
    };
    words.next().is_none().then_some(Record {
        copy: Copy { pid, start_time },
        signal,
        timeout: Duration::from_millis(ms),
        slot,
    })
}

/// Writes `rec` to `path` atomically; the parent dir is made (0755) when
/// missing and must be a real dir, not a symlink.
pub fn write(path: &Path, rec: &Record) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        match fs::DirBuilder::new().mode(0o755).create(dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
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
    let (text, meta) = crate::fsutil::read_record(path, 256).ok()?;
    let rec = parse(&text)?;
    let owner = fs::metadata(format!("/proc/{}", rec.copy.pid)).ok()?.uid();
    (meta.uid() == 0 || meta.uid() == owner).then_some(rec)
}

/// The foreground copy of slot `name`'s program, while it lives (its pid
/// and start time as recorded): the rule every start of the slot checks,
/// its `run` (`svkit slot-claim`) and `svctl start`, so that an opted-out
/// run never has its slot's program beside it.
pub fn running(name: &str) -> Option<Copy> {
    read(&record_path())
        .filter(|r| r.slot.as_deref() == Some(name))
        .map(|r| r.copy)
        .filter(|c| c.alive())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(pid: i32, start_time: u64, slot: Option<&str>) -> Record {
        Record {
            copy: Copy { pid, start_time },
            signal: Signal::SIGTERM,
            timeout: Duration::from_millis(2000),
            slot: slot.map(str::to_string),
        }
    }

    #[test]
    fn records_parse_strictly() {
        assert_eq!(parse("42 7 SIGTERM 2000\n"), Some(rec(42, 7, None)));
        assert_eq!(
            parse("42 7 SIGTERM 2000 worker\n"),
            Some(rec(42, 7, Some("worker")))
        );
        for r in [rec(42, 7, None), rec(42, 7, Some("gateway-default"))] {
            assert_eq!(parse(&r.line()), Some(r));
        }
        for bad in [
            "",
            "42 7 SIGTERM",
            "42 7 TERM 2000",
            "42 7 SIGTERM -1",
            "1 7 SIGTERM 2000",
            "42 7 SIGTERM 2000 ",
            "42 7 SIGTERM 2000 a b",
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
        assert_eq!(read(&path), Some(me.clone()));
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
}
