//! One reconcile at a time: an flock on `<scandir>/.svkit/lock`. A second
//! one waits, bounded, then fails with a message naming the lock.
//!
//! The caller takes it before reading anything it plans from (the config,
//! the registered instances, the scandir) and holds it until its writes are
//! done: read, plan and write are one step, so a concurrent `register` and
//! `apply` cannot each undo what the other just did.

use super::error::{io, ReconcileError};
use nix::fcntl::Flock;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

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
        match crate::fsutil::flock_within(file, timeout).map_err(io(&path))? {
            Some(lock) => Ok(ScandirLock {
                _lock: lock,
                scandir: scandir.to_path_buf(),
            }),
            None => {
                let waited_ms = start.elapsed().as_millis() as u64;
                Err(ReconcileError::Locked { path, waited_ms })
            }
        }
    }

    /// The scandir this lock holds.
    pub fn scandir(&self) -> &Path {
        &self.scandir
    }
}
