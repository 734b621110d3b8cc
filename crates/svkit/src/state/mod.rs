//! What svkit remembers across boots: the desired state an operator last set
//! for a `remember` slot, and the instances registered at runtime (and
//! which of those records the config no longer declares a name for). Persisted
//! as intent (up/down), never as the last observed state, so a slot an
//! operator started comes back after a restart or an image upgrade even if
//! it was crashing at the time.
//!
//! Desired states are here: one small file per slot,
//! `<state_dir>/desired/<slot>`, holding `up` or `down`. Reads never follow
//! symlinks and never fail the caller: a bad file is reported and treated
//! as "never set". Writes are atomic (temp + rename). Registered instances
//! are `instances.rs`'s, orphans `orphans.rs`'s.

mod instances;
mod orphans;

pub use instances::{is_registered, register, unregister, LiveInstances, INSTANCES_DIR};
pub use orphans::{declares, forget, note, orphans, orphans_json, Orphan, OrphanKind};

use std::path::{Path, PathBuf};

use crate::msg::strerror;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desired {
    Up,
    Down,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file is a symlink: someone planted it; never follow it.
    #[error("refusing state file {}: it is a symlink", path.display())]
    Symlink { path: PathBuf },
    /// The file holds something other than `up` or `down`.
    #[error("ignoring state file {}: expected \"up\" or \"down\"", path.display())]
    Corrupt { path: PathBuf },
    #[error("state file {}: {}", path.display(), strerror(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// [`StateError::Io`] of `path`, for `map_err`.
fn io(path: &Path) -> impl Fn(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Io {
        path: path.clone(),
        source,
    }
}

fn file_for(state_dir: &Path, slot: &str) -> PathBuf {
    state_dir.join("desired").join(slot)
}

/// `Ok(None)`: never set. `Err`: set but unusable; callers warn and treat it
/// as never set.
pub fn read_desired(state_dir: &Path, slot: &str) -> Result<Option<Desired>, StateError> {
    let path = file_for(state_dir, slot);
    // Small on purpose: a huge file is corrupt, not something to slurp.
    // Not a file, or not text: corrupt too.
    match crate::fsutil::read_record(&path, 64).map(|(text, _)| text) {
        Ok(t) if t == "up" || t == "up\n" => Ok(Some(Desired::Up)),
        Ok(t) if t == "down" || t == "down\n" => Ok(Some(Desired::Down)),
        Ok(_) => Err(StateError::Corrupt { path }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => Err(StateError::Symlink { path }),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(StateError::Corrupt { path }),
        Err(e) => Err(io(&path)(e)),
    }
}

/// Atomically records `desired`; `owner` (uid, gid) makes the file and its
/// dirs the slot user's, so that user can change it with `svctl` later.
pub fn write_desired(
    state_dir: &Path,
    slot: &str,
    desired: Desired,
    owner: Option<(u32, u32)>,
) -> Result<(), StateError> {
    let dir = state_dir.join("desired");
    ensure_dirs(&[state_dir, dir.as_path()], owner)?;
    let path = file_for(state_dir, slot);
    let body = match desired {
        Desired::Up => "up\n",
        Desired::Down => "down\n",
    };
    // Written as the owner: `desired/` is theirs, so a symlink they swap
    // in for it must not let root write elsewhere.
    crate::fsutil::as_owner(owner, || {
        crate::fsutil::write_atomic(&path, body.as_bytes(), 0o644, None)
    })
    .map_err(io(&path))
}

/// What is at `path`, never followed: `None` when nothing is, an error
/// for a symlink (planted: never followed).
fn lstat(path: &Path) -> Result<Option<std::fs::Metadata>, StateError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(StateError::Symlink {
            path: path.to_path_buf(),
        }),
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
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
        let io = io(d);
        std::fs::create_dir_all(d).map_err(&io)?;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).map_err(&io)?;
        if let Some((u, g)) = owner {
            std::os::unix::fs::lchown(d, Some(u), Some(g)).map_err(&io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn round_trip_and_absent() {
        let t = tempfile::tempdir().expect("tempdir");
        assert!(matches!(read_desired(t.path(), "a"), Ok(None)));
        write_desired(t.path(), "a", Desired::Up, None).expect("write");
        assert!(matches!(read_desired(t.path(), "a"), Ok(Some(Desired::Up))));
        write_desired(t.path(), "a", Desired::Down, None).expect("write");
        assert!(matches!(
            read_desired(t.path(), "a"),
            Ok(Some(Desired::Down))
        ));
        let leftovers: Vec<_> = fs::read_dir(t.path().join("desired"))
            .expect("dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn hostile_files_are_reported_not_followed() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path().join("desired");
        fs::create_dir_all(&d).expect("mkdir");
        let target = t.path().join("secret");
        fs::write(&target, "up").expect("write");
        std::os::unix::fs::symlink(&target, d.join("link")).expect("symlink");
        assert!(matches!(
            read_desired(t.path(), "link"),
            Err(StateError::Symlink { .. })
        ));
        for (name, body) in [
            ("garbage", &b"\x00\xffgarbage"[..]),
            ("empty", b""),
            ("upper", b"UP"),
            ("huge", &[b'u'; 10_000][..]),
            ("trailing", b"up\n\n"),
        ] {
            fs::write(d.join(name), body).expect("write");
            let r = read_desired(t.path(), name);
            assert!(
                matches!(r, Err(StateError::Corrupt { .. })),
                "{name}: {r:?}"
            );
        }
        fs::create_dir(d.join("adir")).expect("mkdir");
        assert!(read_desired(t.path(), "adir").is_err());
        // A write through a planted symlinked state dir is refused.
        let evil = t.path().join("evil");
        std::os::unix::fs::symlink(t.path().join("elsewhere"), &evil).expect("symlink");
        assert!(matches!(
            write_desired(&evil, "a", Desired::Up, None),
            Err(StateError::Symlink { .. })
        ));
        // The write replaces a planted symlink rather than following it.
        write_desired(t.path(), "link", Desired::Down, None).expect("write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "up");
    }

    /// Each kind of bad state file is named for what it is, in the line an
    /// operator reads.
    #[test]
    fn each_bad_state_file_says_what_it_is() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path().join("desired");
        fs::create_dir_all(&d).expect("mkdir");
        std::os::unix::fs::symlink("/nowhere", d.join("link")).expect("symlink");
        fs::write(d.join("junk"), "maybe").expect("write");
        let said = |slot: &str| match read_desired(t.path(), slot) {
            Err(e) => e.to_string(),
            Ok(v) => panic!("{slot}: read as {v:?}"),
        };
        let dir = d.display();
        assert_eq!(
            said("link"),
            format!("refusing state file {dir}/link: it is a symlink")
        );
        assert_eq!(
            said("junk"),
            format!("ignoring state file {dir}/junk: expected \"up\" or \"down\"")
        );
        // Not a symlink, and not its content: the system's own reason.
        let flat = tempfile::tempdir().expect("tempdir");
        fs::write(flat.path().join("desired"), "a file, not a dir").expect("write");
        let r = read_desired(flat.path(), "a");
        assert!(matches!(r, Err(StateError::Io { .. })), "{r:?}");
        assert_eq!(
            r.map_err(|e| e.to_string()).err().as_deref(),
            Some(
                format!(
                    "state file {}/desired/a: Not a directory",
                    flat.path().display()
                )
                .as_str()
            )
        );
    }
}
