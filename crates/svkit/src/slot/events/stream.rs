//! The event loop: one poll(2) over the subscriptions, a signalfd, an
//! inotify fd and the output's hangup; it sleeps until one of them has
//! something, and never wakes otherwise. The inotify fd watches the
//! scandir (slots that appear or leave) and each followed slot's dir for
//! the log watcher's records ([`crate::slot::end::LOG_FAULT_FILE`]), so a
//! slot whose output stops (or starts again) getting through its logger
//! is reported when `svkit log-watch` records it.

use std::collections::BTreeMap;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::SystemTime;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

use super::{judge, Event, EventsError, What};
use crate::msg::strerror;
use crate::s6::fifo::Subscription;
use crate::s6::status::read_slot;
use crate::slot::end::{self, LOG_FAULT_FILE};
use crate::slot::health;
use crate::slot::owner::is_ours;
use crate::slot::snapshot::Slots;

/// Which slots to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// These slots, from the start, and again whenever one reappears.
    Named(Vec<String>),
    /// Every svkit slot in the scandir, and those that appear later.
    Ours,
}

/// Where events go.
pub trait Sink {
    /// Reports one event; false when its reader went away (the stream ends).
    fn event(&mut self, e: &Event) -> bool;
    /// A slot that cannot be followed, and why; the stream goes on.
    fn warn(&mut self, msg: &str) {
        crate::msg::warn(msg);
    }
}

/// Why the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT, SIGTERM or SIGHUP (its number).
    Signal(i32),
    /// The sink said so, or the output hung up (its reader went away).
    OutputClosed,
}

fn sys<E: Into<io::Error>>(what: &'static str) -> impl Fn(E) -> EventsError {
    move |e| EventsError::System {
        what,
        source: e.into(),
    }
}

/// Unblocks the stop signals again when the stream ends.
struct Mask(SigSet);

impl Drop for Mask {
    fn drop(&mut self) {
        let _ = self.0.thread_set_mask();
    }
}

const STOP_SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// A log fault record is written to a temp file and renamed, and removed.
const LOG_MASK: WatchFlags = WatchFlags::MOVED_TO
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::ONLYDIR);

/// Scandir entries that may add or remove a slot.
const SCAN_MASK: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::ONLYDIR);

struct Stream<'a> {
    slots: &'a Slots<'a>,
    scope: &'a Followed,
    subs: BTreeMap<String, Subscription>,
    /// None when inotify is not available: slots added later and log
    /// faults are then not reported (state changes still are).
    inotify: Option<OwnedFd>,
    /// The scandir's watch, when it could be made.
    scan: Option<i32>,
    /// The followed slots' watches, for their log fault records.
    logs: BTreeMap<i32, String>,
}

/// Follows the slots of `scope` in `slots.scandir` and reports each state
/// change to `sink` as it happens, until SIGINT, SIGTERM or SIGHUP, or
/// until the output goes away (`output` hangs up, or the sink says so).
/// Every FIFO it made is removed when it returns. A named slot that
/// cannot be subscribed to is an error before anything is reported.
///
/// The stop signals are blocked in the calling thread while it runs (read
/// from a signalfd): call it from a program's only thread.
pub fn follow(
    slots: &Slots<'_>,
    scope: &Followed,
    output: Option<BorrowedFd<'_>>,
    sink: &mut dyn Sink,
) -> Result<Stop, EventsError> {
    let set = SigSet::from_iter(STOP_SIGNALS);
    let old = set.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK);
    let _mask = Mask(old.map_err(sys("block signals"))?);
    let sigfd = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(sys("create a signalfd"))?;
    // The watch comes before the first listing: no slot made in between
    // is missed.
    let inotify = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK);
    let scan = match &inotify {
        Ok(fd) => inotify::add_watch(fd, slots.scandir, SCAN_MASK),
        Err(e) => Err(*e),
    };
    let mut s = Stream {
        slots,
        scope,
        subs: BTreeMap::new(),
        inotify: inotify.ok(),
        scan: scan.ok(),
        logs: BTreeMap::new(),
    };
    match scope {
        Followed::Named(names) => {
            for n in names {
                let sub = Subscription::new(&slots.scandir.join(n)).map_err(|e| {
                    EventsError::Subscribe {
                        slot: n.clone(),
                        source: e,
                    }
                })?;
                s.subs.insert(n.clone(), sub);
                s.watch_log(n);
            }
        }
        Followed::Ours => s.rescan(sink, false)?,
    }
    if let Err(e) = scan {
        sink.warn(&format!(
            "slots added to {} later are not followed: {}",
            slots.scandir.display(),
            strerror(&e.into())
        ));
    }
    s.run(&sigfd, output, sink)
}

