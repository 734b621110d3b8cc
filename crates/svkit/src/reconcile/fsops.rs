//! The filesystem steps of reconcile inside the scandir, each safe against
//! planted symlinks and each recorded in a [`Journal`] so that it can be
//! undone: atomic file replacement, and the supervisor dirs a non-root
//! user can drive, and log dirs.

use super::error::{io, ReconcileError};
use super::journal::{fault, Journal, Prev, Undo};
use crate::render::RenderedFile;
use nix::errno::Errno;
use nix::sys::stat::Mode;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// uid, gid.
pub type UidGid = (u32, u32);

/// Writes `file` under a live `slot` by temp file + rename, so
/// s6-supervise never sees a half-written `run`. Parent dirs inside the
/// slot are created; the file is root's, like everything svkit renders.
/// What was there before goes to `journal`.
pub fn write_file(
    slot: &Path,
    file: &RenderedFile,
    journal: &mut Journal,
) -> Result<(), ReconcileError> {
    let path = slot.join(&file.path);
    let parent = path.parent().unwrap_or(slot);
    make_dirs(slot, parent, journal)?;
    let prev = Prev::read(&path)?;
    let root = nix::unistd::geteuid().is_root().then_some((0, 0));
    fault::check("write-file").map_err(io(&path))?;
    crate::fsutil::write_atomic(&path, &file.contents, file.mode, root).map_err(io(&path))?;
    journal.push(Undo::File { path, prev });
    Ok(())
}

/// Creates `dir` (inside `slot`) and its missing parents; the first one
/// made goes to `journal`, to be removed with all below it.
fn make_dirs(slot: &Path, dir: &Path, journal: &mut Journal) -> Result<(), ReconcileError> {
    refuse_symlinked_dirs(slot, dir)?;
    let first_missing = (dir.ancestors())
        .take_while(|a| a.starts_with(slot) && *a != slot && !a.exists())
        .last();
    if let Some(first) = first_missing {
        fs::create_dir(first).map_err(io(first))?;
        journal.push(Undo::Tree(first.to_path_buf()));
        fs::create_dir_all(dir).map_err(io(dir))?;
    }
    Ok(())
}

/// Writes `file` into a slot being built in svkit's own temp dir: nothing
/// else looks there, so the file is made in place (no temp file + rename),
/// and nothing needs recording: the temp dir goes as a whole.
pub fn write_new(slot: &Path, file: &RenderedFile) -> Result<(), ReconcileError> {
    let path = slot.join(&file.path);
    if let Some(parent) = path.parent() {
        refuse_symlinked_dirs(slot, parent)?;
        fs::create_dir_all(parent).map_err(io(parent))?;
    }
    fault::check("write-new").map_err(io(&path))?;
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

/// Removes a managed file no longer rendered; it goes to `journal`.
pub fn remove_file(slot: &Path, rel: &Path, journal: &mut Journal) -> Result<(), ReconcileError> {
    let path = slot.join(rel);
    let prev = Prev::read(&path)?;
    fault::check("remove-file").map_err(io(&path))?;
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(&path)(e)),
    }
    journal.push(Undo::File { path, prev });
    Ok(())
}

/// What writing `changed` and removing `removed` in a live `slot` could
/// run into, found without writing: a symlink where a dir of the slot
/// must be, or a dir that takes no new entries (the slot's own, or the
/// nearest one that exists).
pub fn check_slot_writes<'a>(
    slot: &Path,
    rels: impl IntoIterator<Item = &'a Path>,
) -> Result<(), ReconcileError> {
    let mut checked: Vec<PathBuf> = Vec::new();
    for rel in rels {
        let parent = slot.join(rel);
        let parent = parent.parent().unwrap_or(slot);
        refuse_symlinked_dirs(slot, parent)?;
        let mut dir = parent.to_path_buf();
        while !dir.is_dir() && dir != slot {
            dir.pop();
        }
        if checked.contains(&dir) {
            continue;
        }
        writable(&dir).map_err(|e| io(&dir)(e.into()))?;
        checked.push(dir);
    }
    Ok(())
}

