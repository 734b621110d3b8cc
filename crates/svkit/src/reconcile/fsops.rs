//! The filesystem steps of reconcile, each safe against planted symlinks:
//! atomic file replacement, the supervisor dirs a non-root user can drive,
//! and log dirs owned by the slot's user.

use super::error::{io, ReconcileError};
use crate::render::RenderedFile;
use nix::sys::stat::Mode;
use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// uid, gid.
pub type UidGid = (u32, u32);

/// Writes `file` under `slot` by temp file + rename, so s6-supervise never
/// sees a half-written `run`. Parent dirs inside the slot are created; the
/// file is root's, like everything svkit renders.
pub fn write_file(slot: &Path, file: &RenderedFile) -> Result<(), ReconcileError> {
    let path = slot.join(&file.path);
    let parent = path.parent().unwrap_or(slot);
    refuse_symlinked_dirs(slot, parent)?;
    fs::create_dir_all(parent).map_err(io(parent))?;
    let root = nix::unistd::geteuid().is_root().then_some((0, 0));
    crate::fsutil::write_atomic(&path, &file.contents, file.mode, root).map_err(io(&path))
}

/// Writes `file` into a slot being built in svkit's own temp dir: nothing
/// else looks there, so the file is made in place (no temp file + rename).
pub fn write_new(slot: &Path, file: &RenderedFile) -> Result<(), ReconcileError> {
    let path = slot.join(&file.path);
    if let Some(parent) = path.parent() {
        refuse_symlinked_dirs(slot, parent)?;
        fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&path)
        .map_err(io(&path))?;
    f.write_all(&file.contents).map_err(io(&path))?;
    f.set_permissions(fs::Permissions::from_mode(file.mode))
        .map_err(io(&path))?;
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::fchown(&f, Some(0), Some(0)).map_err(io(&path))?;
    }
    Ok(())
}

pub fn remove_file(slot: &Path, rel: &Path) -> Result<(), ReconcileError> {
    let path = slot.join(rel);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(&path)(e)),
    }
}

fn refuse_symlinked_dirs(slot: &Path, dir: &Path) -> Result<(), ReconcileError> {
    let Ok(rel) = dir.strip_prefix(slot) else {
        return Ok(());
    };
    let mut cur = slot.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        if fs::symlink_metadata(&cur).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ReconcileError::Symlink { path: cur });
        }
    }
    Ok(())
}

/// s6-supervise creates `supervise/` and `event/` root-only. Made first,
/// they let the slot's user write the control FIFO (svctl start/stop),
/// read the status, and subscribe to events. `sub` is "" or "log".
/// Existing ones are handed to `owner` too, so a slot whose `user` changed
/// is controlled by its new user. The slot dir is root's (in the scandir),
/// so these paths are not the user's to redirect.
pub fn prepare_supervise(slot: &Path, sub: &str, owner: UidGid) -> Result<(), ReconcileError> {
    let base = slot.join(sub);
    let (uid, gid) = owner;
    let own = |p: &Path, u: u32| std::os::unix::fs::lchown(p, Some(u), Some(gid)).map_err(io(p));
    let supervise = base.join("supervise");
    let control = supervise.join("control");
    if !supervise.exists() {
        fs::create_dir_all(&supervise).map_err(io(&supervise))?;
        fs::set_permissions(&supervise, fs::Permissions::from_mode(0o755))
            .map_err(io(&supervise))?;
        nix::unistd::mkfifo(&control, Mode::from_bits_truncate(0o600))
            .map_err(|e| io(&control)(e.into()))?;
    }
    own(&supervise, uid)?;
    if control.exists() {
        own(&control, uid)?;
    }
    let event = base.join("event");
    if !event.exists() {
        fs::create_dir_all(&event).map_err(io(&event))?;
        // What s6 itself uses for a group-accessible fifodir: setgid, sticky.
        fs::set_permissions(&event, fs::Permissions::from_mode(0o3730)).map_err(io(&event))?;
    }
    own(&event, 0)
}

/// `/a`, `/a/b`, `/a/b/c` for `/a/b/c`; `..` and relative parts are refused.
fn prefixes(dir: &Path) -> Result<Vec<PathBuf>, ReconcileError> {
    let mut cur = PathBuf::from("/");
    let mut out = Vec::new();
    for c in dir.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) => {
                cur.push(n);
                out.push(cur.clone());
            }
            _ => {
                return Err(ReconcileError::Symlink {
                    path: dir.to_path_buf(),
                })
            }
        }
    }
    Ok(out)
}

/// Refuses a log dir path with a symlink (or a non-directory) in it, the
/// same rule `log/run` applies at start, before anything is written.
pub fn check_log_dir(dir: &Path) -> Result<(), ReconcileError> {
    check_log_dirs(std::iter::once(dir))
}