impl Stream<'_> {
    /// Follows the log fault record of the slot `name` (a slot that
    /// cannot be watched is only not reported on).
    fn watch_log(&mut self, name: &str) {
        let dir = self.slots.scandir.join(name);
        if let Some(Ok(wd)) =
            (self.inotify.as_ref()).map(|fd| inotify::add_watch(fd, &dir, LOG_MASK))
        {
            self.logs.insert(wd, name.to_string());
        }
    }

    fn in_scope(&self, name: &str) -> bool {
        if name.starts_with('.') {
            return false;
        }
        let dir = self.slots.scandir.join(name);
        match self.scope {
            Followed::Named(names) => names.iter().any(|n| n == name) && dir.is_dir(),
            Followed::Ours => dir.is_dir() && is_ours(&dir),
        }
    }

    /// Subscribes to every slot in scope not yet followed; with `report`,
    /// says so with an `added` event.
    fn rescan(&mut self, sink: &mut dyn Sink, report: bool) -> Result<(), EventsError> {
        let scandir = self.slots.scandir;
        let names = crate::s6::services(scandir).map_err(|e| EventsError::Scandir {
            path: scandir.to_path_buf(),
            source: e,
        })?;
        for n in names {
            if !self.subs.contains_key(&n) && self.in_scope(&n) {
                self.add(&n, sink, report);
            }
        }
        Ok(())
    }

    fn add(&mut self, name: &str, sink: &mut dyn Sink, report: bool) -> bool {
        let dir = self.slots.scandir.join(name);
        match Subscription::new(&dir) {
            Ok(sub) => {
                self.subs.insert(name.to_string(), sub);
                self.watch_log(name);
                !report || sink.event(&self.event(name, What::Added))
            }
            Err(e) => {
                sink.warn(&format!(
                    "not following {name}: unable to subscribe to its events: {}",
                    strerror(&e)
                ));
                true
            }
        }
    }

    /// The event (not one of s6's bytes), with the slot's status as it is
    /// now.
    fn event(&self, name: &str, what: What) -> Event {
        let dir = self.slots.dir(name);
        let status = (what != What::Removed)
            .then(|| read_slot(&dir).ok())
            .flatten();
        let done = (status.as_ref()).is_some_and(|st| health::done(st, end::read(&dir).as_ref()));
        Event {
            time: SystemTime::now(),
            slot: name.to_string(),
            what,
            s6: None,
            deaths: (status.as_ref()).map(|st| self.slots.deaths(name, st, done)),
            status,
            why: None,
        }
    }

    /// What each byte from s6-supervise means, judged on the status read
    /// right after it (one read for a batch: `dD` and `OD` come together).
    fn on_bytes(&self, name: &str, bytes: &[u8], sink: &mut dyn Sink) -> bool {
        let dir = self.slots.scandir.join(name);
        let mut st = read_slot(&dir).ok();
        let now = SystemTime::now();
        let v = self.slots.verdict(name, st.as_mut(), now);
        for &b in bytes {
            let Some(what) = judge(b, st.as_ref(), &v) else {
                continue;
            };
            let e = Event {
                time: now,
                slot: name.to_string(),
                what,
                s6: Some(b),
                deaths: st.as_ref().map(|_| v.deaths),
                status: st.clone(),
                why: (what == What::Failed).then(|| v.why.clone()).flatten(),
            };
            if !sink.event(&e) {
                return false;
            }
        }
        true
    }

    /// Log fault records that changed (`log-failing` with the record's
    /// words, or `log-ok`), then scandir changes: slots in scope that
    /// appeared, followed slots that left. Returns false when the sink's
    /// reader went away.
    fn on_inotify(&mut self, sink: &mut dyn Sink) -> Result<bool, EventsError> {
        let Some(fd) = &self.inotify else {
            return Ok(true);
        };
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        let (mut added, mut removed, mut faults) = (Vec::new(), Vec::new(), Vec::new());
        let mut overflow = false;
        loop {
            let ev = match reader.next() {
                Ok(ev) => ev,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(sys("read inotify events")(e)),
            };
            let flags = ev.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                overflow = true;
                continue;
            }
            if Some(ev.wd()) != self.scan {
                if flags.contains(ReadFlags::IGNORED) {
                    self.logs.remove(&ev.wd());
                }
                let record = ev
                    .file_name()
                    .is_some_and(|n| n.to_bytes() == LOG_FAULT_FILE.as_bytes());
                if let Some(name) = self
                    .logs
                    .get(&ev.wd())
                    .filter(|n| record && !faults.contains(*n))
                {
                    faults.push(name.clone());
                }
                continue;
            }
            let Some(name) = ev.file_name().and_then(|n| n.to_str().ok()) else {
                continue;
            };
            if flags.intersects(ReadFlags::MOVED_FROM | ReadFlags::DELETE) {
                removed.push(name.to_string());
            } else if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                added.push(name.to_string());
            }
        }
        for name in faults {
            let record = self.slots.scandir.join(&name).join(LOG_FAULT_FILE);
            let line = (std::fs::read_to_string(record).ok())
                .map(|t| t.lines().next().unwrap_or_default().to_string());
            let mut e = self.event(&name, What::LogOk);
            if line.is_some() {
                (e.what, e.why) = (What::LogFailing, line);
            }
            if !sink.event(&e) {
                return Ok(false);
            }
        }
        for n in removed {
            if self.subs.remove(&n).is_some() && !sink.event(&self.event(&n, What::Removed)) {
                return Ok(false);
            }
        }
        if overflow && self.scan.is_some() {
            self.subs
                .retain(|n, _| self.slots.scandir.join(n).join("event").is_dir());
            self.rescan(sink, true)?;
        }
        for n in added {
            if !self.subs.contains_key(&n) && self.in_scope(&n) && !self.add(&n, sink, true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn run(
        &mut self,
        sigfd: &SignalFd,
        mut output: Option<BorrowedFd<'_>>,
        sink: &mut dyn Sink,
    ) -> Result<Stop, EventsError> {
        loop {
            let names: Vec<String> = self.subs.keys().cloned().collect();
            let revents = {
                let pollin = |fd| PollFd::new(fd, PollFlags::POLLIN);
                let mut fds = vec![pollin(sigfd.as_fd())];
                fds.extend(self.inotify.as_ref().map(|fd| pollin(fd.as_fd())));
                // No events asked of the output: only its hangup or error wakes us.
                fds.extend(output.map(|fd| PollFd::new(fd, PollFlags::empty())));
                fds.extend(self.subs.values().map(|sub| pollin(sub.fd())));
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => return Err(sys("poll")(e)),
                }
                fds.iter()
                    .map(|f| f.revents().unwrap_or(PollFlags::empty()))
                    .collect::<Vec<_>>()
            };
            let mut it = revents.into_iter();
            if it.next().is_some_and(|r| !r.is_empty()) {
                if let Ok(Some(si)) = sigfd.read_signal() {
                    return Ok(Stop::Signal(si.ssi_signo as i32));
                }
            }
            let inotify_ready = self.inotify.is_some() && it.next().is_some_and(|r| !r.is_empty());
            if output.is_some() {
                let r = it.next().unwrap_or(PollFlags::empty());
                if r.contains(PollFlags::POLLNVAL) {
                    output = None;
                } else if r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP) {
                    return Ok(Stop::OutputClosed);
                }
            }
            for (name, _) in names.iter().zip(it).filter(|(_, r)| !r.is_empty()) {
                let mut bytes = Vec::new();
                let Some(read) = self.subs.get_mut(name).map(|sub| sub.read(&mut bytes)) else {
                    continue;
                };
                if let Err(e) = read {
                    sink.warn(&format!("no longer following {name}: {}", strerror(&e)));
                    self.subs.remove(name);
                    continue;
                }
                if !self.on_bytes(name, &bytes, sink) {
                    return Ok(Stop::OutputClosed);
                }
            }
            if inotify_ready && !self.on_inotify(sink)? {
                return Ok(Stop::OutputClosed);
            }
        }
    }
}
