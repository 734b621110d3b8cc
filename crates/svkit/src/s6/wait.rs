//! Waiting for slots to be up, ready or down, without busy polling: an
//! inotify watch on each slot dir and its `supervise/` (s6-supervise
//! replaces `supervise/status` by a rename on every change) wakes the
//! waiter; a slow backstop poll (2 wakeups a second, 5 without inotify)
//! covers what inotify cannot see, such as a supervisor dying.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::inotify::{self, CreateFlags, WatchFlags};

use super::health;
use super::status::{read_slot, supervisor_running, Status, StatusError};
use super::tai64::Tai64N;

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
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLIN)];
        let n = match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => return Ok(false),
            Err(e) => return Err(io::Error::from_raw_os_error(e as i32)),
        };
        if n == 0 {
            return Ok(false);
        }
        let mut buf = [0u8; 4096];
        loop {
            match self.fd.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Up,
    /// Up and ready; for a slot without readiness notification, up.
    Ready,
    Down,
    /// Finished: a clean exit kept down (a oneshot's completion).
    Done,
}

/// One slot to wait for.
#[derive(Debug, Clone)]
pub struct Watched {
    pub dir: PathBuf,
    /// The slot notifies readiness (`notification-fd`): `Ready` needs s6's
    /// ready flag, not just up.
    pub notifies: bool,
    /// Only a state entered after this stamp counts (e.g. the up/down stamp
    /// read before sending a restart): the old process being up is not it.
    pub after: Option<Tai64N>,
    /// A slot that is gone (or not supervised yet) is waited for too: a
    /// dependent's `run` at boot, before every supervisor is there.
    pub patient: bool,
}

impl Watched {
    pub fn new(dir: PathBuf) -> Watched {
        Watched {
            notifies: health::notifies(&dir),
            dir,
            after: None,
            patient: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Met,
    /// Slots not there yet when time ran out.
    Timeout {
        pending: Vec<PathBuf>,
    },
    /// Removed, or no supervisor runs on it.
    Gone(PathBuf),
    /// Stopped for good (as the caller's `failed` judges).
    Failed(PathBuf),
}

enum Eval {
    Met,
    Pending,
    Gone,
    Failed,
}

fn eval(
    w: &Watched,
    target: Target,
    failed: &dyn Fn(&Path, &Status) -> bool,
) -> Result<Eval, StatusError> {
    let gone = if w.patient { Eval::Pending } else { Eval::Gone };
    let st = match read_slot(&w.dir) {
        Ok(s) => s,
        Err(StatusError::NotSupervised { .. }) => return Ok(gone),
        Err(StatusError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(gone)
        }
        Err(e) => return Err(e),
    };
    if !supervisor_running(&w.dir)? {
        return Ok(gone);
    }
    let fresh = match w.after {
        Some(t) => st.raw.stamp > t,
        None => true,
    };
    // Up while its `run` waits for dependencies is not up yet.
    let started = || super::end::waiting_for(&w.dir, st.up).is_none();
    let met = match target {
        // Down once `finish` is done too: its verdict is in.
        Target::Down => !st.up && !st.finishing,
        Target::Up => st.up && fresh && started(),
        // A patient wait may have begun before the slot's dir was made:
        // whether it notifies is only known once it is there.
        Target::Ready => {
            let notifies = w.notifies || (w.patient && health::notifies(&w.dir));
            fresh && health::ready(&st, notifies) && started()
        }
        Target::Done => fresh && health::done(&st, super::end::read(&w.dir).as_ref()),
    };
    Ok(if met {
        Eval::Met
    } else if target != Target::Down && fresh && failed(&w.dir, &st) {
        Eval::Failed
    } else {
        Eval::Pending
    })
}

/// Waits until every slot (or, with `any`, one slot) reaches `target`.
/// A slot that is gone or failed ends the wait at once, unless `any` and
/// other slots may still get there. `timeout` None waits forever.
pub fn wait(
    slots: &[Watched],
    target: Target,
    any: bool,
    timeout: Option<Duration>,
    failed: &dyn Fn(&Path, &Status) -> bool,
) -> Result<Outcome, StatusError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    // Watches first, so nothing between the first read and the sleep is missed.
    let mut watch = Watch::new().ok();
    let mut watching_supervise = vec![false; slots.len()];
    let mut dropped: Option<Outcome> = None;
    let mut live: Vec<usize> = (0..slots.len()).collect();
    if let Some(w) = &watch {
        for s in slots {
            let _ = w.add(&s.dir, SLOT_MASK);
        }
    }
    loop {
        if let Some(w) = &watch {
            for (i, s) in slots.iter().enumerate() {
                if !watching_supervise[i] {
                    watching_supervise[i] = w.add(&s.dir.join("supervise"), SLOT_MASK).is_ok();
                }
            }
        }
        let mut pending = Vec::new();
        let mut still = Vec::new();
        for &i in &live {
            let s = &slots[i];
            match eval(s, target, failed)? {
                Eval::Met if any => return Ok(Outcome::Met),
                Eval::Met => {}
                Eval::Pending => {
                    pending.push(s.dir.clone());
                    still.push(i);
                }
                Eval::Gone if !any => return Ok(Outcome::Gone(s.dir.clone())),
                Eval::Failed if !any => return Ok(Outcome::Failed(s.dir.clone())),
                Eval::Gone => {
                    dropped.get_or_insert(Outcome::Gone(s.dir.clone()));
                }
                Eval::Failed => {
                    dropped.get_or_insert(Outcome::Failed(s.dir.clone()));
                }
            }
        }
        live = still;
        if pending.is_empty() {
            return Ok(dropped.filter(|_| any).unwrap_or(Outcome::Met));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(Outcome::Timeout { pending });
        }
        if nap(&mut watch, deadline).is_err() {
            // inotify broke: degrade to the plain poll.
            watch = None;
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

    #[test]
    fn a_missing_slot_is_gone_at_once() {
        let t = tempfile::tempdir().expect("tempdir");
        let s = Watched::new(t.path().join("nope"));
        let never = |_: &Path, _: &Status| false;
        let o = wait(&[s], Target::Up, false, None, &never).expect("wait");
        assert_eq!(o, Outcome::Gone(t.path().join("nope")));
    }
}