/// [`check_log_dir`] for many dirs: a prefix they share (`/data/logs` of
/// `/data/logs/a` and `/data/logs/b`) is looked at once.
pub fn check_log_dirs<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Result<(), ReconcileError> {
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for dir in dirs {
        for p in prefixes(dir)? {
            if seen.contains(&p) {
                continue;
            }
            match fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(ReconcileError::Symlink { path: p })
                }
                Ok(m) if !m.is_dir() => {
                    let e =
                        std::io::Error::new(std::io::ErrorKind::AlreadyExists, "not a directory");
                    return Err(io(&p)(e));
                }
                Ok(_) => {
                    seen.insert(p);
                }
                // Missing from here on: nothing below can be a symlink yet.
                Err(_) => break,
            }
        }
    }
    Ok(())
}

/// Creates `dir` and any missing parents (0750, each created one owned by
/// `owner`), and makes `dir` itself the owner's: one chown, never
/// recursive. The walk goes from `/` through directory descriptors opened
/// with O_NOFOLLOW, and every create and chown acts on the descriptor, not
/// a path: a symlink anywhere is refused, and one swapped in during the
/// walk (the user owns some of these dirs) cannot redirect the chown.
/// `log/run` applies the same rule when it starts.
pub fn ensure_log_dir(dir: &Path, owner: Option<UidGid>) -> Result<(), ReconcileError> {
    use nix::errno::Errno;
    use rustix::fs::OFlags;
    use std::os::fd::{AsRawFd, OwnedFd};
    check_log_dir(dir)?;
    let walk = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let open =
        |parent: Option<&OwnedFd>, name: &Path, path: &Path| -> Result<OwnedFd, ReconcileError> {
            let none = rustix::fs::Mode::empty();
            let fd = match parent {
                Some(p) => rustix::fs::openat(p, name, walk, none),
                None => rustix::fs::openat(rustix::fs::CWD, name, walk, none),
            };
            match fd {
                Ok(fd) => Ok(fd),
                Err(rustix::io::Errno::LOOP) => Err(ReconcileError::Symlink {
                    path: path.to_path_buf(),
                }),
                Err(e) => Err(io(path)(e.into())),
            }
        };
    let mut cur = open(None, Path::new("/"), Path::new("/"))?;
    let mut path = PathBuf::from("/");
    for p in prefixes(dir)? {
        let Some(name) = p.file_name().map(Path::new) else {
            continue;
        };
        path.push(name);
        let made = match nix::sys::stat::mkdirat(
            Some(cur.as_raw_fd()),
            name,
            Mode::from_bits_truncate(0o750),
        ) {
            Ok(()) => true,
            Err(Errno::EEXIST) => false,
            Err(e) => return Err(io(&path)(e.into())),
        };
        let next = open(Some(&cur), name, &path)?;
        if made {
            // The umask must not decide the mode.
            nix::sys::stat::fchmod(next.as_raw_fd(), Mode::from_bits_truncate(0o750))
                .map_err(|e| io(&path)(e.into()))?;
            if let Some(o) = owner {
                fchown(&next, o, &path)?;
            }
        }
        cur = next;
    }
    if let Some(o) = owner {
        fchown(&cur, o, dir)?;
    }
    Ok(())
}

fn fchown(
    fd: &std::os::fd::OwnedFd,
    (uid, gid): UidGid,
    path: &Path,
) -> Result<(), ReconcileError> {
    use std::os::fd::AsRawFd;
    let (u, g) = (
        nix::unistd::Uid::from_raw(uid),
        nix::unistd::Gid::from_raw(gid),
    );
    nix::unistd::fchown(fd.as_raw_fd(), Some(u), Some(g)).map_err(|e| io(path)(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_dir_created_and_planted_symlink_refused() {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("a/b/c");
        ensure_log_dir(&dir, None).expect("create");
        assert!(dir.is_dir());
        ensure_log_dir(&dir, None).expect("idempotent");
        let target = t.path().join("elsewhere");
        fs::create_dir(&target).expect("mkdir");
        let link = t.path().join("a/link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).expect("lchown");
            let r = ensure_log_dir(&link.join("logs"), Some((65534, 65534)));
            assert!(matches!(r, Err(ReconcileError::Symlink { .. })), "{r:?}");
            assert!(!target.join("logs").exists());
        }
        // The final component itself a symlink: refused whoever owns it.
        assert!(matches!(
            ensure_log_dir(&link, None),
            Err(ReconcileError::Symlink { .. })
        ));
    }

    #[test]
    fn write_file_replaces_atomically_with_mode() {
        let t = tempfile::tempdir().expect("tempdir");
        let f = RenderedFile {
            path: "log/run".into(),
            contents: b"#!/bin/sh\n".to_vec(),
            mode: 0o755,
        };
        write_file(t.path(), &f).expect("write");
        let m = fs::metadata(t.path().join("log/run")).expect("meta");
        assert_eq!(m.permissions().mode() & 0o7777, 0o755);
        let names: Vec<_> = fs::read_dir(t.path().join("log"))
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
