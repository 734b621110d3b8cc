//! How a slot's run ended for good, and which ends were asked for: the
//! contract between a slot's rendered `finish` and everything that reads
//! or steers slots.
//!
//! s6 keeps no record of why a slot stopped: a `finish` exiting 125, an
//! `s6-svc -d` and a shutdown all leave the same status (down, not wanted
//! up). So svkit's `finish` says it itself: when it keeps a slot down it
//! writes [`END_FILE`] in the slot dir (`done` after a clean exit that the
//! policy keeps down, `failed: WHY` otherwise), and removes it after every
//! other death. Only root writes there (the slot dir is root's).
//!
//! And s6 keeps no record of who ended a process: a restart (`s6-svc -r`)
//! or an operator's SIGTERM looks like the program exiting on its own. So
//! before `svctl stop`, `restart` or `signal` sends anything, it leaves
//! [`REQUEST_PREFIX`]`PID` in `supervise/` (the slot user's dir); `finish`
//! then knows that death of PID was asked for, never treats it as the
//! program's own clean exit, and removes every request. Only the name
//! matters: `finish` never opens one, so a planted file leads nowhere. A
//! stop is marked too, though `finish` also reads "not wanted up" from s6
//! itself (so that `s6-svc -d` is a stop): a start right after the stop
//! makes the slot wanted up again before `finish` looks.

use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use std::time::{Duration, Instant, SystemTime};

use super::health::{self, AfterDeath};
use crate::config::{Backoff, MaxDeaths};
use crate::msg::{self, strerror};
use crate::s6::control::{self, ControlError, SvcCommand};
use crate::s6::status::death_tally_stamped;
use crate::s6::tai64::Tai64N;

/// Written by `finish` in the slot dir when it keeps the slot down.
pub const END_FILE: &str = ".svkit-end";
/// Made by a redirect in its slot's dir: when `finish` keeps the slot down,
/// the container ends with its exit code (unless the config says
/// `"essential": false`).
pub const ESSENTIAL_FILE: &str = ".svkit-essential";
/// Written by `run` while it waits for the slot's `depends_on` (what it
/// waits for, one line), removed before the program starts.
pub const WAITING_FILE: &str = ".svkit-waiting";
/// Made (empty) by `run` when the program starts after waiting for its
/// `depends_on`: its mtime is when the program started (uptime and the
/// readiness timeout count from it).
pub const STARTED_FILE: &str = ".svkit-started";
/// Written by `svkit slot-env` when an env file or a secret keeps the
/// slot from starting (why, one line); `finish` reads and removes it.
pub const START_ERROR_FILE: &str = ".svkit-start-error";
/// Written by a slot's liveness watcher (see `liveness`), and its temp.
pub const LIVENESS_FILE: &str = ".svkit-liveness";
pub const LIVENESS_TMP: &str = ".svkit-liveness.tmp";
/// Written by a readiness check's `data/check` at every run: what the
/// check printed, kept out of the slot's log.
pub const CHECK_OUTPUT_FILE: &str = ".svkit-check-output";
/// Written by `log/run` in its own dir (`log/`) when it cannot start
/// s6-log as configured (why, one line), removed when it can; its temp.
pub const LOG_ERROR_NAME: &str = ".svkit-log-error";
pub const LOG_ERROR_FILE: &str = "log/.svkit-log-error";
pub const LOG_ERROR_TMP: &str = "log/.svkit-log-error.new";
/// Written by the log watcher while a slot's output is not getting
/// through its logger (see `logger`), and its temp.
pub const LOG_FAULT_FILE: &str = ".svkit-log-fault";
pub const LOG_FAULT_TMP: &str = ".svkit-log-fault.tmp";
/// Left by whoever restarts a slot's logger on purpose (`svctl apply` for
/// a changed `log/run`, the log watcher mending a fault): its mtime is
/// when. See `logger::restart`.
pub const LOG_RESTART_NAME: &str = ".svkit-log-restart";
pub const LOG_RESTART_FILE: &str = "log/.svkit-log-restart";
/// The files above, relative to the slot dir: written at run time, never
/// rendered, never a difference for reconcile to put right.
pub const RUNTIME_FILES: &[&str] = &[
    END_FILE,
    ESSENTIAL_FILE,
    WAITING_FILE,
    STARTED_FILE,
    START_ERROR_FILE,
    LIVENESS_FILE,
    LIVENESS_TMP,
    CHECK_OUTPUT_FILE,
    LOG_ERROR_FILE,
    LOG_ERROR_TMP,
    LOG_FAULT_FILE,
    LOG_FAULT_TMP,
    LOG_RESTART_FILE,
    crate::stray::PROGRAM_FILE,
    crate::stray::LOG_PROGRAM_FILE,
    super::job::JOB_FILE,
    super::job::RUN_NOW_FILE,
    super::job::SINCE_FILE,
];

