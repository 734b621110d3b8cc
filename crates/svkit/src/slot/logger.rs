//! Whether a slot's logger does its job: svkit's rule, decided here and
//! nowhere else. A slot whose output is not getting through is not
//! healthy, whatever its program's state: its lines are lost or, once the
//! pipe to the logger is full (~64 KiB), the program blocks on its next
//! write while s6 still calls it up.
//!
//! s6 sees none of this. s6-log keeps running on a full disk (it retries
//! every 2 s and reads nothing meanwhile) and on a deleted dir (it writes
//! into the unlinked `current`); a logger that cannot start is only a
//! respawn every second; s6-log whose stdout copy died writes to the
//! files only, for good. So the rule looks past s6: the record the
//! logger's run script leaves when it could not start s6-log as
//! configured, the logger's own status and its copy, the log dir, its file
//! system, and how full the pipe is.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::end::{LOG_ERROR_NAME, LOG_RESTART_NAME};
use crate::s6::control::{self, ControlError};
use crate::s6::status::{decode, lock_holder};

/// Why a slot's output is not getting through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// `log/run` could not start s6-log as configured; its own words.
    #[error("logger not started: {0}")]
    Setup(String),
    /// The logger is not running: it exits as soon as it starts.
    #[error("logger not running: it exits as soon as it starts")]
    Down,
    /// The stdout copy's process (`svkit log-stdout`) is gone: s6-log
    /// writes to the files only, nothing reaches the container's output.
    #[error("the stdout copy (svkit log-stdout) is gone: the slot's lines reach its log files only, not docker logs")]
    CopyLost,
    /// The log dir was removed: s6-log writes into a deleted file.
    #[error("log dir {} is gone: s6-log writes into a deleted file", .0.display())]
    DirGone(PathBuf),
    /// The log dir's file system has no space (or no inode) left.
    #[error("no space left for log dir {}: s6-log waits, then the program blocks", .0.display())]
    DiskFull(PathBuf),
    /// The pipe to the logger is full and nothing drains it.
    #[error("the pipe to the logger is full and not draining: the program blocks on output")]
    Stalled,
}

impl Fault {
    /// A short word for tables, metrics and events.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Setup(_) => "setup",
            Fault::Down => "down",
            Fault::CopyLost => "copy_lost",
            Fault::DirGone(_) => "dir_gone",
            Fault::DiskFull(_) => "disk_full",
            Fault::Stalled => "stalled",
        }
    }

    /// [`Fault::kind`] as a person reads it in a table (`disk full`).
    pub fn words(&self) -> String {
        self.kind().replace('_', " ")
    }
}

/// Whether the slot in `slot_dir` has a logger of its own.
pub fn has_logger(slot_dir: &Path) -> bool {
    slot_dir.join("log").is_dir()
}

/// The faults that one look shows (no waiting): the setup record, the
/// logger's status, the log dir and its file system. `log_dir` is the
/// configured dir, when the config is known. A pipe that stays full is
/// [`PipeLevel`]'s to tell, over time.
pub fn check_now(slot_dir: &Path, log_dir: Option<&Path>) -> Option<Fault> {
    look(slot_dir, log_dir).0
}

/// [`check_now`], and the pid of the logger when it runs (read from the
/// same status file, which a view then need not read again).
pub fn look(slot_dir: &Path, log_dir: Option<&Path>) -> (Option<Fault>, Option<u32>) {
    let logger = slot_dir.join("log");
    if let Some(why) = setup_error(&logger) {
        return (Some(Fault::Setup(why)), None);
    }
    // A logger with no supervisor (a slot being made or removed) is no
    // fault of the logger's; one that is supervised and down is.
    let mut pid = None;
    if supervisor_of(&logger).is_some() {
        // The raw status is all this needs (no death tally, no down file).
        let raw = std::fs::read(logger.join("supervise/status")).ok();
        if let Some(raw) = raw.and_then(|b| decode(&b).ok()) {
            if !raw.is_up() && raw.want_up && !restart_planned(&logger) {
                return (Some(Fault::Down), None);
            }
            if raw.is_up() && copy_lost(raw.pid) {
                return (Some(Fault::CopyLost), Some(raw.pid));
            }
            pid = raw.is_up().then_some(raw.pid);
        }
    }
    (dir_fault(log_dir), pid)
}

/// What is wrong with the log dir itself: gone, or its disk full.
fn dir_fault(log_dir: Option<&Path>) -> Option<Fault> {
    let dir = log_dir?;
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(Fault::DirGone(dir.to_path_buf())),
        // Not ours to see (another user's dir): the other checks stand.
        Err(_) => None,
        Ok(_) => disk_full(dir).then(|| Fault::DiskFull(dir.to_path_buf())),
    }
}

