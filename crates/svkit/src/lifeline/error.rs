//! Typed errors of the lifeline library.
//!
//! Each variant carries what an operator needs to act on it (pids, commands,
//! paths); the binary maps variants to its documented exit codes through
//! [`Error::exit_code`], so the mapping lives next to the variants.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::reap::{PortHolder, StrangerReport};
use crate::msg::exit::{self, lifeline::*};
use crate::msg::strerror;

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
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    pub fn nix(what: impl Into<String>, errno: nix::errno::Errno) -> Self {
        Error::Io {
            what: what.into(),
            source: io::Error::from(errno),
        }
    }

    /// The documented exit code of `svkit-lifeline` for this failure
    /// (named in [`crate::msg::exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => exit::USAGE,
            Error::Io { .. } => exit::SYSTEM,
            Error::PortHeld(_) => PORT_HELD,
            Error::PortStillBusy { .. } => PORT_STILL_BUSY,
            Error::Spawn { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => exit::NOT_FOUND,
                io::ErrorKind::PermissionDenied => exit::CANNOT_EXECUTE,
                _ => exit::SYSTEM,
            },
            Error::ReadyTimeout { .. } => READY_TIMEOUT,
            Error::ExitedBeforeReady { .. } => EXITED_BEFORE_READY,
            Error::StateRefused { .. } => STATE_REFUSED,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "usage: {msg}"),
            Error::Io { what, source } => write!(f, "{what}: {}", strerror(source)),
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
            Error::Spawn { program, source } => {
                write!(f, "unable to spawn {program}: {}", strerror(source))
            }
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
