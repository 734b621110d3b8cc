//! What is on disk now: the slots in the scandir and the files svkit
//! manages inside each (everything but the supervisor's own `supervise/`
//! and `event/` dirs).
//!
//! A slot is scanned through directory descriptors (names relative to the
//! dir just opened, one `fstatat` per entry), and a file's bytes are read
//! only when its size, mode and owner already match what is rendered: any
//! of those differing is a change without looking further.

use super::dirfd::DirFd;
use super::error::{io, ReconcileError};
use super::record::Stamp;
use super::DesiredSlot;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use std::collections::BTreeMap;
use std::ffi::{CStr, OsStr};
use std::fs;
use std::io::Read;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The marker that says svkit made a slot.
pub const MARKER: &str = ".svkit";

/// Root owns every file svkit renders into a slot.
pub const OWNER_UID: u32 = 0;

/// A live file as reconcile compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// The contents (a symlink's target), or `None` when they were not read
    /// because the file already differs from what is rendered (size, mode,
    /// owner) or is not rendered at all.
    pub bytes: Option<Vec<u8>>,
    /// Permission bits; [`SYMLINK_MODE`] for a symlink, so it never matches.
    pub mode: u32,
    pub uid: u32,
}

/// The mode a scan gives a symlink: no rendered file has it.
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

/// One live slot as a scan saw it.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every managed file, keyed by path relative to the slot.
    pub files: BTreeMap<PathBuf, LiveFile>,
    /// Every dir walked and every regular file seen, as stat'ed before it
    /// was listed or read ("" is the slot dir itself).
    pub stamps: Vec<(PathBuf, Stamp)>,
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

pub fn supervisor_owned(rel: &Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
    match parts.as_slice() {
        [first, ..] if *first == "supervise" || *first == "event" => true,
        [log, second, ..] if *log == "log" && (*second == "supervise" || *second == "event") => {
            true
        }
        _ => false,
    }
}

/// `lstat` of `rel` relative to the directory `dir`.
pub fn lstat_at(dir: RawFd, rel: &Path) -> nix::Result<FileStat> {
    fstatat(Some(dir), rel, AtFlags::AT_SYMLINK_NOFOLLOW)
}

pub fn file_kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT
}

/// Scans slot `slot.name` of the scandir open as `scandir_fd` (`scandir`
/// names it in errors). Symlinks count as files (with their target as
/// bytes) so a planted one always differs from what svkit renders.
pub fn scan(
    scandir: &Path,
    scandir_fd: RawFd,
    slot: &DesiredSlot,
    uid_matters: bool,
) -> Result<Scan, ReconcileError> {
    let mut walker = Walker {
        base: scandir.join(&slot.name),
        slot,
        uid_matters,
        out: Scan::default(),
    };
    walker.walk(scandir_fd, Path::new(&slot.name), Path::new(""))?;
    Ok(walker.out)
}

struct Walker<'a> {
    /// The slot dir, for error messages.
    base: PathBuf,
    slot: &'a DesiredSlot,
    uid_matters: bool,
    out: Scan,
}

impl Walker<'_> {
    fn err(&self, rel: &Path) -> impl FnOnce(nix::errno::Errno) -> ReconcileError {
        let path = self.base.join(rel);
        move |e| io(path)(e.into())
    }

    /// Walks the dir `name` (relative to `parent`), which is `rel` in the slot.
    fn walk(&mut self, parent: RawFd, name: &Path, rel: &Path) -> Result<(), ReconcileError> {
        // The slot itself is followed if a symlink, as s6-svscan does; a
        // dir inside it was just seen by lstat to be a real one.
        let top = rel.as_os_str().is_empty();
        let mut dir = DirFd::open(parent, name, top).map_err(self.err(rel))?;
        let fd = dir.fd();
        // Stamped before listing: a later change to the listing shows.
        let st = fstat(fd).map_err(self.err(rel))?;
        self.out.stamps.push((rel.to_path_buf(), Stamp::of(&st)));
        for cname in dir.names().map_err(self.err(rel))? {
            let child = rel.join(OsStr::from_bytes(cname.to_bytes()));
            if !supervisor_owned(&child) {
                self.entry(fd, &cname, child)?;
            }
        }
        Ok(())
    }

    fn entry(&mut self, dir: RawFd, name: &CStr, rel: PathBuf) -> Result<(), ReconcileError> {
        let st = fstatat(Some(dir), name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(self.err(&rel))?;
        let kind = file_kind(&st);
        if kind == SFlag::S_IFDIR {
            let name = Path::new(OsStr::from_bytes(name.to_bytes()));
            return self.walk(dir, name, &rel);
        }
        let uid = st.st_uid;
        let live = if kind == SFlag::S_IFLNK {
            let target = nix::fcntl::readlinkat(Some(dir), name).map_err(self.err(&rel))?;
            LiveFile {
                bytes: Some(target.into_encoded_bytes()),
                mode: SYMLINK_MODE,
                uid,
            }
        } else if kind == SFlag::S_IFREG {
            self.out.stamps.push((rel.clone(), Stamp::of(&st)));
            let mode = st.st_mode & 0o7777;
            let bytes = if self.worth_reading(&rel, &st) {
                Some(self.read(dir, name, &rel, &st)?)
            } else {
                None
            };
            LiveFile { bytes, mode, uid }
        } else {
            // FIFOs, sockets, devices: never rendered, never managed.
            return Ok(());
        };
        self.out.files.insert(rel, live);
        Ok(())
    }

    /// Contents decide only when everything cheaper already matches.
    fn worth_reading(&self, rel: &Path, st: &FileStat) -> bool {
        self.slot.files.iter().any(|f| {
            f.rel == rel
                && u64::try_from(st.st_size).is_ok_and(|n| n == f.bytes.len() as u64)
                && st.st_mode & 0o7777 == f.mode
                && (!self.uid_matters || st.st_uid == OWNER_UID)
        })
    }

    fn read(
        &self,
        dir: RawFd,
        name: &CStr,
        rel: &Path,
        st: &FileStat,
    ) -> Result<Vec<u8>, ReconcileError> {
        // O_NONBLOCK: should a FIFO have been swapped in since the stat,
        // opening it must not hang.
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let raw =
            nix::fcntl::openat(Some(dir), name, flags, Mode::empty()).map_err(self.err(rel))?;
        // SAFETY: `raw` is a fresh descriptor from openat that nothing else
        // owns; the File closes it.
        let mut file = unsafe { fs::File::from_raw_fd(raw) };
        // One spare byte: a file grown since the stat still reads to EOF
        // in the same call and simply compares different.
        let cap = usize::try_from(st.st_size).unwrap_or(0).saturating_add(1);
        let mut bytes = Vec::with_capacity(cap);
        file.read_to_end(&mut bytes)
            .map_err(io(self.base.join(rel)))?;
        Ok(bytes)
    }
}
