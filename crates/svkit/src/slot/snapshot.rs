//! A slot's status, as every view needs it: the slots of one scandir with
//! the config that declares them ([`Slots`]), and one call that reads them
//! all ([`Slots::snapshot`]): the config's view (declared, missing, log
//! dirs), s6's (each status file read once), svkit's records and verdicts
//! ([`super::health`]), and why. `svctl status` (table and `--json`,
//! [`super::status_fmt`]), `metrics`, `events` and `wait` render or read it;
//! so will any other view. The config is loaded by the caller.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::health::{self, Verdict};
use super::usage::{Table, Usage};
use crate::config::{Model, Slot};
use crate::container::Supervision;
use crate::msg::exit::svctl::{NOT_IN_STATE, UNKNOWN_SLOT};
use crate::msg::exit::OK;
use crate::msg::Fatal;
use crate::s6::status::{read_slot, supervisor_running, Status, StatusError};
use crate::state::Orphan;

/// The slots of one scandir, with the config that declares them when it
/// loaded (without it: no order, nothing remembered, no log dirs, svkit's
/// default policy). svkit's rules about them are [`super::health`]'s.
#[derive(Debug, Clone, Copy)]
pub struct Slots<'a> {
    pub scandir: &'a Path,
    pub model: Option<&'a Model>,
}

impl<'a> Slots<'a> {
    pub fn dir(&self, name: &str) -> PathBuf {
        self.scandir.join(name)
    }

    pub fn slot(&self, name: &str) -> Option<&'a Slot> {
        self.model.and_then(|m| m.slot(name))
    }

    /// The slot's configured log dir, when the config is known.
    pub fn log_dir(&self, name: &str) -> Option<&'a str> {
        self.slot(name)
            .and_then(|s| s.log.as_ref())
            .map(|l| l.dir.as_str())
    }

    /// A name that is a slot in the scandir.
    pub fn known(&self, name: &str) -> bool {
        !name.is_empty() && !name.starts_with('.') && !name.contains('/') && self.dir(name).is_dir()
    }

    /// Slots in the scandir, sorted: svkit's (with the marker) or all.
    pub fn list(&self, all: bool) -> io::Result<Vec<String>> {
        let names = crate::s6::services(self.scandir)?;
        // A service dir, or a symlink to one (services.d).
        Ok((names.into_iter())
            .filter(|n| {
                let p = self.dir(n);
                p.is_dir() && (all || super::owner::is_ours(&p))
            })
            .collect())
    }

    /// The slots `names` (none: every svkit slot, or every slot with
    /// `all`, and the slots the config declares that are missing) as they
    /// are now. A named slot neither in the scandir nor declared is
    /// [`Snapshot::unknown`].
    pub fn snapshot(&self, names: &[String], all: bool) -> Result<Snapshot, SnapshotError> {
        let declared_missing = self
            .model
            .map(|m| health::declared_missing(m, self.scandir))
            .unwrap_or_default();
        let (mut present, mut missing, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
        if names.is_empty() {
            present = self.list(all).map_err(|source| SnapshotError::Scandir {
                path: self.scandir.to_path_buf(),
                source,
            })?;
            missing = declared_missing;
        } else {
            for n in names {
                if self.known(n) {
                    present.push(n.clone());
                } else if declared_missing.contains(n) {
                    missing.push(n.clone());
                } else {
                    unknown.push(n.clone());
                }
            }
        }
        let mut rows = present
            .iter()
            .map(|n| self.row(n))
            .collect::<Result<Vec<_>, _>>()?;
        if let (Some(model), false) = (self.model, missing.is_empty()) {
            // Unusable state files were reported by the boot that read them.
            let facts = health::start_facts(model, &mut Vec::new());
            rows.extend(missing.iter().map(|n| Row {
                name: n.clone(),
                // Wanted up or not as its autostart says.
                v: Verdict {
                    desired_up: self.slot(n).is_some_and(|s| health::autostarts(s, &facts)),
                    ..Default::default()
                },
                log_dir: self.log_dir(n).map(str::to_string),
                missing: true,
                ..Default::default()
            }));
        }
        // In the order asked for, else by name, missing slots among the others.
        if names.is_empty() {
            rows.sort_by(|a, b| a.name.cmp(&b.name));
        } else {
            rows.sort_by_key(|r| names.iter().position(|s| *s == r.name));
        }
        self.mark_stalled(
            rows.iter_mut()
                .filter(|r| r.st.is_some())
                .map(|r| (r.name.as_str(), &mut r.v.log)),
        );
        // The records the config no longer declares a name for (none
        // without a config): unreadable ones are a warning, never a reason
        // for a view to fail.
        let (orphans, orphans_error) = match self.model.map(crate::state::orphans).transpose() {
            Ok(o) => (o.unwrap_or_default(), None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        Ok(Snapshot {
            scandir: self.scandir.to_path_buf(),
            named: !names.is_empty(),
            rows,
            unknown,
            orphans,
            orphans_error,
            supervision: crate::container::supervision(),
            now: SystemTime::now(),
        })
    }

    /// One slot's row. A slot whose supervisor is gone (or not there yet)
    /// is a row without status; so is one whose `supervise/` this user may
    /// not read (another user's slot), marked unreadable. Only other I/O
    /// errors and corrupt status files are errors.
    fn row(&self, name: &str) -> Result<Row, SnapshotError> {
        let dir = self.dir(name);
        let read = read_slot(&dir).and_then(|s| Ok((s, supervisor_running(&dir)?)));
        let (mut st, unreadable) = match read {
            Ok((s, true)) => (Some(s), None),
            Ok((_, false)) | Err(StatusError::NotSupervised { .. }) => (None, None),
            // Shown as unreadable, not a reason to show nothing.
            Err(e) if e.is_denied() => (None, Some(e.to_string())),
            Err(source) => {
                return Err(SnapshotError::Status {
                    slot: name.to_string(),
                    source,
                })
            }
        };
        let v = self.verdict(name, st.as_mut(), SystemTime::now());
        Ok(Row {
            name: name.to_string(),
            ours: super::owner::is_ours(&dir),
            v,
            st,
            log_dir: self.log_dir(name).map(str::to_string),
            unreadable,
            ..Default::default()
        })
    }
}

/// What keeps a snapshot from being taken.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The scandir itself cannot be read (e.g. it does not exist).
    #[error("unable to read scandir {}: {}", path.display(), crate::msg::strerror(source))]
    Scandir { path: PathBuf, source: io::Error },
    /// An I/O error other than a denial, or a corrupt status file.
    #[error("unable to read status of {slot}: {source}")]
    Status { slot: String, source: StatusError },
}

impl From<SnapshotError> for Fatal {
    fn from(e: SnapshotError) -> Fatal {
        Fatal::system(e.to_string(), "")
    }
}

/// The slots of one scandir at one moment, and what their views say
/// besides them.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub scandir: PathBuf,
    /// Slots were named (else listed).
    pub named: bool,
    /// In the order asked for, else by name.
    pub rows: Vec<Row>,
    /// Named, neither in the scandir nor declared.
    pub unknown: Vec<String>,
    /// Records the config no longer declares a name for.
    pub orphans: Vec<Orphan>,
    /// Why the records could not be looked for.
    pub orphans_error: Option<String>,
    pub supervision: Supervision,
    /// When it was taken: durations count to it.
    pub now: SystemTime,
}

