//! lifeline: run a helper process bound to its parent's lifetime, after
//! reaping a stale instance of it that squats its port.
//!
//! Concerns, one module each:
//! - [`port`]: who holds a port: `/proc/net/tcp{,6}` → listening sockets
//!   → pids, through `/proc/PID/fd`;
//! - [`identity`]: pid → start time, uids, executable, argv;
//! - [`reap`]: stale-or-stranger verdicts, TERM/grace/KILL;
//! - [`spawn`]: the child in its own session, pdeathsig, stdin pipe, stop;
//!   and what asks a running lifeline to stop (signals, stdin EOF);
//! - [`statefile`]: the 0600, atomic, symlink-refusing record of the child;
//! - [`run`]: the sequence, which `svkit-lifeline` runs on its main thread,
//!   and its `--ready`, a [`crate::probe::Probe`] tried until it passes.
//!
//! `docs/lifeline.md` is the user-facing description.

pub mod identity;
pub mod port;
pub mod reap;
pub mod run;
pub mod spawn;
pub mod statefile;

pub use port::{inspect_port, PortReport};
pub use reap::MatchArgs;
pub use run::{parse_ready, Launched, Spec};
pub use spawn::{exit_code, StopSources, WATCH_STDIN_ENV};

use std::io;
use std::path::PathBuf;

use crate::msg::exit::{self, lifeline::*};
use crate::msg::strerror;
use identity::Identity;
use reap::StrangerReport;

/// Each variant carries what an operator needs to act on it (pids,
/// commands, paths); [`Error::exit_code`] maps it to the binary's
/// documented exit code, so the mapping lives next to the variants.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Invalid input from the caller (port out of range, bad URL, ...).
    #[error("usage: {0}")]
    Usage(String),
    /// An operating system call failed: `what` names the operation.
    #[error("{what}: {}", strerror(source))]
    Io { what: String, source: io::Error },
    /// The port is held by something we may not kill.
    #[error("{0}")]
    PortHeld(Box<StrangerReport>),
    /// Stale owners were signalled but the port is still listening.
    #[error(
        "port {port} still in use after reaping the stale instance ({})",
        holders(owners)
    )]
    PortStillBusy { port: u16, owners: Vec<Identity> },
    /// The command could not be started.
    #[error("unable to spawn {program}: {}", strerror(source))]
    Spawn { program: String, source: io::Error },
    /// Readiness probe did not pass in time.
    #[error("not ready: {target} did not answer within {waited_ms} ms (last attempt: {last}); child stopped")]
    ReadyTimeout {
        target: String,
        waited_ms: u128,
        last: String,
    },
    /// The child exited before it answered the probe.
    #[error("not ready: child {status} before {target} answered")]
    ExitedBeforeReady { target: String, status: String },
    /// The state file is unsafe or unreadable as a state file.
    #[error("refusing state file {}: {why}", path.display())]
    StateRefused { path: PathBuf, why: String },
}

/// `pid 12 (cmd), pid 13 (cmd)`.
fn holders(owners: &[Identity]) -> String {
    let each = owners
        .iter()
        .map(|id| format!("pid {} ({})", id.pid, id.command_line()));
    each.collect::<Vec<_>>().join(", ")
}

impl Error {
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    pub fn nix(what: impl Into<String>, errno: nix::errno::Errno) -> Self {
        Error::io(what, errno.into())
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

pub type Result<T> = std::result::Result<T, Error>;