/// Whether the logger `pid` is an s6-log with a stdout copy (`1` among its
/// directives, after `--`) and no child: `log/run` starts the copy, `svkit
/// log-stdout`, as the one child of s6-log (a dead one is a zombie only
/// until s6-log reaps it, at once). Without it s6-log closes its stdout at
/// its next line and never opens it again. What cannot be read (a kernel
/// without `/proc/PID/task/TID/children`) is no fault. One read of `/proc`
/// while the copy runs, two without it; both open to every user.
fn copy_lost(pid: u32) -> bool {
    let children = std::fs::read(format!("/proc/{pid}/task/{pid}/children"));
    let childless = children.is_ok_and(|c| c.trim_ascii().is_empty());
    let Some(Ok(argv)) = childless.then(|| std::fs::read(format!("/proc/{pid}/cmdline"))) else {
        return false;
    };
    let mut args = argv.split(|&b| b == 0);
    let is_s6_log = args.next().is_some_and(|a| a.ends_with(b"s6-log"));
    is_s6_log && args.skip_while(|a| *a != b"--").any(|a| a == b"1")
}

/// How long after a restart asked for ([`restart`]) a logger that is down
/// is taken to be on its way back up, not failing: s6-supervise spawns a
/// service at most once a second, and a loaded machine adds to that. A
/// logger that cannot start is reported once this has passed.
pub const RESTART_GRACE: Duration = Duration::from_secs(3);

/// Restarts the slot's logger on purpose (`s6-svc -r SLOT/log`), marking
/// it planned first ([`LOG_RESTART_NAME`]): until the new logger has had
/// its chance to start ([`RESTART_GRACE`]), its being down is no fault.
/// The restart goes on when the mark cannot be made: at worst the gap is
/// reported, as it was before marks.
pub fn restart(slot_dir: &Path) -> Result<(), ControlError> {
    let _ = mark_restart(&slot_dir.join("log"));
    // No death recorded: a logger has no `finish` to read it.
    control::write(&slot_dir.join("log"), &[control::SvcCommand::Restart])
}

fn mark_restart(logger_dir: &Path) -> io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(logger_dir.join(LOG_RESTART_NAME))?;
    // An existing empty mark keeps its old mtime through a truncation
    // that changes nothing: say when explicitly.
    f.set_modified(std::time::SystemTime::now())
}

/// Whether the logger in `logger_dir` was restarted on purpose within
/// [`RESTART_GRACE`]. A mark from the future (a clock set back) counts for
/// nothing, as does an old one.
pub fn restart_planned(logger_dir: &Path) -> bool {
    std::fs::symlink_metadata(logger_dir.join(LOG_RESTART_NAME))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < RESTART_GRACE)
}

/// Removes a mark of [`restart`] once it counts for nothing: it lives
/// about [`RESTART_GRACE`]. The log watcher's chore, once a look.
pub fn clear_stale_restart(slot_dir: &Path) {
    let logger = slot_dir.join("log");
    let mark = logger.join(LOG_RESTART_NAME);
    if mark.exists() && !restart_planned(&logger) {
        let _ = std::fs::remove_file(mark);
    }
}

/// The line `log/run` left in the logger's dir ([`LOG_ERROR_NAME`]) when it
/// could not start s6-log as configured, if it did.
pub fn setup_error(logger_dir: &Path) -> Option<String> {
    let text = std::fs::read(logger_dir.join(LOG_ERROR_NAME)).ok()?;
    let line = String::from_utf8_lossy(&text);
    let line = line.lines().next().unwrap_or_default().trim();
    Some(if line.is_empty() {
        "unknown reason".to_string()
    } else {
        line.chars().take(512).collect()
    })
}

/// No block (for the logger's user) or no inode left where the dir lives.
fn disk_full(dir: &Path) -> bool {
    rustix::fs::statvfs(dir).is_ok_and(|v| v.f_bavail == 0 || (v.f_files > 0 && v.f_favail == 0))
}

/// How full the pipe from a slot to its logger is, read through the
/// logger's s6-supervise (it holds the pipe's read end as its stdin, and
/// runs as the tree's user, so root can open it where it cannot open the
/// logger's own fds without CAP_SYS_PTRACE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipeLevel {
    pub queued: u64,
    pub capacity: u64,
}

impl PipeLevel {
    /// Full: a writer of one more line would block (a pipe fills in page
    /// sized buffers, so "full" is within a page of its capacity).
    pub fn full(&self) -> bool {
        self.queued + 4096 > self.capacity
    }

    /// The level now, when it can be read: None when the logger has no
    /// supervisor, or this user may not open the pipe.
    pub fn read(slot_dir: &Path) -> Option<PipeLevel> {
        let supervise = supervisor_of(&slot_dir.join("log"))?;
        // A read end of the pipe of its own, never blocking, for FIONREAD only.
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(format!("/proc/{supervise}/fd/0"))
            .ok()?;
        let queued = rustix::io::ioctl_fionread(fd.as_fd()).ok()?;
        let capacity = rustix::pipe::fcntl_getpipe_size(fd.as_fd()).ok()? as u64;
        Some(PipeLevel { queued, capacity })
    }
}

