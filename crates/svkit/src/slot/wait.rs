//! Waiting for slots to be up, ready, down or done, as svkit judges them
//! ([`super::health`]), woken by [`crate::s6::wait`] rather than polling;
//! and bounded waits ([`wait_for`]) with svkit's rules on top of s6's
//! states: a slot that failed for good, or whose readiness check gave up,
//! ends the wait; ready includes output getting through.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::logger::Fault;
use super::snapshot::Slots;
use super::{end, health};
use crate::s6::status::{read_slot, supervisor_running, Status, StatusError};
use crate::s6::tai64::Tai64N;
use crate::s6::wait::{nap, Watch, SLOT_MASK};

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
pub enum WaitEnd {
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

/// Where one slot stands: None while pending, else `Met`, `Gone` or
/// `Failed`.
fn eval(
    w: &Watched,
    target: Target,
    failed: &dyn Fn(&Path, &Status) -> bool,
) -> Result<Option<WaitEnd>, StatusError> {
    let gone = (!w.patient).then(|| WaitEnd::Gone(w.dir.clone()));
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
    let fresh = w.after.is_none_or(|t| st.raw.stamp > t);
    // Up while its `run` waits for dependencies is not up yet.
    let started = || end::waiting_for(&w.dir, st.up).is_none();
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
        Target::Done => fresh && health::done(&st, end::read(&w.dir).as_ref()),
    };
    Ok(if met {
        Some(WaitEnd::Met)
    } else if target != Target::Down && fresh && failed(&w.dir, &st) {
        Some(WaitEnd::Failed(w.dir.clone()))
    } else {
        None
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
) -> Result<WaitEnd, StatusError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    // Watches first, so nothing between the first read and the sleep is missed.
    let mut watch = Watch::new().ok();
    let mut watching_supervise = vec![false; slots.len()];
    let mut dropped: Option<WaitEnd> = None;
    let mut pending: Vec<&Watched> = slots.iter().collect();
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
        let mut still = Vec::new();
        for s in pending {
            match eval(s, target, failed)? {
                None => still.push(s),
                Some(WaitEnd::Met) if !any => {}
                Some(end) if !any || end == WaitEnd::Met => return Ok(end),
                Some(end) => {
                    dropped.get_or_insert(end);
                }
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(dropped.unwrap_or(WaitEnd::Met));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let pending = pending.iter().map(|s| s.dir.clone()).collect();
            return Ok(WaitEnd::Timeout { pending });
        }
        if nap(&mut watch, deadline).is_err() {
            // inotify broke: degrade to the plain poll.
            watch = None;
        }
    }
}

/// The slot's name: its dir's last component.
pub use crate::s6::slot_name as name_of;

/// What a wait came to (with nothing to wait for: [`Waited::Met`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    Met,
    /// Slots not at `target` when `after` ran out.
    Timeout {
        pending: Vec<String>,
        target: Target,
        after: Duration,
    },
    /// Ready, but their output does not get through (their logger at
    /// fault) when `after` ran out.
    LogStuck {
        slots: Vec<(String, Fault)>,
        after: Duration,
    },
    /// Removed, or no supervisor runs on it.
    Gone(String),
    /// Its readiness check gave up (waiting for ready).
    GaveUp(String),
    /// Failed for good; why, when known.
    Failed {
        slot: String,
        why: Option<String>,
    },
}

impl Target {
    /// The state's word: `svctl wait WORD`.
    pub fn word(self) -> &'static str {
        match self {
            Target::Up => "up",
            Target::Ready => "ready",
            Target::Down => "down",
            Target::Done => "done",
        }
    }
}

impl Waited {
    /// What the wait came to, in the words of every view that waits
    /// (svctl, the HTTP endpoint, `svctl top`): one line per slot it
    /// names, none when met. Each view frames them its own way (a fatal
    /// line and an exit code, an HTTP status, a status line).
    pub fn lines(&self) -> Vec<String> {
        let ms = |d: &Duration| d.as_millis();
        match self {
            Waited::Met => Vec::new(),
            Waited::Timeout {
                pending,
                target,
                after,
            } => vec![format!(
                "timed out after {} ms waiting for {} to be {}",
                ms(after),
                pending.join(", "),
                target.word()
            )],
            Waited::LogStuck { slots, after } => (slots.iter())
                .map(|(n, f)| {
                    format!(
                        "timed out after {} ms waiting for {n} to be ready: {f}",
                        ms(after)
                    )
                })
                .collect(),
            Waited::Gone(n) => vec![format!(
                "unable to wait for {n}: no such slot or supervisor not running"
            )],
            Waited::GaveUp(n) => vec![format!(
                "{n} will not be ready: its readiness check gave up (readiness.check.timeout_ms); svctl restart {n} tries again"
            )],
            Waited::Failed { slot, why } => {
                let why = why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default();
                vec![format!(
                    "{slot} failed permanently{why}: see svctl status and svctl logs"
                )]
            }
        }
    }
}

