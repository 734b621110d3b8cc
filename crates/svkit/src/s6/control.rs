//! Controlling supervisors natively: the `supervise/control` FIFO takes the
//! same command bytes `s6-svc` writes, so one open+write replaces a process
//! per slot. `s6-svscanctl` goes through s6's own binary (it is rare).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::slot_name as name;
use crate::clock::poll_until;
use crate::msg::strerror;

#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// No s6-supervise reads the control FIFO (not started yet, or gone).
    #[error("unable to control {}: supervisor not running", name(.slot))]
    NotSupervised { slot: PathBuf },
    #[error("unable to control {}: {}", name(.slot), strerror(.source))]
    Io {
        slot: PathBuf,
        source: std::io::Error,
    },
    /// A helper binary (s6-svscanctl) failed or could not be run.
    #[error("{tool}: {detail}")]
    Tool { tool: String, detail: String },
    /// A bounded wait ran out.
    #[error("timed out waiting for {} to be {what}", name(.slot))]
    Timeout { slot: PathBuf, what: &'static str },
}

/// Commands of `s6-svc`, as the bytes it writes to the control FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SvcCommand {
    Up = b'u',
    Down = b'd',
    /// `-r`: restart with the down signal, only if up.
    Restart = b'r',
    /// `-O`: up once, not restarted when it dies.
    Once = b'O',
    Pause = b'p',
    Cont = b'c',
    Term = b't',
    Kill = b'k',
    Hup = b'h',
    Int = b'i',
    Quit = b'q',
    Alrm = b'a',
    Usr1 = b'1',
    Usr2 = b'2',
    Winch = b'y',
}

impl SvcCommand {
    /// Ends the running process: a stop or restart, or a signal that asks
    /// a program to end. (A stop is recorded too: an operator's start right
    /// after it must not make `finish` take the stop for a clean exit.) Such a death is asked for, never the program's own
    /// clean exit (see `crate::slot::end`).
    pub fn ends_run(self) -> bool {
        matches!(
            self,
            SvcCommand::Down
                | SvcCommand::Restart
                | SvcCommand::Term
                | SvcCommand::Kill
                | SvcCommand::Int
                | SvcCommand::Quit
        )
    }

    /// The signals `s6-svc -s` accepts, by name (with or without SIG, in
    /// any case) or number ([`super::signal::svc_number`]).
    pub fn from_signal(name: &str) -> Option<SvcCommand> {
        let n = super::signal::svc_number(name)?;
        SIGNALS.iter().find(|(s, _)| *s == n).map(|(_, c)| *c)
    }
}

/// The signals `s6-svc` sends, each with its command, in the order
/// `svctl signal` lists them ([`signal_names`]).
const SIGNALS: [(i32, SvcCommand); 11] = {
    use nix::libc as c;
    [
        (c::SIGTERM, SvcCommand::Term),
        (c::SIGKILL, SvcCommand::Kill),
        (c::SIGHUP, SvcCommand::Hup),
        (c::SIGINT, SvcCommand::Int),
        (c::SIGQUIT, SvcCommand::Quit),
        (c::SIGALRM, SvcCommand::Alrm),
        (c::SIGUSR1, SvcCommand::Usr1),
        (c::SIGUSR2, SvcCommand::Usr2),
        (c::SIGSTOP, SvcCommand::Pause),
        (c::SIGCONT, SvcCommand::Cont),
        (c::SIGWINCH, SvcCommand::Winch),
    ]
};

/// The names of the signals [`SvcCommand::from_signal`] takes, space
/// separated (`TERM KILL ...`): what a refusal lists.
pub fn signal_names() -> String {
    let names: Vec<&str> = (SIGNALS.iter())
        .map(|(n, _)| super::signal::name(u8::try_from(*n).unwrap_or(0)))
        .collect();
    names.join(" ")
}

/// Writes `cmds` to the slot's supervisor, in order, in one write, and
/// nothing else: svkit's slots are sent commands through
/// `crate::slot::end::send`, which records a death asked for first.
pub fn write(slot: &Path, cmds: &[SvcCommand]) -> Result<(), ControlError> {
    let bytes: Vec<u8> = cmds.iter().map(|&c| c as u8).collect();
    // Non-blocking open of a FIFO for writing fails with ENXIO when nobody
    // reads it: that is exactly "no supervisor", without a stat race (a
    // write never fails so).
    let written = open_fifo(&slot.join("supervise/control")).and_then(|mut f| f.write_all(&bytes));
    let slot = slot.to_path_buf();
    match written {
        Err(e)
            if e.raw_os_error() == Some(nix::libc::ENXIO)
                || e.kind() == std::io::ErrorKind::NotFound =>
        {
            Err(ControlError::NotSupervised { slot })
        }
        other => other.map_err(|source| ControlError::Io { slot, source }),
    }
}

/// Makes the slot's `down` file say `up` (absent) or not (present), as
/// reconcile renders it for that desired state: a supervisor started
/// again (a new s6-supervise, the boot) then keeps what an operator chose,
/// and a plan finds nothing to put right. Its content and owner mean
/// nothing to s6, only its presence.
pub fn set_normally_up(slot: &Path, up: bool) -> std::io::Result<()> {
    let down = slot.join("down");
    if up {
        match std::fs::remove_file(&down) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    } else {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&down)
            .map(drop)
    }
}

/// True when an s6-supervise process listens on the slot (what `s6-svok` tells).
pub fn supervised(slot: &Path) -> bool {
    listening(&slot.join("supervise/control"))
}

/// True when a process reads the control FIFO `fifo` (s6-supervise's, or
/// s6-svscan's `.s6-svscan/control`): a non-blocking open for writing
/// fails without a reader.
pub fn listening(fifo: &Path) -> bool {
    open_fifo(fifo).is_ok()
}

fn open_fifo(fifo: &Path) -> std::io::Result<std::fs::File> {
    (OpenOptions::new().write(true))
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(fifo)
}

/// `s6-svscanctl -a` is asynchronous: a new slot's supervisor appears some
/// time later. Wait for it (bounded) before the first control.
pub fn wait_supervised(slot: &Path, timeout: Duration) -> Result<(), ControlError> {
    if poll_until(timeout, || supervised(slot)) {
        return Ok(());
    }
    Err(ControlError::Timeout {
        slot: slot.to_path_buf(),
        what: "supervised",
    })
}

/// Waits (at most `timeout`) until no s6-supervise listens on any of
/// `slots` nor on their loggers; false when one still does.
pub fn wait_unsupervised(slots: &[PathBuf], timeout: Duration) -> bool {
    poll_until(timeout, || {
        !(slots.iter()).any(|s| supervised(s) || supervised(&s.join("log")))
    })
}

/// `s6-svscanctl FLAGS SCANDIR`, e.g. `-a` (rescan) or `-an` (rescan, prune).
pub fn svscanctl(scandir: &Path, flags: &str) -> Result<(), ControlError> {
    let tool = crate::container::s6_tool("s6-svscanctl");
    let out = Command::new(&tool)
        .arg(flags)
        .arg(scandir)
        .output()
        .map_err(|e| ControlError::Tool {
            tool: tool.display().to_string(),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let detail = match out.status.code() {
        Some(100) => format!("no s6-svscan running on {}", scandir.display()),
        _ => String::from_utf8_lossy(&out.stderr).trim().to_string(),
    };
    Err(ControlError::Tool {
        tool: "s6-svscanctl".into(),
        detail,
    })
}
