//! The log watcher's records ([`crate::slot::end::LOG_FAULT_FILE`]) as
//! events: one inotify watch on each followed slot's dir, so a slot whose
//! output stops (or starts again) getting through its logger is reported
//! when `svkit log-watch` records it, with no polling here.

use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

use crate::slot::end::LOG_FAULT_FILE;

/// The record is written to a temp file and renamed, and removed.
const MASK: WatchFlags = WatchFlags::MOVED_TO
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::ONLYDIR);

pub struct LogRecords {
    fd: OwnedFd,
    slots: BTreeMap<i32, String>,
}

impl LogRecords {
    pub fn new() -> std::io::Result<LogRecords> {
        Ok(LogRecords {
            fd: inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?,
            slots: BTreeMap::new(),
        })
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Follows the record of the slot `name` in `dir` (a slot that cannot
    /// be watched is only not reported on).
    pub fn add(&mut self, name: &str, dir: &Path) {
        if let Ok(wd) = inotify::add_watch(&self.fd, dir, MASK) {
            self.slots.insert(wd, name.to_string());
        }
    }

    /// The slots whose record changed since the last call, each with the
    /// record's line now (None: removed, the output gets through again).
    pub fn changed(&mut self, scandir: &Path) -> Vec<(String, Option<String>)> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        let mut names = Vec::new();
        loop {
            let ev = match reader.next() {
                Ok(ev) => ev,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            };
            if ev.events().contains(ReadFlags::IGNORED) {
                self.slots.remove(&ev.wd());
                continue;
            }
            let ours = ev
                .file_name()
                .is_some_and(|n| n.to_bytes() == LOG_FAULT_FILE.as_bytes());
            if let (true, Some(name)) = (ours, self.slots.get(&ev.wd())) {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        names
            .into_iter()
            .map(|n| {
                let line = std::fs::read_to_string(scandir.join(&n).join(LOG_FAULT_FILE))
                    .ok()
                    .map(|t| t.lines().next().unwrap_or_default().to_string());
                (n, line)
            })
            .collect()
    }
}
