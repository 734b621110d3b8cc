//! Reconcile: make the scandir match the rendered model. One algorithm, three
//! faces: `svctl plan` prints the plan, `svctl apply` and the boot hook
//! `svkit-reconcile` carry it out.
//!
//! Data flows one way, one file a step: [`prepare`] (`prepare.rs`: a
//! config the caller loaded, checked and rendered: one `RenderedSlot` per
//! slot) → [`plan`] (`plan.rs`,
//! reading the disk: each managed file's bytes, mode and owner against the
//! render) → [`apply`] (`apply.rs`, under the
//! [`ScandirLock`] here, by the tree's own user (`error.rs`'s
//! [`check_tree_user`]): check what would fail (`preflight.rs`, with
//! s6-svscan's service limit from `crate::capacity`), write what differs
//! through `fsops.rs`, each write recorded in `journal.rs`
//! to be undone if a later one fails, then tell s6). Nothing is cached
//! between runs. Slots svkit did not make (no `.svkit` marker) are never
//! touched.

mod apply;
mod error;
mod fsops;
mod journal;
mod plan;
mod preflight;
mod prepare;

pub use apply::{apply, ApplyOptions, ApplyReport, Scope};
pub use error::{check_tree_user, ReconcileError, SlotError};
pub use plan::{plan, Action, SlotPlan};
pub use preflight::{fits, lookup_user};
pub use prepare::{desired, prepare, Prepared};

use error::io;
use nix::fcntl::Flock;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Temp dirs for atomic creates: `.`-led so s6-svscan ignores them.
pub const TEMP_PREFIX: &str = ".svkit-tmp-";
/// Slots being deleted are first renamed out of s6-svscan's sight.
pub const DELETE_PREFIX: &str = ".svkit-del-";
/// The logger's script, in a slot dir: its `log/` is a service of its own.
const LOG_RUN: &str = "log/run";

/// One reconcile at a time: an flock on `<scandir>/.svkit/lock`. A second
/// one waits, bounded, then fails with a message naming the lock.
///
/// The caller takes it before reading anything it plans from (the config,
/// the registered instances, the scandir) and holds it until its writes are
/// done: read, plan and write are one step, so a concurrent `register` and
/// `apply` cannot each undo what the other just did.
pub struct ScandirLock {
    _lock: Flock<fs::File>,
    scandir: std::path::PathBuf,
}

impl ScandirLock {
    pub fn acquire(scandir: &Path, timeout: Duration) -> Result<ScandirLock, ReconcileError> {
        let dir = scandir.join(".svkit");
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join("lock");
        let start = Instant::now();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io(&path))?;
        let Some(lock) = crate::fsutil::flock_within(file, timeout).map_err(io(&path))? else {
            let waited_ms = start.elapsed().as_millis() as u64;
            return Err(ReconcileError::Locked { path, waited_ms });
        };
        let scandir = scandir.to_path_buf();
        Ok(ScandirLock {
            _lock: lock,
            scandir,
        })
    }

    /// The scandir this lock holds.
    pub fn scandir(&self) -> &Path {
        &self.scandir
    }
}