/// The longest pause of a wait for ready between looks at a slot that is
/// up and ready but whose output is not getting through.
const LOG_RECHECK: Duration = Duration::from_millis(200);

/// The watched slots whose logger is at fault (all of them must be fine;
/// with `any`, one fine slot is enough and nothing is reported).
fn log_faults(slots: &Slots, watched: &[Watched], any: bool) -> Vec<(String, Fault)> {
    let names = watched.iter().map(|w| name_of(&w.dir));
    let mut faults: Vec<_> = names.map(|n| (slots.log_look(&n).0, n)).collect();
    slots.mark_stalled(faults.iter_mut().map(|(f, n)| (n.as_str(), f)));
    if any && faults.iter().any(|(f, _)| f.is_none()) {
        return Vec::new();
    }
    (faults.into_iter())
        .filter_map(|(f, n)| Some((n, f?)))
        .collect()
}

/// Waits (at most `timeout`) until every watched slot (with `any`: one)
/// reaches `target`.
pub fn wait_for(
    slots: &Slots,
    watched: &[Watched],
    target: Target,
    any: bool,
    timeout: Duration,
) -> Result<Waited, StatusError> {
    let overdue = |n: &str, st: &Status| {
        target == Target::Ready && slots.ready_overdue(n, st, SystemTime::now())
    };
    let failed = |dir: &Path, st: &Status| {
        let n = name_of(dir);
        slots.failed(&n, st) || overdue(&n, st)
    };
    let deadline = Instant::now() + timeout;
    let (mut outcome, mut stuck) = (Ok(WaitEnd::Met), Vec::new());
    let through = crate::clock::poll_by(deadline, LOG_RECHECK, || {
        let left = deadline.saturating_duration_since(Instant::now());
        outcome = wait(watched, target, any, Some(left), &failed);
        // Ready includes output getting through: a slot whose logger is
        // stuck is not ready yet (it may be once the disk has room), and
        // nothing signals that, so it is looked at again.
        stuck = match (&outcome, target) {
            (Ok(WaitEnd::Met), Target::Ready) => log_faults(slots, watched, any),
            _ => Vec::new(),
        };
        stuck.is_empty()
    });
    if !through {
        return Ok(Waited::LogStuck {
            slots: stuck,
            after: timeout,
        });
    }
    Ok(match outcome? {
        WaitEnd::Met => Waited::Met,
        WaitEnd::Timeout { pending } => Waited::Timeout {
            pending: pending.iter().map(|p| name_of(p)).collect(),
            target,
            after: timeout,
        },
        WaitEnd::Gone(dir) => Waited::Gone(name_of(&dir)),
        WaitEnd::Failed(dir) => {
            let slot = name_of(&dir);
            let st = read_slot(&dir).ok();
            if st.as_ref().is_some_and(|st| overdue(&slot, st)) {
                Waited::GaveUp(slot)
            } else {
                let why = st
                    .map(|mut st| slots.verdict(&slot, Some(&mut st), SystemTime::now()))
                    .and_then(|v| v.why);
                Waited::Failed { slot, why }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_slot_is_gone_at_once() {
        let t = tempfile::tempdir().expect("tempdir");
        let s = Watched::new(t.path().join("nope"));
        let never = |_: &Path, _: &Status| false;
        let o = wait(&[s], Target::Up, false, None, &never).expect("wait");
        assert_eq!(o, WaitEnd::Gone(t.path().join("nope")));
    }

    #[test]
    fn every_view_says_an_outcome_in_the_same_words() {
        let after = Duration::from_millis(300);
        let t = Waited::Timeout {
            pending: vec!["a".into(), "b".into()],
            target: Target::Ready,
            after,
        };
        assert_eq!(
            t.lines(),
            ["timed out after 300 ms waiting for a, b to be ready"]
        );
        let f = Waited::Failed {
            slot: "web".into(),
            why: Some("exited 78".into()),
        };
        assert_eq!(
            f.lines(),
            ["web failed permanently (exited 78): see svctl status and svctl logs"]
        );
        let stuck = Waited::LogStuck {
            slots: vec![("a".into(), Fault::Down), ("b".into(), Fault::Down)],
            after,
        };
        assert_eq!(stuck.lines().len(), 2);
        assert!(Waited::Met.lines().is_empty());
    }
}