impl Snapshot {
    /// Fills in what each running program and logger costs, from one
    /// reading of `/proc` (none when nothing runs).
    pub fn measure(&mut self) {
        let running =
            |r: &Row| r.st.as_ref().and_then(|s| s.pid).is_some() || r.v.logger_pid.is_some();
        if !self.rows.iter().any(running) {
            return;
        }
        let table = Table::now();
        for r in &mut self.rows {
            r.usage = r.st.as_ref().and_then(|s| table.tree(s.pid?));
            r.log_usage = r.v.logger_pid.and_then(|p| table.tree(p));
        }
    }

    /// The rows this user may not read (another user's `supervise/`).
    pub fn hidden(&self) -> Vec<&str> {
        (self.rows.iter())
            .filter(|r| r.unreadable.is_some())
            .map(|r| r.name.as_str())
            .collect()
    }

    /// What a view says besides the rows, one warning each.
    pub fn warnings(&self) -> Vec<String> {
        let mut w: Vec<String> = (self.unknown.iter())
            .map(|n| format!("unknown slot {n}: not in the scandir"))
            .collect();
        for r in &self.rows {
            if let Some(f) = &r.v.log {
                w.push(format!("slot {}: {f}", r.name));
            }
            // s6 could not write its status file (`health::unrecorded`):
            // what it missed, since when, and that the status shown is
            // the truth.
            if let (Some(u), Some(st)) = (&r.v.unrecorded, &r.st) {
                let when = |t: Option<SystemTime>| t.map_or("?".into(), crate::clock::rfc3339_utc);
                let said =
                    (u.file_pid).map_or("no program up".into(), |p| format!("pid {p}, gone"));
                w.push(format!(
                    "slot {}: its supervisor could not write its status file since {} (a full filesystem?): it says {said}, but the supervisor runs pid {}, started {}, as shown here; s6-svstat shows the stale file until s6 records its next change",
                    r.name,
                    when(u.written),
                    st.pid.unwrap_or(0),
                    when(Some(st.since)),
                ));
            }
            if let Some(pid) = r.v.stray {
                w.push(format!(
                    "slot {}: a copy of its program runs unsupervised (pid {pid}), left by a supervisor that died; svctl stop {} ends it",
                    r.name, r.name
                ));
            }
        }
        // A note, never a fault: the slots' health is what the exit code says.
        w.extend(crate::state::note(&self.orphans));
        let hidden = self.hidden();
        if !hidden.is_empty() {
            w.push(format!(
                "status of {} unreadable as uid {}: its supervise/ belongs to another user (root sees every slot)",
                hidden.join(", "),
                nix::unistd::geteuid()
            ));
        }
        w
    }