/// What the slot's `run` waits for, while it does (`st_up`: the slot is up;
/// a file left by a run killed while waiting means nothing once down).
pub fn waiting_for(slot: &Path, st_up: bool) -> Option<String> {
    if !st_up {
        return None;
    }
    first_line(&slot.join(WAITING_FILE)).ok()
}

/// The first line of a record's first KiB, never through a symlink nor
/// blocking on a FIFO.
fn first_line(path: &Path) -> io::Result<String> {
    let (text, _) = crate::fsutil::read_record(path, 1024)?;
    Ok(text.lines().next().unwrap_or("").to_string())
}

/// Creates the empty file `path`, never through a symlink; one already
/// there is fine.
fn create_mark(path: &Path) -> io::Result<()> {
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
    {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(drop),
    }
}
/// The dir, in the run dir, where the init reads the container's exit
/// code at halt (s6-overlay's name; svkit-init reads the same).
pub const RESULTS_DIR: &str = "s6-linux-init-container-results";
/// Where the init reads the container's exit code at halt.
pub fn container_exitcode() -> std::path::PathBuf {
    crate::container::run_dir()
        .join(RESULTS_DIR)
        .join("exitcode")
}
/// The same code, written beside it by an essential slot's `finish`: the
/// container's end was decided by a slot, not by a `docker stop`, so the
/// stop hook leaves the foreground command to the final TERM rather than
/// let its exit overwrite the code (`foreground`).
pub fn decided_exitcode() -> std::path::PathBuf {
    crate::container::run_dir()
        .join(RESULTS_DIR)
        .join(DECIDED_EXITCODE_NAME)
}
pub const DECIDED_EXITCODE_NAME: &str = "exitcode.svkit";
/// s6-overlay's halt; under svkit-init, `finish` sends USR1 to the pid in
/// [`INIT_PID_ENV`] instead.
pub const HALT: &str = "/run/s6/basedir/bin/halt";
pub use crate::container::INIT_PID_ENV;
/// The container's exit code when an essential slot can never start: a
/// dependency it waits for failed for good (EX_UNAVAILABLE).
pub const DEPENDENCY_FAILED_EXIT: u8 = 69;
/// `supervise/svkit-request.PID`: the death of PID was asked for.
pub const REQUEST_PREFIX: &str = "svkit-request.";

/// What [`END_FILE`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// A clean exit that the restart policy keeps down: finished, healthy.
    Done,
    /// Kept down for good; why, in `finish`'s words.
    Failed(String),
}

/// What `finish` writes for `end`: one line.
pub fn line(end: &End) -> String {
    match end {
        End::Done => "done\n".to_string(),
        End::Failed(why) => format!("failed: {why}\n"),
    }
}

/// The end `finish` recorded in `slot`, if any. Unreadable or unknown
/// content reads as a failure whose reason says so: a slot kept down by
/// its finish must never look healthy by accident.
pub fn read(slot: &Path) -> Option<End> {
    Some(match first_line(&slot.join(END_FILE)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(_) => End::Failed("unreadable end record".into()),
        Ok(l) if l == "done" => End::Done,
        Ok(l) => match l.strip_prefix("failed: ") {
            Some(why) => End::Failed(why.to_string()),
            None => End::Failed(format!("unknown end record `{l}`")),
        },
    })
}

