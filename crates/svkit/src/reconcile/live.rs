//! What is on disk now: the slots in the scandir and the files svkit
//! manages inside each (everything but the supervisor's own `supervise/`
//! and `event/` dirs).

use super::error::{io, ReconcileError};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The marker that says svkit made a slot.
pub const MARKER: &str = ".svkit";

/// A live file as reconcile compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    pub bytes: Vec<u8>,
    pub mode: u32,
    pub uid: u32,
}

pub fn is_ours(slot: &Path) -> bool {
    fs::symlink_metadata(slot.join(MARKER))
        .map(|m| m.file_type().is_file())
        .unwrap_or(false)
}

/// Visible slot names (s6-svscan ignores `.`-led names, so do we).
pub fn slot_names(scandir: &Path) -> Result<Vec<String>, ReconcileError> {
    let mut names = Vec::new();
    for entry in fs::read_dir(scandir).map_err(io(scandir))? {
        let entry = entry.map_err(io(scandir))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn supervisor_owned(rel: &Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
    match parts.as_slice() {
        [first, ..] if *first == "supervise" || *first == "event" => true,
        [log, second, ..] if *log == "log" && (*second == "supervise" || *second == "event") => {
            true
        }
        _ => false,
    }
}

/// Every managed file of a live slot, keyed by path relative to it.
/// Symlinks count as files (with their target as bytes) so a planted one
/// always differs from what svkit renders and gets replaced.
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
        let child_rel = rel.join(entry.file_name());
        if supervisor_owned(&child_rel) {
            continue;
        }
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(io(&path))?;
        let ft = meta.file_type();
        if ft.is_dir() {
            walk(root, &child_rel, out)?;
        } else if ft.is_symlink() {
            let target = fs::read_link(&path).map_err(io(&path))?;
            let bytes = target.into_os_string().into_encoded_bytes();
            out.insert(
                child_rel,
                LiveFile {
                    bytes,
                    mode: u32::MAX,
                    uid: meta.uid(),
                },
            );
        } else if ft.is_file() {
            let bytes = fs::read(&path).map_err(io(&path))?;
            let mode = meta.permissions().mode() & 0o7777;
            out.insert(
                child_rel,
                LiveFile {
                    bytes,
                    mode,
                    uid: meta.uid(),
                },
            );
        }
    }
    Ok(())
}
