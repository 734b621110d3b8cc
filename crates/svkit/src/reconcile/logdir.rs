//! Log dirs, owned by the slot's user before its logger starts: checked
//! before an apply writes anything ([`check`]), then made ([`ensure`]),
//! each step recorded so that a later failure can undo it.

use super::error::{io, ReconcileError};
use super::fsops::{self, UidGid};
use super::journal::{fault, Journal, Undo};
use nix::errno::Errno;
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

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

/// Everything [`ensure`] could run into that can be known without writing:
/// a symlink or a non-directory in the path, a component name too long,
/// the parent of the first missing dir not writable, or an existing log
/// dir that must change owner and cannot be changed. The error names the
/// dir that would be made or changed and why, as mkdir or chown would.
pub(super) fn check(dir: &Path, owner: Option<UidGid>) -> Result<(), ReconcileError> {
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
                return fsops::writable(&parent).map_err(|e| errno(&p, e));
            }
            Err(e) => return Err(io(&p)(e)),
        }
    }
    // The whole path exists: only a change of owner would write.
    if let Some((uid, gid)) = owner {
        let m = fs::symlink_metadata(dir).map_err(io(dir))?;
        if (m.uid(), m.gid()) != (uid, gid) {
            fsops::writable(dir).map_err(|e| errno(dir, e))?;
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
pub(super) fn ensure(
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

    fn ensure_new(dir: &Path, owner: Option<UidGid>) -> Result<(), ReconcileError> {
        ensure(dir, owner, &mut Journal::default())
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
            check(&link.join("x"), None),
            Err(ReconcileError::Symlink { .. })
        ));
    }

    /// What `check` refuses, the walk would have failed on: a file in the
    /// path, a name too long, a parent where nothing can be created.
    #[test]
    fn check_finds_what_mkdir_would_refuse() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::write(t.path().join("file"), "").expect("write");
        let why = |dir: &Path| match check(dir, None) {
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
        ensure(&t.path().join("a/b/c"), None, &mut j).expect("ensure");
        fs::write(t.path().join("a/keep"), "").expect("write");
        assert!(j.rollback().is_empty());
        assert!(!t.path().join("a/b").exists());
        assert!(t.path().join("a/keep").exists(), "only what it made goes");
    }
}
