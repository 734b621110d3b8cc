//! Typed errors of the lifeline library.
//!
//! Each variant carries what an operator needs to act on it (pids, commands,
//! paths); the binary maps variants to its documented exit codes through
//! [`Error::exit_code`], so the mapping lives next to the variants.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::reap::{PortHolder, StrangerReport};

/// Exit codes of `svkit-lifeline` for failures of lifeline itself.
///
/// A child that ran to completion gives its own code (128+N for signal N).
pub mod exit {
    /// Bad option or argument.
    pub const USAGE: i32 = 100;
    /// The port is held by a process that is not provably a stale instance
    /// (or by a socket no visible process owns); nothing was killed.
    pub const PORT_HELD: i32 = 101;
    /// A stale instance was signalled but the port did not become free.
    pub const PORT_STILL_BUSY: i32 = 102;
    /// The child did not become ready before `--ready-timeout`; it was stopped.
    pub const READY_TIMEOUT: i32 = 103;
    /// The child exited before it became ready.
    pub const EXITED_BEFORE_READY: i32 = 104;
    /// The state file was refused (symlink, foreign owner, not a regular
    /// file, malformed JSON).
    pub const STATE_REFUSED: i32 = 105;
    /// System error (reading /proc, creating pipes, signals, I/O).
    pub const SYSTEM: i32 = 111;
    /// The command was found but could not be executed (like a shell).
    pub const CANNOT_EXECUTE: i32 = 126;
    /// The command was not found (like a shell).
    pub const NOT_FOUND: i32 = 127;
}

#[derive(Debug)]
pub enum Error {
    /// Invalid input from the caller (port out of range, bad URL, ...).
    Usage(String),
    /// An operating system call failed: `what` names the operation.
    Io { what: String, source: io::Error },
    /// The port is held by something we may not kill.
    PortHeld(StrangerReport),
    /// Stale owners were signalled but the port is still listening.
    PortStillBusy { port: u16, owners: Vec<PortHolder> },
    /// The command could not be started.
    Spawn { program: String, source: io::Error },
    /// Readiness probe did not pass in time.
    ReadyTimeout {
        target: String,
        waited_ms: u128,
        last: String,
    },
    /// The child exited before it answered the probe.
    ExitedBeforeReady { target: String, status: String },
    /// The state file is unsafe or unreadable as a state file.
    StateRefused { path: PathBuf, why: String },
}

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn nix(what: impl Into<String>, errno: nix::errno::Errno) -> Self {
        Error::Io {
            what: what.into(),
            source: io::Error::from(errno),
        }
    }

    /// The documented exit code of `svkit-lifeline` for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => exit::USAGE,
            Error::Io { .. } => exit::SYSTEM,
            Error::PortHeld(_) => exit::PORT_HELD,
            Error::PortStillBusy { .. } => exit::PORT_STILL_BUSY,
            Error::Spawn { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => exit::NOT_FOUND,
                io::ErrorKind::PermissionDenied => exit::CANNOT_EXECUTE,
                _ => exit::SYSTEM,
            },
            Error::ReadyTimeout { .. } => exit::READY_TIMEOUT,
            Error::ExitedBeforeReady { .. } => exit::EXITED_BEFORE_READY,
            Error::StateRefused { .. } => exit::STATE_REFUSED,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "usage: {msg}"),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::PortHeld(report) => write!(f, "{report}"),
            Error::PortStillBusy { port, owners } => {
                write!(f, "port {port} still in use after reaping the stale instance (")?;
                for (i, o) in owners.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "pid {} ({})", o.id.pid, o.id.command_line())?;
                }
                write!(f, ")")
            }
            Error::Spawn { program, source } => write!(f, "unable to spawn {program}: {source}"),
            Error::ReadyTimeout { target, waited_ms, last } => write!(
                f,
                "not ready: {target} did not answer within {waited_ms} ms (last attempt: {last}); child stopped"
            ),
            Error::ExitedBeforeReady { target, status } => {
                write!(f, "not ready: child {status} before {target} answered")
            }
            Error::StateRefused { path, why } => {
                write!(f, "refusing state file {}: {why}", path.display())
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
