//! What a reconcile can fail on, each with the line operators read.

use std::path::{Path, PathBuf};

use crate::capacity::{CapacityError, TooManyServices};
use crate::msg::{exit, strerror};
use crate::s6::control::ControlError;

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("{}: {}", path.display(), strerror(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config declares a slot whose name a foreign (not svkit-made)
    /// service dir already uses.
    #[error("a service dir named {slot} exists and was not made by svkit; refusing to touch it")]
    Foreign { slot: String },
    /// A symlink where svkit must create a real directory or file.
    #[error("refusing {}: it is a symlink", path.display())]
    Symlink { path: PathBuf },
    /// Another reconcile holds the lock for longer than we wait.
    #[error("another reconcile holds {} (waited {waited_ms} ms)", path.display())]
    Locked { path: PathBuf, waited_ms: u64 },
    #[error("unknown user {user}")]
    UnknownUser { user: String },
    /// The slot's log dir cannot be made or handed to its user.
    #[error("log dir {}: {source}", dir.display())]
    LogDir {
        dir: PathBuf,
        source: Box<ReconcileError>,
    },
    /// Slots an all-or-nothing apply cannot apply: it wrote nothing, or
    /// undid what it wrote (`undo_failed`: what it could not undo).
    #[error("{}", slots_failed(failed, undo_failed))]
    Slots {
        failed: Vec<SlotError>,
        undo_failed: Vec<ReconcileError>,
    },
    #[error("{0}")]
    Control(#[from] ControlError),
    /// The config needs more services than s6-svscan takes: found
    /// before any write.
    #[error("{0}; nothing changed")]
    TooManyServices(TooManyServices),
    /// An entry of the scandir stops s6-svscan's scan (`capacity::blocked`):
    /// found before any write.
    #[error("{0}; nothing changed")]
    ScanBlocked(String),
    /// The caller is not the user the supervision tree runs as.
    #[error("{}", refusal(scandir, *tree_uid, *euid))]
    NotTreeUser {
        scandir: PathBuf,
        tree_uid: u32,
        euid: u32,
    },
}

/// One slot that cannot be applied, and why.
#[derive(Debug, thiserror::Error)]
#[error("slot {slot}: {error}")]
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

fn slots_failed(failed: &[SlotError], undo_failed: &[ReconcileError]) -> String {
    let list: Vec<String> = failed.iter().map(ToString::to_string).collect();
    if undo_failed.is_empty() {
        return format!("{}; nothing changed", list.join("; "));
    }
    let undo: Vec<String> = undo_failed.iter().map(ToString::to_string).collect();
    format!("{}; undone, except: {}", list.join("; "), undo.join("; "))
}

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

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ReconcileError {
    let path = path.into();
    move |source| ReconcileError::Io { path, source }
}

/// Who may change a supervision tree: the user it runs as. s6-overlay's
/// preinit hands the scandir to the container's user (root, or the
/// `--user` of a non-root container), so the scandir's owner is the tree's
/// user. Root changing a non-root tree would hand the slots' files to the
/// config's `user`, and the tree's own s6-supervise could then no longer
/// write its status files: refused, like a non-root user changing a root
/// tree. A scandir that does not exist yet belongs to no tree: allowed
/// (whoever creates it will own it).
pub fn check_tree_user(scandir: &Path, euid: u32) -> Result<(), ReconcileError> {
    use std::os::unix::fs::MetadataExt as _;
    match std::fs::metadata(scandir) {
        Ok(m) if m.uid() != euid => Err(ReconcileError::NotTreeUser {
            scandir: scandir.to_path_buf(),
            tree_uid: m.uid(),
            euid,
        }),
        _ => Ok(()),
    }
}

/// The line of [`ReconcileError::NotTreeUser`].
fn refusal(scandir: &Path, tree_uid: u32, euid: u32) -> String {
    if tree_uid == 0 {
        // A root tree (every image that boots /init as root).
        return "permission denied: this needs root (try as root, e.g. docker exec -u 0)".into();
    }
    let how = format!("run this as uid {tree_uid} (docker exec -u {tree_uid}, or without -u)");
    let (who, why) = match euid {
        0 => ("root".to_string(), "; as root this would hand the slots' files to the config's user and the tree could no longer write them"),
        _ => (format!("as uid {euid}"), ""),
    };
    format!(
        "permission denied: the supervision tree of {} runs as uid {tree_uid}, not {who}: {how}{why}",
        scandir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scandirs_owner_may_change_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let me = nix::unistd::geteuid().as_raw();
        check_tree_user(t.path(), me).expect("the owner may");
        check_tree_user(&t.path().join("missing"), me + 1).expect("no tree yet");
        let e = check_tree_user(t.path(), me + 1).expect_err("another uid may not");
        let ReconcileError::NotTreeUser { tree_uid, euid, .. } = e else {
            panic!("{e:?}");
        };
        assert_eq!((tree_uid, euid), (me, me + 1));
    }

    #[test]
    fn refusals_say_who_may() {
        let d = Path::new("/run/service");
        assert!(refusal(d, 0, 10001).contains("this needs root"));
        let r = refusal(d, 123456, 0);
        assert!(r.starts_with("permission denied: "), "{r}");
        assert!(r.contains("runs as uid 123456, not root"), "{r}");
        assert!(r.contains("docker exec -u 123456"), "{r}");
        let r = refusal(d, 123456, 10001);
        assert!(r.contains("not as uid 10001"), "{r}");
    }
}
