//! Sleeping until a supervised dir changes, without busy polling: an
//! inotify watch on each slot dir and its `supervise/` (s6-supervise
//! replaces `supervise/status` by a rename on every change) wakes the
//! waiter; a slow backstop poll (2 wakeups a second, 5 without inotify)
//! covers what inotify cannot see, such as a supervisor dying. What a
//! waiter waits for is svkit's to say (`crate::slot::wait`).

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::inotify::{self, CreateFlags, WatchFlags};

/// Backstop period with inotify.
const BACKSTOP: Duration = Duration::from_millis(500);
/// Poll period when inotify is unavailable.
const POLL: Duration = Duration::from_millis(200);

/// An inotify instance; events only wake the waiter, their content is
/// drained and ignored (the caller re-reads the state it cares about).
pub struct Watch {
    fd: File,
}

/// Slot dir and `supervise/` events worth a re-read.
pub const SLOT_MASK: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::ATTRIB);

impl Watch {
    pub fn new() -> io::Result<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        Ok(Watch { fd: File::from(fd) })
    }

    /// Watches `path` for `mask` events (see `inotify(7)`).
    pub fn add(&self, path: &Path, mask: WatchFlags) -> io::Result<()> {
        inotify::add_watch(&self.fd, path, mask)?;
        Ok(())
    }

    /// Sleeps until an event or `timeout`; true when woken by an event.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<bool> {
        if !crate::sys::readable_within(self.fd.as_fd(), timeout)? {
            return Ok(false);
        }
        // Drained until it would block, never parsed.
        match io::copy(&mut self.fd, &mut io::sink()) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(true),
        }
    }
}

/// Sleeps until `watch` reports an event (bounded by the backstop), or a
/// poll period without inotify; never past `deadline`.
pub fn nap(watch: &mut Option<Watch>, deadline: Option<Instant>) -> io::Result<()> {
    let period = if watch.is_some() { BACKSTOP } else { POLL };
    let d = match deadline {
        Some(end) => end.saturating_duration_since(Instant::now()).min(period),
        None => period,
    };
    match watch {
        Some(w) => w.wait(d).map(|_| ()),
        None => {
            std::thread::sleep(d);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_wakes_on_a_change_and_times_out_otherwise() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut w = Watch::new().expect("inotify");
        w.add(t.path(), SLOT_MASK).expect("watch");
        assert!(!w.wait(Duration::from_millis(10)).expect("wait"));
        std::fs::write(t.path().join("status.new"), b"x").expect("write");
        std::fs::rename(t.path().join("status.new"), t.path().join("status")).expect("mv");
        assert!(w.wait(Duration::from_secs(5)).expect("wait"));
    }
}
