//! Bounded waits for slots, with svkit's rules on top of s6's states: a
//! slot that failed for good, or whose readiness check gave up, ends the
//! wait; ready includes output getting through.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::s6::status::{read_slot, Status};
use crate::slot::logger::Fault;
use crate::slot::wait::{self, Target, WaitEnd, Watched};

use super::{name_of, Error, Slots};

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

/// The longest pause of a wait for ready between looks at a slot that is
/// up and ready but whose output is not getting through.
const LOG_RECHECK: Duration = Duration::from_millis(200);

/// The watched slots whose logger is at fault (all of them must be fine;
/// with `any`, one fine slot is enough and nothing is reported).
fn log_faults(slots: &Slots, watched: &[Watched], any: bool) -> Vec<(String, Fault)> {
    let names: Vec<String> = watched.iter().map(|w| name_of(&w.dir)).collect();
    let mut faults: Vec<Option<Fault>> = names.iter().map(|n| slots.log_fault(n)).collect();
    slots.mark_stalled(names.iter().map(String::as_str).zip(faults.iter_mut()));
    if any && faults.iter().any(Option::is_none) {
        return Vec::new();
    }
    names
        .into_iter()
        .zip(faults)
        .filter_map(|(n, f)| f.map(|f| (n, f)))
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
) -> Result<Waited, Error> {
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
        outcome = wait::wait(watched, target, any, Some(left), &failed);
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
    let outcome = outcome.map_err(Error::Wait)?;
    Ok(match outcome {
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
                    .map(|st| slots.verdict(&slot, Some(&st), SystemTime::now()))
                    .and_then(|v| v.why);
                Waited::Failed { slot, why }
            }
        }
    })
}
