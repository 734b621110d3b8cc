//! The undo log of an apply: every write it makes is recorded the moment
//! it is made, so a step that fails later can be undone, last step first.
//! An apply only tells s6 anything once every write has succeeded: until
//! then, undoing the writes leaves the scandir and log dirs as they were.

use super::error::{io, ReconcileError};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One write, and how to undo it.
#[derive(Debug)]
pub(super) enum Undo {
    /// A dir this apply made inside the scandir (a new slot's temp dir, a
    /// new slot renamed into place, `log/` or `supervise/` of a live slot):
    /// removed with everything in it.
    Tree(PathBuf),
    /// A log dir, or a parent of one, this apply made: removed while
    /// empty, never recursively (it is outside the scandir).
    EmptyDir(PathBuf),
    /// A file this apply replaced or removed: put back as it was.
    File { path: PathBuf, prev: Prev },
    /// An owner this apply changed: put back, never through a symlink.
    Owner { path: PathBuf, uid: u32, gid: u32 },
}

/// What was at a path before an apply wrote there.
#[derive(Debug)]
pub(super) enum Prev {
    /// Nothing (or nothing svkit would put back: a FIFO, a device).
    Absent,
    File {
        bytes: Vec<u8>,
        mode: u32,
        uid: u32,
        gid: u32,
    },
    Symlink(PathBuf),
}

impl Prev {
    /// What is at `path` now, read without following a symlink and
    /// without blocking on a FIFO.
    pub(super) fn read(path: &Path) -> Result<Prev, ReconcileError> {
        let meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Prev::Absent),
            Err(e) => return Err(io(path)(e)),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Ok(Prev::Symlink(fs::read_link(path).map_err(io(path))?));
        }
        if !ft.is_file() {
            return Ok(Prev::Absent);
        }
        Ok(Prev::File {
            bytes: super::plan::read(path).map_err(io(path))?,
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        })
    }
}

/// The writes of one slot (or of one apply), in the order they were made.
#[derive(Debug, Default)]
pub(super) struct Journal {
    undo: Vec<Undo>,
}

impl Journal {
    pub(super) fn push(&mut self, u: Undo) {
        self.undo.push(u);
    }

    /// Undoes every write, last first, going on past a failure: what could
    /// not be undone is returned, each with why.
    pub(super) fn rollback(self) -> Vec<ReconcileError> {
        let mut failed = Vec::new();
        for u in self.undo.into_iter().rev() {
            if let Err(e) = undo(u) {
                failed.push(e);
            }
        }
        failed
    }
}

fn undo(u: Undo) -> Result<(), ReconcileError> {
    // Gone already is undone.
    let removed = |r: std::io::Result<()>, p: &Path| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(p)(e)),
        _ => Ok(()),
    };
    match u {
        Undo::Tree(p) => removed(fs::remove_dir_all(&p), &p),
        Undo::EmptyDir(p) => removed(fs::remove_dir(&p), &p),
        Undo::Owner { path, uid, gid } => {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid)).map_err(io(&path))
        }
        Undo::File { path, prev } => match prev {
            Prev::Absent => removed(fs::remove_file(&path), &path),
            Prev::Symlink(target) => {
                removed(fs::remove_file(&path), &path)?;
                std::os::unix::fs::symlink(&target, &path).map_err(io(&path))
            }
            Prev::File {
                bytes,
                mode,
                uid,
                gid,
            } => {
                let owner = nix::unistd::geteuid().is_root().then_some((uid, gid));
                crate::fsutil::write_atomic(&path, &bytes, mode, owner).map_err(io(&path))
            }
        },
    }
}

/// Failure injection for the unit tests of rollback: each write that can
/// fail mid-way first calls [`fault::check`] with its name; a test arms
/// one name to fail on its Nth call. Outside `cargo test` of this crate
/// the check is a no-op, compiled away.
pub(super) mod fault {
    #[cfg(test)]
    use std::cell::{Cell, RefCell};
    #[cfg(test)]
    use std::collections::BTreeMap;

    #[cfg(test)]
    thread_local! {
        static ARMED: Cell<Option<(&'static str, u32)>> = const { Cell::new(None) };
        static CALLS: RefCell<BTreeMap<&'static str, u32>> = const { RefCell::new(BTreeMap::new()) };
    }

    /// Makes the `nth` (1-based) later [`check`] of `point` on this thread
    /// fail with EIO, and starts counting calls afresh.
    #[cfg(test)]
    pub(in crate::reconcile) fn arm(point: &'static str, nth: u32) {
        ARMED.with(|a| a.set(Some((point, nth))));
        CALLS.with(|c| c.borrow_mut().clear());
    }

    /// Whether the armed failure is still to come.
    #[cfg(test)]
    pub(in crate::reconcile) fn armed() -> bool {
        ARMED.with(|a| a.take().is_some())
    }

    /// How many times each point was reached since the last [`arm`].
    #[cfg(test)]
    pub(in crate::reconcile) fn calls() -> BTreeMap<&'static str, u32> {
        CALLS.with(|c| c.borrow().clone())
    }

    #[cfg(test)]
    pub(in crate::reconcile) fn check(point: &'static str) -> std::io::Result<()> {
        CALLS.with(|c| *c.borrow_mut().entry(point).or_default() += 1);
        ARMED.with(|a| match a.get() {
            Some((p, 1)) if p == point => {
                a.set(None);
                Err(std::io::Error::from_raw_os_error(nix::libc::EIO))
            }
            Some((p, n)) if p == point => {
                a.set(Some((p, n - 1)));
                Ok(())
            }
            _ => Ok(()),
        })
    }

    #[cfg(not(test))]
    #[inline(always)]
    pub(in crate::reconcile) fn check(_point: &'static str) -> std::io::Result<()> {
        Ok(())
    }
}
