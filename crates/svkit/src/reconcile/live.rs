//! What is on disk now: the slots in the scandir and the files svkit
//! manages inside each (everything but the supervisor's own `supervise/`
//! and `event/` dirs, and the records written at run time: see `slot::end`).

use super::error::{io, ReconcileError};
use crate::slot::end::RUNTIME_FILES;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A live file as reconcile compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// The contents; a symlink's target.
    pub bytes: Vec<u8>,
    /// Permission bits; [`SYMLINK_MODE`] for a symlink, so it never matches.
    pub mode: u32,
    pub uid: u32,
}

/// The mode a symlink gets: no rendered file has it.
pub const SYMLINK_MODE: u32 = u32::MAX;

impl LiveFile {
    pub fn is_regular(&self) -> bool {
        self.mode != SYMLINK_MODE
    }
}

/// Files whose meaning is that they exist: s6-supervise only asks whether
/// `down` is there. svkit renders it empty and, like s6, compares only its
/// presence (as a regular file): what is in it, its mode and its owner
/// change nothing, so they are not a difference to put right.
pub fn presence_only(rel: &Path) -> bool {
    rel == Path::new("down")
}

fn supervisor_owned(rel: &Path) -> bool {
    let mut parts = rel.components().map(|c| c.as_os_str());
    let first = parts.next();
    let ours = |n: Option<&std::ffi::OsStr>| n.is_some_and(|n| n == "supervise" || n == "event");
    ours(first) || (first.is_some_and(|n| n == "log") && ours(parts.next()))
}

/// Every managed file of a live slot, keyed by path relative to it.
/// Symlinks count as files (with their target as bytes) so a planted one
/// always differs from what svkit renders and gets replaced. FIFOs,
/// sockets and devices are never rendered, so never managed.
pub fn read_files(slot: &Path) -> Result<BTreeMap<PathBuf, LiveFile>, ReconcileError> {
    let mut out = BTreeMap::new();
    walk(slot, Path::new(""), &mut out)?;
    Ok(out)
}

fn walk(
    root: &Path,
    rel: &Path,
    out: &mut BTreeMap<PathBuf, LiveFile>,
) -> Result<(), ReconcileError> {
    let dir = root.join(rel);
    for entry in fs::read_dir(&dir).map_err(io(&dir))? {
        let entry = entry.map_err(io(&dir))?;
        let child = rel.join(entry.file_name());
        if supervisor_owned(&child) || RUNTIME_FILES.iter().any(|f| child == Path::new(f)) {
            continue;
        }
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(io(&path))?;
        let ft = meta.file_type();
        let (bytes, mode) = if ft.is_dir() {
            walk(root, &child, out)?;
            continue;
        } else if ft.is_symlink() {
            let target = fs::read_link(&path).map_err(io(&path))?;
            (target.into_os_string().into_encoded_bytes(), SYMLINK_MODE)
        } else if ft.is_file() {
            (read(&path).map_err(io(&path))?, meta.mode() & 0o7777)
        } else {
            continue;
        };
        let uid = meta.uid();
        out.insert(child, LiveFile { bytes, mode, uid });
    }
    Ok(())
}

/// O_NONBLOCK: should a FIFO be swapped in since the lstat, opening it must
/// not hang; O_NOFOLLOW: nor may a symlink lead elsewhere.
pub(super) fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}
