//! What svkit remembers across boots: the desired state an operator last set
//! for a `remember` slot, and the instances registered at runtime (and
//! which of those records the config no longer declares a name for). Persisted
//! as intent (up/down), never as the last observed state, so a slot an
//! operator started comes back after a restart or an image upgrade even if
//! it was crashing at the time.

mod desired;
mod instances;
mod orphans;

pub use desired::{read_desired, write_desired, Desired, StateError};
pub use instances::{is_registered, register, unregister, LiveInstances, INSTANCES_DIR};
pub use orphans::{declares, forget, note, orphans, orphans_json, Orphan, OrphanKind};

use std::path::Path;

/// What is at `path`, never followed: `None` when nothing is, an error
/// for a symlink (planted: never followed).
fn lstat(path: &Path) -> Result<Option<std::fs::Metadata>, StateError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(StateError::Symlink {
            path: path.to_path_buf(),
        }),
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(desired::io(path)(e)),
    }
}

/// Makes each of `dirs` (parents first) unless it exists; a symlink among
/// them is refused, never followed. Dirs made are 0755 and owned by
/// `owner`, so the slot's user can change its own state later.
fn ensure_dirs(dirs: &[&Path], owner: Option<(u32, u32)>) -> Result<(), StateError> {
    use std::os::unix::fs::PermissionsExt;
    for d in dirs {
        if lstat(d)?.is_some() {
            continue;
        }
        let io = desired::io(d);
        std::fs::create_dir_all(d).map_err(&io)?;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).map_err(&io)?;
        if let Some((u, g)) = owner {
            std::os::unix::fs::lchown(d, Some(u), Some(g)).map_err(&io)?;
        }
    }
    Ok(())
}