/// Whether this process may make entries in `dir`, as the kernel judges a
/// write there now: a read-only mount (EROFS), an immutable dir (EPERM),
/// permissions when not root (EACCES).
pub fn writable(dir: &Path) -> Result<(), nix::errno::Errno> {
    use rustix::fs::{Access, AtFlags, CWD};
    rustix::fs::accessat(
        CWD,
        dir,
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    )
    .map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error()))
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
pub fn prepare_supervise(
    slot: &Path,
    sub: &str,
    owner: UidGid,
    journal: &mut Journal,
) -> Result<(), ReconcileError> {
    let base = slot.join(sub);
    let supervise = base.join("supervise");
    let control = supervise.join("control");
    if !supervise.exists() {
        fault::check("supervise").map_err(io(&supervise))?;
        fs::create_dir_all(&supervise).map_err(io(&supervise))?;
        journal.push(Undo::Tree(supervise.clone()));
        fs::set_permissions(&supervise, fs::Permissions::from_mode(0o755))
            .map_err(io(&supervise))?;
        nix::unistd::mkfifo(&control, Mode::from_bits_truncate(0o600))
            .map_err(|e| io(&control)(e.into()))?;
    }
    own(&supervise, owner, journal)?;
    if control.exists() {
        own(&control, owner, journal)?;
    }
    let event = base.join("event");
    if !event.exists() {
        fs::create_dir_all(&event).map_err(io(&event))?;
        journal.push(Undo::Tree(event.clone()));
        // What s6 itself uses for a group-accessible fifodir: setgid, sticky.
        fs::set_permissions(&event, fs::Permissions::from_mode(0o3730)).map_err(io(&event))?;
    }
    own(&event, (0, owner.1), journal)
}

/// lchown when the owner differs; the owner before goes to `journal`.
fn own(path: &Path, (uid, gid): UidGid, journal: &mut Journal) -> Result<(), ReconcileError> {
    let m = fs::symlink_metadata(path).map_err(io(path))?;
    if (m.uid(), m.gid()) == (uid, gid) {
        return Ok(());
    }
    fault::check("chown").map_err(io(path))?;
    std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(io(path))?;
    journal.push(Undo::Owner {
        path: path.to_path_buf(),
        uid: m.uid(),
        gid: m.gid(),
    });
    Ok(())
}

// Log dirs, owned by the slot's user before its logger starts: checked
// before an apply writes anything ([`check_log_dir`]), then made
// ([`ensure_log_dir`]), each step recorded so that a later failure can undo
// it.

/// `/a`, `/a/b`, `/a/b/c` for `/a/b/c`; `..` and relative parts are refused.
fn prefixes(dir: &Path) -> Result<Vec<PathBuf>, ReconcileError> {
    let mut cur = PathBuf::from("/");
    (dir.components().filter(|c| *c != Component::RootDir))
        .map(|c| match c {
            Component::Normal(n) => {
                cur.push(n);
                Ok(cur.clone())
            }
            _ => Err(ReconcileError::Symlink {
                path: dir.to_path_buf(),
            }),
        })
        .collect()
}

/// Longest name of one path component (Linux's NAME_MAX).
const NAME_MAX: usize = 255;

/// Everything [`ensure_log_dir`] could run into that can be known without writing:
/// a symlink or a non-directory in the path, a component name too long,
/// the parent of the first missing dir not writable, or an existing log
/// dir that must change owner and cannot be changed. The error names the
/// dir that would be made or changed and why, as mkdir or chown would.
pub(super) fn check_log_dir(dir: &Path, owner: Option<UidGid>) -> Result<(), ReconcileError> {
    let errno = |p: &Path, e: Errno| io(p)(std::io::Error::from(e));
    let mut parent = PathBuf::from("/");
    for p in prefixes(dir)? {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => return Err(ReconcileError::Symlink { path: p }),
            Ok(m) if !m.is_dir() => return Err(errno(&p, Errno::ENOTDIR)),
            Ok(_) => parent = p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Missing from here on: nothing below can be a symlink yet.
                let long = p.file_name().is_some_and(|n| n.len() > NAME_MAX);
                if long {
                    return Err(errno(&p, Errno::ENAMETOOLONG));
                }
                return writable(&parent).map_err(|e| errno(&p, e));
            }
            Err(e) => return Err(io(&p)(e)),
        }
    }
    // The whole path exists: only a change of owner would write.
    if let Some((uid, gid)) = owner {
        let m = fs::symlink_metadata(dir).map_err(io(dir))?;
        if (m.uid(), m.gid()) != (uid, gid) {
            writable(dir).map_err(|e| errno(dir, e))?;
        }
    }
    Ok(())
}