/// Forgets an essential slot's decision from an earlier run of this
/// container: `docker start` keeps a `/run` that is no tmpfs, and the stop
/// hook would otherwise leave this run's foreground command to the final
/// TERM, as if a slot had ended it. The boot hook calls it.
pub fn forget_decision() -> io::Result<()> {
    match fs::remove_file(decided_exitcode()) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Makes `slot` essential for this container's life (see [`ESSENTIAL_FILE`]).
pub fn mark_essential(slot: &Path) -> io::Result<()> {
    create_mark(&slot.join(ESSENTIAL_FILE))
}

/// Writes `cmds` to the slot's supervisor, in order, in one write. When
/// one of them ends the running process, that death is first recorded as
/// asked for ([`record_request`]); if it cannot be, nothing is sent.
pub fn send(slot: &Path, cmds: &[SvcCommand]) -> Result<(), ControlError> {
    let st = cmds
        .iter()
        .any(|c| c.ends_run())
        .then(|| crate::s6::status::read_slot(slot));
    if let Some(pid) = st.and_then(|st| st.ok()?.pid) {
        record_request(slot, pid).map_err(|source| ControlError::Io {
            slot: slot.to_path_buf(),
            source,
        })?;
    }
    control::write(slot, cmds)
}

/// Records that the death of `pid` in `slot` is asked for (see the module
/// doc). An existing record is fine.
pub fn record_request(slot: &Path, pid: u32) -> io::Result<()> {
    create_mark(&slot.join(format!("supervise/{REQUEST_PREFIX}{pid}")))
}

/// `finish`'s exit code that makes s6-supervise keep the slot down.
pub const KEEP_DOWN: u8 = 125;

/// The death a slot's `finish` runs after: its `$1`, the exit code (256
/// when killed by a signal), and `$2`, the signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: u32,
    pub signal: u32,
}

/// The end of every path of a slot's `finish` that does not simply
/// restart the slot (`svkit slot-end keep`, run in the slot dir `dir`),
/// without a fork: unless s6 no longer wants the slot up (a stop: nothing
/// to decide, exit 0), records why ([`END_FILE`]: `record`), says `svkit:
/// slot NAME said` on the container's output, ends the container when the
/// slot is essential (`essential`: the death that ends it) and returns
/// [`KEEP_DOWN`].
pub fn keep_down(dir: &Path, record: &str, said: &str, essential: Option<Exit>) -> u8 {
    if !wanted_up(dir) {
        return crate::msg::exit::OK;
    }
    let name = crate::s6::slot_name(dir);
    if let Err(e) = fs::write(dir.join(END_FILE), format!("{record}\n")) {
        msg::warn(format_args!(
            "slot {name}: unable to write {END_FILE}: {}",
            strerror(&e)
        ));
    }
    msg::finish_line(&format!("svkit: slot {name} {said}"));
    if let Some(exit) = essential {
        end_container(&name, exit);
    }
    KEEP_DOWN
}

/// After a death that no other rule of `finish` decided (`svkit slot-end
/// died`, in the slot dir `dir`): the crash-loop rule
/// ([`health::after_death`]) over s6's death tally. `max_deaths` reached:
/// [`keep_down`]; else the backoff is waited out here, said first, and
/// the slot restarts (0). A stop decides nothing, as in [`keep_down`], and
/// one that comes during the backoff ends it.
pub fn after_death(
    dir: &Path,
    max_deaths: Option<MaxDeaths>,
    backoff: Backoff,
    completes: bool,
    essential: Option<Exit>,
) -> u8 {
    if !wanted_up(dir) {
        return crate::msg::exit::OK;
    }
    let name = crate::s6::slot_name(dir);
    // Unreadable, s6-permafailon's way: said, and nothing counted.
    let tally = death_tally_stamped(dir).unwrap_or_else(|e| {
        msg::warn(format_args!("slot {name}: {e}: no death counted"));
        Vec::new()
    });
    let now = Tai64N::from_wallclock(SystemTime::now());
    let decided = now.map(|now| health::after_death(max_deaths, backoff, completes, &tally, now));
    match decided.unwrap_or(AfterDeath::Restart(0)) {
        AfterDeath::Fail(m) => {
            let why = format!("died {} times within {} s", m.deaths, m.within_s);
            let said = format!("{why}: not restarting");
            keep_down(dir, line(&End::Failed(why)).trim_end(), &said, essential)
        }
        AfterDeath::Restart(0) => crate::msg::exit::OK,
        AfterDeath::Restart(delay) => {
            msg::finish_line(&format!(
                "svkit: slot {name} is crash-looping: restarting in {delay} s"
            ));
            // A stop while it waits ends the wait: s6 then keeps the
            // slot down, and `svctl stop --wait` need not sit out the
            // delay. A look every 100 ms costs nothing beside it.
            let until = Instant::now() + Duration::from_secs(delay.into());
            crate::clock::poll_by(until, Duration::from_millis(100), || !wanted_up(dir));
            crate::msg::exit::OK
        }
    }
}

