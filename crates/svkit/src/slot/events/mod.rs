//! State changes of slots as they happen, from s6's own event FIFOs.
//!
//! s6-supervise announces every change of its service by writing one byte
//! to each FIFO named `ftrig1:@<tai64n>:XXXXXX` in the slot's `event/`
//! fifodir (s6's `ftrigw_notifyb_nosig`): `s` supervisor started, `u` up,
//! `U` ready, `d` down (the run process died; `./finish` runs), `D` really
//! down (`./finish` ended), `O` down for good (finish exited 125; always
//! followed by `D`), `x` supervisor exiting. A subscriber makes such a
//! FIFO itself, as s6-ftrigrd does ([`crate::s6::fifo`]), and sleeps in
//! poll(2) on it: no polling, no daemon, and no CPU while nothing happens.
//!
//! Each byte is then given meaning with the slot's status read natively
//! right after it ([`judge`]): a `d` carries the exit code or signal, a `D`
//! is `done`, `failed` (why), `stopped` or `restarting` as
//! [`super::health`] judges the slot. [`follow`] runs the whole stream,
//! also following slots that appear in or leave the scandir; each event is
//! one line, JSON ([`json_line`], schema in docs/svctl.md) or text
//! ([`text_line`]).

mod stream;

use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

pub use stream::{follow, Followed, Sink, Stop};

use serde_json::{json, Value};

use super::health::{kept_down, Verdict};
use super::status_fmt::{last_exit, updown};
use crate::clock::rfc3339_utc;
use crate::msg::strerror;
use crate::s6::status::{LastExit, Status};

/// What a subscriber reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// `s`: a supervisor started on the slot.
    Supervised,
    /// `u`: the run process was spawned.
    Up,
    /// `U`: the run process notified readiness.
    Ready,
    /// `d`: the run process died (exit code or signal in the status).
    Down,
    /// `D` after a clean exit the restart policy keeps down.
    Done,
    /// `D` after `finish` kept the slot down for good, saying why.
    Failed,
    /// `D` of a slot that stays down otherwise (a stop asked for).
    Stopped,
    /// `D` of a slot s6 still wants up: it starts again (after s6's 1 s).
    Restarting,
    /// `D` whose status could not be read.
    Finished,
    /// `x`: the supervisor exits (slot removed, or the container stops).
    Unsupervised,
    /// The slot appeared in the scandir and is now followed.
    Added,
    /// The slot left the scandir.
    Removed,
    /// Its output stopped getting through its logger (`svkit log-watch`).
    LogFailing,
    /// Its output gets through its logger again.
    LogOk,
    /// svkit's `r`: a job's run began.
    RunStart,
    /// svkit's `R`: a job's run ended (its result recorded).
    RunEnd,
}

impl What {
    pub fn as_str(self) -> &'static str {
        match self {
            What::Supervised => "supervised",
            What::Up => "up",
            What::Ready => "ready",
            What::Down => "down",
            What::Done => "done",
            What::Failed => "failed",
            What::Stopped => "stopped",
            What::Restarting => "restarting",
            What::Finished => "finished",
            What::Unsupervised => "unsupervised",
            What::Added => "added",
            What::Removed => "removed",
            What::LogFailing => "log-failing",
            What::LogOk => "log-ok",
            What::RunStart => "run-start",
            What::RunEnd => "run-end",
        }
    }
}

/// One reported change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// When this subscriber read it (wall clock).
    pub time: SystemTime,
    pub slot: String,
    pub what: What,
    /// The byte s6-supervise wrote (None for `added`/`removed`).
    pub s6: Option<u8>,
    /// The slot's status read right after the byte (it may already show a
    /// later change).
    pub status: Option<Status>,
    /// Deaths in s6's tally with that status, its completions not counted
    /// (`super::snapshot::Slots::deaths`).
    pub deaths: Option<u64>,
    /// Why it failed, as its `finish` recorded it.
    pub why: Option<String>,
}

impl Event {
    /// When s6-supervise recorded the change, from the status: the
    /// up/down stamp for `u` and `d`, the ready stamp for `U`, `D` and `O`
    /// (s6 stamps "down and ready" when `finish` ends).
    pub fn s6_time(&self) -> Option<SystemTime> {
        let st = self.status.as_ref()?;
        match self.s6? {
            b'u' | b'd' | b's' => Some(st.since),
            b'U' | b'D' | b'O' => Some(st.ready_since),
            _ => None,
        }
    }
}

/// What `byte` from s6-supervise means, given the status read after it
/// and what [`super::snapshot::Slots::verdict`] says of it. `None`: nothing
/// to report (`O`, always followed by its `D`; unknown bytes).
pub fn judge(byte: u8, st: Option<&Status>, v: &Verdict) -> Option<What> {
    Some(match byte {
        b's' => What::Supervised,
        b'u' => What::Up,
        b'U' => What::Ready,
        b'd' => What::Down,
        b'x' => What::Unsupervised,
        super::job::RUN_START => What::RunStart,
        super::job::RUN_END => What::RunEnd,
        b'D' => match st {
            None => What::Finished,
            Some(_) if v.failed => What::Failed,
            Some(_) if v.done => What::Done,
            Some(s) if kept_down(&s.raw) => What::Stopped,
            Some(_) => What::Restarting,
        },
        _ => return None,
    })
}

/// The event as one JSON object, without the newline.
pub fn json_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let v = json!({
        "time": rfc3339_utc(e.time),
        "slot": e.slot,
        "event": e.what.as_str(),
        "s6": e.s6.map(|b| char::from(b).to_string()),
        "s6_time": e.s6_time().map(rfc3339_utc),
        "up": st.map(|s| s.up),
        "want": st.map(|s| updown(s.want_up)),
        "pid": st.and_then(|s| s.pid),
        "last_exit": st.map_or(Value::Null, |s| LastExit::json(s.last_exit)),
        "deaths": e.deaths,
        "why": e.why,
    });
    v.to_string()
}

/// `TIME SLOT EVENT[ (detail)]`, e.g. `… gateway-a down (signal SIGKILL)`.
pub fn text_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let detail = match e.what {
        What::Up | What::Added => st.and_then(|s| s.pid).map(|p| format!(" (pid {p})")),
        What::Down | What::Done | What::Restarting | What::Stopped | What::RunEnd => st
            .and_then(|s| last_exit(s.last_exit, true))
            .map(|e| format!(" ({e})")),
        What::Failed | What::LogFailing => e.why.as_ref().map(|w| format!(": {w}")),
        _ => None,
    };
    let (time, detail) = (rfc3339_utc(e.time), detail.unwrap_or_default());
    format!("{time} {} {}{detail}", e.slot, e.what.as_str())
}

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    /// A named slot cannot be subscribed to.
    #[error("unable to subscribe to events of {slot}: {}", strerror(source))]
    Subscribe { slot: String, source: io::Error },
    #[error("unable to read scandir {}: {}", path.display(), strerror(source))]
    Scandir { path: PathBuf, source: io::Error },
    /// Signals, poll or inotify.
    #[error("unable to {what}: {}", strerror(source))]
    System {
        what: &'static str,
        source: io::Error,
    },
}

#[cfg(test)]
mod tests;