/// Creates `dir` and any missing parents, and makes `dir` itself the
/// owner's, 0750 when made: one chown, never recursive, none when it
/// already is. A parent made here is 0755 and stays the caller's (root's):
/// slots of different users share parents (`/data/logs`), and one user
/// owning it would lock the others out of their own log dirs. The walk goes from `/` through
/// directory descriptors opened with O_NOFOLLOW, and every create and
/// chown acts on the descriptor, not a path: a symlink anywhere is
/// refused, and one swapped in during the walk (the user owns some of
/// these dirs) cannot redirect the chown. `log/run` applies the same rule
/// when it starts. Each dir made and the owner changed go to `journal`.
pub(super) fn ensure_log_dir(
    dir: &Path,
    owner: Option<UidGid>,
    journal: &mut Journal,
) -> Result<(), ReconcileError> {
    let mut cur = open_dir(rustix::fs::CWD, Path::new("/"), Path::new("/"))?;
    let all = prefixes(dir)?;
    for (i, path) in all.iter().enumerate() {
        let name = Path::new(path.file_name().unwrap_or_default());
        let is_dir = i + 1 == all.len();
        let mode = rustix::fs::Mode::from_raw_mode(if is_dir { 0o750 } else { 0o755 });
        fault::check("log-mkdir").map_err(io(path))?;
        let made = match rustix::fs::mkdirat(&cur, name, mode) {
            Ok(()) => true,
            Err(rustix::io::Errno::EXIST) => false,
            Err(e) => return Err(io(path)(e.into())),
        };
        if made {
            journal.push(Undo::EmptyDir(path.clone()));
        }
        let next = open_dir(&cur, name, path)?;
        if made {
            // The umask must not decide the mode.
            rustix::fs::fchmod(&next, mode).map_err(|e| io(path)(e.into()))?;
            if let (Some(o), true) = (owner, is_dir) {
                fchown(&next, o, path)?;
            }
        }
        cur = next;
    }
    if let Some((uid, gid)) = owner {
        let st = rustix::fs::fstat(&cur).map_err(|e| io(dir)(e.into()))?;
        if (st.st_uid, st.st_gid) != (uid, gid) {
            fchown(&cur, (uid, gid), dir)?;
            journal.push(Undo::Owner {
                path: dir.to_path_buf(),
                uid: st.st_uid,
                gid: st.st_gid,
            });
        }
    }
    Ok(())
}

/// The dir `name` of `parent`, opened without following a symlink.
fn open_dir(parent: impl AsFd, name: &Path, path: &Path) -> Result<OwnedFd, ReconcileError> {
    use rustix::fs::OFlags;
    let walk = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(parent, name, walk, rustix::fs::Mode::empty()) {
        Ok(fd) => Ok(fd),
        // O_NOFOLLOW with O_DIRECTORY fails on a symlink with ENOTDIR
        // (ELOOP without O_DIRECTORY).
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)
            if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            Err(ReconcileError::Symlink {
                path: path.to_path_buf(),
            })
        }
        Err(e) => Err(io(path)(e.into())),
    }
}