/// Whether s6 still wants the slot up: `s6-svstat -o wantedup`, read
/// natively. A status that cannot be read says nothing: yes.
fn wanted_up(dir: &Path) -> bool {
    crate::s6::status::read_slot(dir).map_or(true, |st| st.want_up)
}

/// An essential slot kept down ends the container with its exit code
/// (128+N for signal N): through the init's exit code file (and its copy
/// that says a slot decided it) and halt, s6-overlay's, or svkit-init's
/// USR1 when it runs the tree. Nothing without the init's results dir.
fn end_container(name: &str, exit: Exit) {
    let (file, decided) = (container_exitcode(), decided_exitcode());
    if !file.parent().is_some_and(Path::is_dir) {
        return;
    }
    let code = if exit.code == 256 {
        128 + exit.signal
    } else {
        exit.code
    };
    msg::finish_line(&format!(
        "svkit: slot {name} is essential: stopping the container with exit code {code}"
    ));
    for f in [&file, &decided] {
        if let Err(e) = fs::write(f, format!("{code}\n")) {
            msg::warn(format_args!(
                "unable to write {}: {}",
                msg::path(f),
                strerror(&e)
            ));
        }
    }
    let halted = match std::env::var(INIT_PID_ENV) {
        Ok(pid) if !pid.is_empty() => (pid.parse().ok())
            .map(nix::unistd::Pid::from_raw)
            .ok_or_else(|| format!("{INIT_PID_ENV}={pid}: not a pid"))
            .and_then(|pid| {
                nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGUSR1)
                    .map_err(|e| format!("unable to signal the init (pid {pid}): {}", e.desc()))
            }),
        _ => std::process::Command::new(HALT)
            .status()
            .map(drop)
            .map_err(|e| format!("unable to run {HALT}: {}", strerror(&e))),
    };
    if let Err(why) = halted {
        msg::warn(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_read_back_and_anything_else_is_a_failure() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(t.path()), None);
        let put = |s: &str| fs::write(t.path().join(END_FILE), s).expect("write");
        put(&line(&End::Done));
        assert_eq!(read(t.path()), Some(End::Done));
        put(&line(&End::Failed("exited 78".into())));
        assert_eq!(read(t.path()), Some(End::Failed("exited 78".into())));
        put("dune\n");
        assert!(matches!(read(t.path()), Some(End::Failed(w)) if w.contains("dune")));
        put(&"x".repeat(1 << 20));
        assert!(matches!(read(t.path()), Some(End::Failed(_))));
        fs::remove_file(t.path().join(END_FILE)).expect("rm");
        std::os::unix::fs::symlink("/etc/passwd", t.path().join(END_FILE)).expect("ln");
        assert!(matches!(read(t.path()), Some(End::Failed(w)) if w.contains("unreadable")));
    }

    #[test]
    fn a_request_is_a_named_empty_file_and_may_repeat() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::create_dir(t.path().join("supervise")).expect("mkdir");
        record_request(t.path(), 42).expect("record");
        record_request(t.path(), 42).expect("again");
        let p = t.path().join("supervise/svkit-request.42");
        assert_eq!(fs::read(p).expect("read"), b"");
        assert!(record_request(&t.path().join("nope"), 1).is_err());
    }
}
