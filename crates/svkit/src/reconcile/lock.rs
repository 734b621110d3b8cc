//! One reconcile at a time: an flock on `<scandir>/.svkit/lock`. A second
//! one waits, bounded, then fails with a message naming the lock.

use super::error::{io, ReconcileError};
use nix::fcntl::{Flock, FlockArg};
use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct ScandirLock {
    _lock: Flock<fs::File>,
}

impl ScandirLock {
    pub fn acquire(scandir: &Path, timeout: Duration) -> Result<ScandirLock, ReconcileError> {
        let dir = scandir.join(".svkit");
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join("lock");
        let file = open(&path, true).map_err(io(&path))?;
        wait(file, path, timeout)
    }

    /// As [`Self::acquire`], but `None` rather than creating anything when
    /// no apply ever made the lock file.
    pub fn acquire_existing(
        scandir: &Path,
        timeout: Duration,
    ) -> Result<Option<ScandirLock>, ReconcileError> {
        let path = scandir.join(".svkit").join("lock");
        match open(&path, false) {
            Ok(file) => wait(file, path, timeout).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }
}

fn open(path: &Path, create: bool) -> std::io::Result<fs::File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

fn wait(
    mut file: fs::File,
    path: PathBuf,
    timeout: Duration,
) -> Result<ScandirLock, ReconcileError> {
    let start = Instant::now();
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(ScandirLock { _lock: lock }),
            Err((f, nix::errno::Errno::EWOULDBLOCK)) => file = f,
            Err((_, e)) => return Err(io(&path)(e.into())),
        }
        if start.elapsed() >= timeout {
            let waited_ms = start.elapsed().as_millis() as u64;
            return Err(ReconcileError::Locked { path, waited_ms });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
