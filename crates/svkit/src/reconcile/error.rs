use std::fmt;
use std::path::PathBuf;

use crate::capacity::{CapacityError, TooManyServices};
use crate::msg::{exit, strerror};
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
    /// The slot's log dir cannot be made or handed to its user.
    LogDir {
        dir: PathBuf,
        source: Box<ReconcileError>,
    },
    /// Slots an all-or-nothing apply cannot apply: it wrote nothing, or
    /// undid what it wrote (`undo_failed`: what it could not undo).
    Slots {
        failed: Vec<SlotError>,
        undo_failed: Vec<ReconcileError>,
    },
    Control(ControlError),
    /// The config needs more services than s6-svscan takes: found
    /// before any write.
    TooManyServices(TooManyServices),
    /// An entry of the scandir stops s6-svscan's scan (`capacity::blocked`):
    /// found before any write.
    ScanBlocked(String),
    /// The caller is not the user the supervision tree runs as.
    NotTreeUser {
        scandir: PathBuf,
        tree_uid: u32,
        euid: u32,
    },
}

/// One slot that cannot be applied, and why.
#[derive(Debug)]
pub struct SlotError {
    pub slot: String,
    pub error: ReconcileError,
}

impl SlotError {
    pub fn new(slot: impl Into<String>, error: ReconcileError) -> SlotError {
        SlotError {
            slot: slot.into(),
            error,
        }
    }
}

impl fmt::Display for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "slot {}: {}", self.slot, self.error)
    }
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReconcileError::Io { path, source } => {
                write!(f, "{}: {}", path.display(), strerror(source))
            }
            ReconcileError::Foreign { slot } => write!(
                f,
                "a service dir named {slot} exists and was not made by svkit; refusing to touch it"
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
            ReconcileError::LogDir { dir, source } => {
                write!(f, "log dir {}: {source}", dir.display())
            }
            ReconcileError::Slots {
                failed,
                undo_failed,
            } => {
                let list: Vec<String> = failed.iter().map(ToString::to_string).collect();
                f.write_str(&list.join("; "))?;
                if undo_failed.is_empty() {
                    return f.write_str("; nothing changed");
                }
                let undo: Vec<String> = undo_failed.iter().map(ToString::to_string).collect();
                write!(f, "; undone, except: {}", undo.join("; "))
            }
            ReconcileError::Control(e) => write!(f, "{e}"),
            ReconcileError::TooManyServices(e) => write!(f, "{e}; nothing changed"),
            ReconcileError::ScanBlocked(why) => write!(f, "{why}; nothing changed"),
            ReconcileError::NotTreeUser {
                scandir,
                tree_uid,
                euid,
            } => f.write_str(&super::treeuser::refusal(scandir, *tree_uid, *euid)),
        }
    }
}

impl std::error::Error for ReconcileError {}

impl ReconcileError {
    /// 1 for a fault of the config, as for an invalid one (nothing was
    /// written); 111 for the rest, a system error.
    pub fn exit_code(&self) -> u8 {
        match self {
            ReconcileError::TooManyServices(_) => exit::NOT_OK,
            _ => exit::SYSTEM,
        }
    }
}

impl From<CapacityError> for ReconcileError {
    fn from(e: CapacityError) -> Self {
        match e {
            CapacityError::TooMany(e) => ReconcileError::TooManyServices(e),
            e @ CapacityError::ScanBlocked { .. } => ReconcileError::ScanBlocked(e.to_string()),
            CapacityError::Io { path, source } => ReconcileError::Io { path, source },
        }
    }
}

impl From<ControlError> for ReconcileError {
    fn from(e: ControlError) -> Self {
        ReconcileError::Control(e)
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ReconcileError {
    let path = path.into();
    move |source| ReconcileError::Io { path, source }
}