/// A pipe that stays full between two looks at least `window` apart with
/// the same number of bytes queued is stalled: a logger that drains it,
/// however slowly, changes the count.
pub fn stalled(before: Option<PipeLevel>, after: Option<PipeLevel>) -> bool {
    matches!((before, after), (Some(a), Some(b)) if a.full() && a == b)
}

/// How long a full pipe must stay unchanged to count as stalled: long
/// enough for any logger that still reads to take some of it.
pub const STALL_WINDOW: Duration = Duration::from_millis(500);

/// Of `slot_dirs`, the indices of those whose pipe stays full, with the
/// same bytes queued, for `window` (looked at up to every 100 ms; slots
/// whose pipe is not full at the first look cost one look).
pub fn find_stalled(slot_dirs: &[PathBuf], window: Duration) -> Vec<usize> {
    let first: Vec<Option<PipeLevel>> = slot_dirs
        .iter()
        .map(|d| PipeLevel::read(d).filter(PipeLevel::full))
        .collect();
    let mut stalled_now: Vec<usize> = (0..slot_dirs.len())
        .filter(|&i| first[i].is_some())
        .collect();
    // A measurement window, not a wait for an event: nothing signals
    // that a pipe stopped draining.
    crate::clock::poll_by(Instant::now() + window, Duration::from_millis(100), || {
        stalled_now.retain(|&i| stalled(first[i], PipeLevel::read(&slot_dirs[i])));
        stalled_now.is_empty()
    });
    stalled_now
}

/// The pid of the s6-supervise of the service in `dir`: it holds
/// `supervise/lock` (one fcntl, no read of /proc).
fn supervisor_of(dir: &Path) -> Option<u32> {
    lock_holder(&dir.join("supervise/lock"))
        .ok()
        .flatten()
        .filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_stalled_only_when_full_and_unchanged() {
        let full = PipeLevel {
            queued: 65536,
            capacity: 65536,
        };
        let drained = PipeLevel {
            queued: 61440,
            ..full
        };
        let half = PipeLevel {
            queued: 30000,
            ..full
        };
        assert!(full.full());
        assert!(PipeLevel {
            queued: 61441,
            ..full
        }
        .full());
        assert!(!drained.full());
        assert!(stalled(Some(full), Some(full)));
        assert!(!stalled(Some(full), Some(drained)));
        assert!(!stalled(Some(half), Some(half)));
        assert!(!stalled(None, Some(full)));
        assert!(!stalled(Some(full), None));
    }

    #[test]
    fn a_restart_mark_counts_only_while_fresh() {
        let t = tempfile::tempdir().expect("tempdir");
        assert!(!restart_planned(t.path()));
        mark_restart(t.path()).expect("mark");
        assert!(restart_planned(t.path()));
        let old = std::time::SystemTime::now() - RESTART_GRACE;
        std::fs::File::options()
            .write(true)
            .open(t.path().join(LOG_RESTART_NAME))
            .and_then(|f| f.set_modified(old))
            .expect("age");
        assert!(!restart_planned(t.path()));
        // Marked again: the same empty file, fresh.
        mark_restart(t.path()).expect("mark");
        assert!(restart_planned(t.path()));
    }

    #[test]
    fn the_setup_record_is_one_bounded_line() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(setup_error(t.path()), None);
        std::fs::write(t.path().join(LOG_ERROR_NAME), "no way\nsecond\n").expect("write");
        assert_eq!(setup_error(t.path()).as_deref(), Some("no way"));
        std::fs::write(t.path().join(LOG_ERROR_NAME), "").expect("write");
        assert_eq!(setup_error(t.path()).as_deref(), Some("unknown reason"));
        std::fs::write(t.path().join(LOG_ERROR_NAME), b"\xff\xfe bad").expect("write");
        assert!(setup_error(t.path()).is_some_and(|s| s.ends_with("bad")));
        std::fs::write(t.path().join(LOG_ERROR_NAME), "x".repeat(10_000)).expect("write");
        assert_eq!(setup_error(t.path()).map(|s| s.len()), Some(512));
    }

    #[test]
    fn a_missing_log_dir_is_gone_and_a_present_one_is_fine() {
        let t = tempfile::tempdir().expect("tempdir");
        let slot = t.path().join("slot");
        std::fs::create_dir_all(slot.join("log")).expect("mkdir");
        let dir = t.path().join("logs");
        assert_eq!(
            check_now(&slot, Some(&dir)),
            Some(Fault::DirGone(dir.clone()))
        );
        std::fs::create_dir(&dir).expect("mkdir");
        assert_eq!(check_now(&slot, Some(&dir)), None);
        std::fs::write(slot.join("log").join(LOG_ERROR_NAME), "cannot mkdir\n").expect("write");
        assert_eq!(
            check_now(&slot, Some(&dir)),
            Some(Fault::Setup("cannot mkdir".into()))
        );
    }
}
