//! The filesystem steps of reconcile inside the scandir, each safe against
//! planted symlinks and each recorded in a [`Journal`] so that it can be
//! undone: atomic file replacement, and the supervisor dirs a non-root
//! user can drive. Log dirs are `logdir.rs`'s.

use super::error::{io, ReconcileError};
use super::journal::{fault, Journal, Prev, Undo};
use crate::render::RenderedFile;
use nix::sys::stat::Mode;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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
}
