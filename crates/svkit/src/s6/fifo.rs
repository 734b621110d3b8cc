//! One subscription to a slot's `event/` fifodir, made the way s6's own
//! `s6-ftrigrd` makes it (`ftrigio_add`): a FIFO `.ftrig1:@STAMP:XXXXXX`
//! (mode 0622 before the umask), opened for reading (non-blocking) and
//! for writing (so that the read end never sees EOF when s6-supervise
//! closes it), then renamed to `ftrig1:@STAMP:XXXXXX`: s6-supervise
//! writes only to names of exactly that shape (`ftrig1:@` and 39 bytes),
//! so it never sees the FIFO half made.
//!
//! The FIFO is removed when the subscription is dropped. One left behind
//! by a process killed with SIGKILL is removed by s6-supervise itself at
//! its next announcement (its open for writing fails with ENXIO: no
//! reader), as s6 does for its own subscribers.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::s6::tai64::Tai64N;

/// Names s6-supervise writes to begin with this.
pub const FIFO_PREFIX: &str = "ftrig1:@";

/// Tries at a free name before giving up (a name holds a nanosecond
/// stamp, the pid and a counter: a clash needs another process at the
/// same nanosecond).
const TRIES: u32 = 16;

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A FIFO in a slot's `event/`, read by this process.
#[derive(Debug)]
pub struct Subscription {
    /// `O_PATH` fd of `event/`: the FIFO is removed from the dir it was
    /// made in even after the slot dir was renamed (svkit's delete).
    dir: OwnedFd,
    name: String,
    /// Read end (non-blocking).
    rd: File,
    /// Held only so that the read end never sees EOF.
    _wr: File,
    path: PathBuf,
}

/// 6 characters that differ between processes and between calls, as
/// mkptemp's `XXXXXX` (hex digits: within its `[A-Za-z0-9]`). The stamp
/// before them carries the nanoseconds; a clash only costs a retry.
fn suffix() -> String {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mixed = std::process::id().wrapping_add(seq.wrapping_mul(0x9e37_79b9));
    format!("{:06x}", mixed & 0xff_ffff)
}

impl Subscription {
    /// Subscribes to the events of the slot at `slot_dir` (its `event/`
    /// must exist: s6-supervise makes it, and svkit's reconcile prepares
    /// it so that the slot's user may subscribe).
    pub fn new(slot_dir: &Path) -> io::Result<Subscription> {
        let event = slot_dir.join("event");
        // O_PATH: the fifodir is 3730 (no read for the group), which is
        // all an *at call needs.
        let dir = rustix::fs::open(
            &event,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        for _ in 0..TRIES {
            // s6 names it after the time of subscription (`timestamp()`).
            let now = Tai64N::from_wallclock(SystemTime::now());
            let stamp = now.map_or_else(|| format!("@{:024x}", 0), |t| t.to_string());
            let name = format!("ftrig1:{stamp}:{}", suffix());
            let tmp = format!(".{name}");
            match rustix::fs::mkfifoat(&dir, &tmp, Mode::from_bits_truncate(0o622)) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
            let (rd, _wr) = Self::open(&dir, &tmp, &name).inspect_err(|_| {
                let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
            })?;
            let path = event.join(&name);
            return Ok(Subscription {
                dir,
                name,
                rd,
                _wr,
                path,
            });
        }
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    }

    fn open(dir: &OwnedFd, tmp: &str, name: &str) -> io::Result<(File, File)> {
        let flags = OFlags::NONBLOCK | OFlags::CLOEXEC;
        let rd = rustix::fs::openat(dir, tmp, OFlags::RDONLY | flags, Mode::empty())?;
        let wr = rustix::fs::openat(dir, tmp, OFlags::WRONLY | flags, Mode::empty())?;
        rustix::fs::renameat(dir, tmp, dir, name)?;
        Ok((File::from(rd), File::from(wr)))
    }

    /// Appends every byte waiting in the FIFO to `out` (never blocks).
    pub fn read(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        // What was read before the FIFO ran dry stays in `out`.
        match self.rd.read_to_end(out) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            other => other.map(drop),
        }
    }

    /// The read end, to poll.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.rd.as_fd()
    }

    /// Where the FIFO was made (the slot dir may have moved since).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = rustix::fs::unlinkat(&self.dir, &self.name, AtFlags::empty());
    }
}

/// What s6's `ftrigw_notifyb_nosig` does: `byte` to every FIFO of
/// `fifodir` whose name starts `ftrig1:@` and is 39 bytes long, never
/// waiting (a FIFO whose reader is gone is skipped). How svkit announces
/// its own changes of a slot beside s6's (a job's runs). The FIFOs told.
pub fn notify(fifodir: &Path, byte: u8) -> usize {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(entries) = std::fs::read_dir(fifodir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.as_encoded_bytes();
        if !name.starts_with(FIFO_PREFIX.as_bytes()) || name.len() != 39 {
            continue;
        }
        let f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
            .open(e.path());
        if f.and_then(|mut f| f.write_all(&[byte])).is_ok() {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::FileTypeExt;

    use super::*;

    #[test]
    fn a_subscription_is_a_fifo_s6_writes_to_and_is_removed_on_drop() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::create_dir(t.path().join("event")).expect("mkdir");
        let mut a = Subscription::new(t.path()).expect("subscribe");
        let mut b = Subscription::new(t.path()).expect("subscribe again");
        assert_ne!(a.path(), b.path());
        let meta = fs::metadata(a.path()).expect("stat");
        assert!(meta.file_type().is_fifo());
        // Nothing half-made is left: only the two renamed FIFOs.
        assert_eq!(fs::read_dir(t.path().join("event")).expect("ls").count(), 2);
        assert_eq!(notify(&t.path().join("event"), b'd'), 2);
        assert_eq!(notify(&t.path().join("event"), b'D'), 2);
        let mut got = Vec::new();
        a.read(&mut got).expect("read");
        assert_eq!(got, b"dD");
        // Nothing waiting: returns at once.
        got.clear();
        a.read(&mut got).expect("read");
        assert!(got.is_empty());
        b.read(&mut got).expect("read");
        assert_eq!(got, b"dD");
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        drop(a);
        assert!(!pa.exists());
        // Removed from where it was made, even after the slot dir moved.
        let moved = t.path().with_extension("moved");
        fs::rename(t.path(), &moved).expect("mv");
        drop(b);
        assert!(!pb.exists());
        assert_eq!(fs::read_dir(moved.join("event")).expect("ls").count(), 0);
        fs::rename(&moved, t.path()).expect("mv back");
    }

    #[test]
    fn no_fifodir_is_an_error() {
        let t = tempfile::tempdir().expect("tempdir");
        let e = Subscription::new(t.path()).expect_err("no event/");
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