fn fchown(fd: &OwnedFd, (uid, gid): UidGid, path: &Path) -> Result<(), ReconcileError> {
    fault::check("log-chown").map_err(io(path))?;
    std::os::unix::fs::fchown(fd, Some(uid), Some(gid)).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_file_replaces_atomically_with_mode() {
        let t = tempfile::tempdir().expect("tempdir");
        let f = RenderedFile {
            path: "log/run".into(),
            contents: b"#!/bin/sh\n".to_vec(),
            mode: 0o755,
        };
        write_file(t.path(), &f, &mut Journal::default()).expect("write");
        let m = fs::metadata(t.path().join("log/run")).expect("meta");
        assert_eq!(m.permissions().mode() & 0o7777, 0o755);
        let names: Vec<_> = fs::read_dir(t.path().join("log"))
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    fn ensure_new(dir: &Path, owner: Option<UidGid>) -> Result<(), ReconcileError> {
        ensure_log_dir(dir, owner, &mut Journal::default())
    }

    #[test]
    fn log_dir_created_and_planted_symlink_refused() {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("a/b/c");
        ensure_new(&dir, None).expect("create");
        assert!(dir.is_dir());
        ensure_new(&dir, None).expect("idempotent");
        let target = t.path().join("elsewhere");
        fs::create_dir(&target).expect("mkdir");
        let link = t.path().join("a/link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).expect("lchown");
            let r = ensure_new(&link.join("logs"), Some((65534, 65534)));
            assert!(matches!(r, Err(ReconcileError::Symlink { .. })), "{r:?}");
            assert!(!target.join("logs").exists());
        }
        // The final component itself a symlink: refused whoever owns it.
        assert!(matches!(
            ensure_new(&link, None),
            Err(ReconcileError::Symlink { .. })
        ));
        assert!(matches!(
            check_log_dir(&link.join("x"), None),
            Err(ReconcileError::Symlink { .. })
        ));
    }

    /// What `check` refuses, the walk would have failed on: a file in the
    /// path, a name too long, a parent where nothing can be created.
    #[test]
    fn check_finds_what_mkdir_would_refuse() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::write(t.path().join("file"), "").expect("write");
        let why = |dir: &Path| match check_log_dir(dir, None) {
            Err(e) => e.to_string(),
            Ok(()) => String::new(),
        };
        let under_file = t.path().join("file/logs");
        assert!(why(&under_file).ends_with("file: Not a directory"));
        let long = t.path().join("x".repeat(256));
        assert!(why(&long).ends_with("File name too long"));
        assert_eq!(why(&t.path().join("new/deeper")), "");
        // /proc takes no new dirs, yet says it is writable: only the walk
        // finds out (and apply undoes what came before).
        assert!(ensure_new(Path::new("/proc/svkit-test/x"), None).is_err());
    }

    /// Parents made for a slot's user stay root's, 0755: another user's
    /// log dir under the same parent must stay reachable. Only the log
    /// dir itself is the user's, 0750.
    #[test]
    fn made_parents_are_roots_and_the_log_dir_the_users() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        ensure_new(&t.path().join("logs/x/a"), Some((65534, 65534))).expect("ensure");
        ensure_new(&t.path().join("logs/x/b"), Some((65533, 65533))).expect("ensure");
        let meta = |rel: &str| {
            let m = fs::metadata(t.path().join(rel)).expect("stat");
            (m.uid(), m.gid(), m.mode() & 0o7777)
        };
        assert_eq!(meta("logs"), (0, 0, 0o755));
        assert_eq!(meta("logs/x"), (0, 0, 0o755));
        assert_eq!(meta("logs/x/a"), (65534, 65534, 0o750));
        assert_eq!(meta("logs/x/b"), (65533, 65533, 0o750));
    }

    #[test]
    fn ensure_records_what_it_made_and_rollback_removes_it() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::create_dir(t.path().join("a")).expect("mkdir");
        let mut j = Journal::default();
        ensure_log_dir(&t.path().join("a/b/c"), None, &mut j).expect("ensure");
        fs::write(t.path().join("a/keep"), "").expect("write");
        assert!(j.rollback().is_empty());
        assert!(!t.path().join("a/b").exists());
        assert!(t.path().join("a/keep").exists(), "only what it made goes");
    }
}