    /// `svctl status`'s exit code, the health check: 0 when every slot is
    /// in its wanted state. Listing, another user's slot is shown but
    /// decides nothing: a slot user's `svctl status` answers for the slots
    /// it can read. Named (or when nothing is readable), what was asked
    /// about is unknown.
    pub fn exit_code(&self) -> u8 {
        let readable: Vec<&Row> = (self.rows.iter())
            .filter(|r| r.unreadable.is_none())
            .collect();
        let hidden = readable.len() < self.rows.len();
        if !self.unknown.is_empty() || (hidden && (self.named || readable.is_empty())) {
            UNKNOWN_SLOT
        } else if readable.iter().all(|r| r.in_wanted_state()) {
            OK
        } else {
            NOT_IN_STATE
        }
    }
}

/// One slot as the views show it.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub name: String,
    /// Has the `.svkit` marker.
    pub ours: bool,
    /// None: no supervisor runs on the slot.
    pub st: Option<Status>,
    /// What svkit decides about it (desired, failed, done, ready).
    pub v: Verdict,
    pub log_dir: Option<String>,
    /// Why this user cannot read the slot's status (another user's
    /// `supervise/`); its status fields are then unknown.
    pub unreadable: Option<String>,
    /// Declared in the config, no dir in the scandir
    /// (`health::declared_missing`).
    pub missing: bool,
    /// What its program's tree and its logger's cost, once
    /// [`Snapshot::measure`]d (None: not running, or not measured).
    pub usage: Option<Usage>,
    pub log_usage: Option<Usage>,
}

/// The STATE column: failed and done win over up and down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Unreadable,
    Missing,
    Unsupervised,
    Failed,
    Done,
    /// Down, its program run in the foreground instead (an opt-out).
    Foreground,
    /// Up, but its run script still waits for its dependencies.
    Waiting,
    /// A job waiting for its next tick.
    Scheduled,
    Up,
    Down,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unreadable => "unreadable",
            State::Missing => "missing",
            State::Unsupervised => "unsupervised",
            State::Failed => "failed",
            State::Done => "done",
            State::Foreground => "foreground",
            State::Waiting => "waiting",
            State::Scheduled => "scheduled",
            State::Up => "up",
            State::Down => "down",
        }
    }
}

impl Row {
    pub fn state(&self) -> State {
        let job = self.v.job.as_ref();
        let scheduled =
            |s: &Status| job.is_some_and(|j| (s.up && j.next_run.is_some()) || j.between_runs);
        match &self.st {
            None if self.unreadable.is_some() => State::Unreadable,
            None if self.missing => State::Missing,
            None => State::Unsupervised,
            Some(s) if !s.up && self.v.foreground.is_some() => State::Foreground,
            Some(_) if self.v.failed => State::Failed,
            Some(_) if self.v.done => State::Done,
            Some(s) if s.up && self.v.waiting.is_some() => State::Waiting,
            Some(s) if scheduled(s) => State::Scheduled,
            Some(s) if s.up => State::Up,
            Some(_) => State::Down,
        }
    }

    /// Seconds the program has run (up: since it started, not since its
    /// `run` began waiting for dependencies), or since the slot went down.
    pub fn secs_since(&self, s: &Status, now: SystemTime) -> u64 {
        match self.v.started {
            Some(t) if s.up => now.duration_since(t).map_or(0, |d| d.as_secs()),
            _ => s.secs_since(now),
        }
    }

    /// The LSB "running as it should": see `health::in_wanted_state`.
    pub fn in_wanted_state(&self) -> bool {
        health::in_wanted_state(self.st.as_ref(), &self.v)
    }

    /// Why this slot keeps the container from being ready to serve (`GET
    /// /readyz`), or None. Counted: a slot s6 is told to keep up (an
    /// operator's stop is down as wanted), and every failed one; not done
    /// and not a job between runs. Such a slot is ready when up, ready
    /// (not waiting, overdue or unhealthy). A job serves nothing: only its
    /// failed last run counts (as it does for the health check).
    pub fn unready(&self) -> Option<String> {
        let wanted = self.v.failed || self.st.as_ref().map_or(self.v.desired_up, |s| s.want_up);
        let state = self.state();
        let ready = match state {
            _ if self.v.job.is_some() => !self.v.failed,
            State::Done => true,
            State::Up => self.v.ready && !self.v.ready_overdue && !self.v.unhealthy,
            _ => false,
        };
        if !wanted || ready {
            return None;
        }
        let more = (self.v.why.as_deref().or(self.v.waiting.as_deref()))
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        let state = match state {
            State::Up if self.v.unhealthy => "unhealthy",
            State::Up => "not ready",
            s => s.as_str(),
        };
        Some(format!("{}: {state}{more}", self.name))
    }
}
