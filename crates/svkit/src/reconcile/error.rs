use std::fmt;
use std::path::PathBuf;

use crate::msg::strerror;
use crate::s6::control::ControlError;

#[derive(Debug)]
pub enum ReconcileError {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config declares a slot whose name a foreign (not svkit-made)
    /// service dir already uses.
    Foreign {
        slot: String,
    },
    /// A symlink where svkit must create a real directory or file.
    Symlink {
        path: PathBuf,
    },
    /// Another reconcile holds the lock for longer than we wait.
    Locked {
        path: PathBuf,
        waited_ms: u64,
    },
    UnknownUser {
        user: String,
    },
    Control(ControlError),
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReconcileError::Io { path, source } => {
                write!(f, "{}: {}", path.display(), strerror(source))
            }
            ReconcileError::Foreign { slot } => write!(
                f,
                "slot {slot}: a service dir of that name exists and was not made by svkit; refusing to touch it"
            ),
            ReconcileError::Symlink { path } => {
                write!(f, "refusing {}: it is a symlink", path.display())
            }
            ReconcileError::Locked { path, waited_ms } => write!(
                f,
                "another reconcile holds {} (waited {waited_ms} ms)",
                path.display()
            ),
            ReconcileError::UnknownUser { user } => write!(f, "unknown user {user}"),
            ReconcileError::Control(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReconcileError {}

impl From<ControlError> for ReconcileError {
    fn from(e: ControlError) -> Self {
        ReconcileError::Control(e)
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ReconcileError {
    let path = path.into();
    move |source| ReconcileError::Io { path, source }
}
