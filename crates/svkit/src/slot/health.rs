//! What a slot's state means to svkit, decided here and nowhere else:
//! whether svkit wants it up (*desired*: at render time from its autostart,
//! later from the remembered state or the `down` file), whether it is
//! *ready* (or overdue for it), whether it *failed* for good or is *done*,
//! and whether it is in the state it is wanted in (the health check,
//! `svctl status` exit 0).
//!
//! The rules are functions of their inputs; [`start_facts`] and the
//! methods on [`Slots`] gather those inputs (container env, remembered states, end records).

use std::collections::BTreeMap;
use std::path::Path;

use std::time::{Duration, SystemTime};

use super::end::{self, End};
use super::job::JobState;
use super::logger;
use super::snapshot::Slots;
use crate::config::names::is_truthy;
use crate::config::{Autostart, Backoff, MaxDeaths, Model, OnCleanExit, Slot};
use crate::s6::status::{death_tally, read_slot, Death, RawStatus, Status};
use crate::s6::tai64::Tai64N;
use crate::state::{self, Desired, StateError};
use crate::stray::{self, Copy, Unseen};

/// Inputs of the autostart decision at render time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartFacts {
    /// The container environment (for `if_env`).
    pub env: BTreeMap<String, String>,
    /// Desired states an operator persisted with `svctl start/stop`
    /// (`true` = up), for `remember` slots.
    pub remembered: BTreeMap<String, bool>,
}

/// The container env and the desired states of the `remember` slots. A
/// corrupt or symlinked state file is reported and treated as never set:
/// it must never stop a boot.
pub fn start_facts(model: &Model, warnings: &mut Vec<String>) -> StartFacts {
    let dir = Path::new(&model.state_dir);
    let mut remembered = BTreeMap::new();
    for slot in (model.slots.iter()).filter(|s| s.autostart == Autostart::Remember) {
        match state::read_desired(dir, &slot.name) {
            Ok(Some(d)) => {
                remembered.insert(slot.name.clone(), d == Desired::Up);
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("slot {}: {e}; treating it as never set", slot.name)),
        }
    }
    StartFacts {
        env: crate::container::container_env(),
        remembered,
    }
}

/// Whether the slot is rendered up (no `down` file): its autostart against
/// the facts; a `remember` slot is down until an operator started it.
pub fn autostarts(slot: &Slot, facts: &StartFacts) -> bool {
    match &slot.autostart {
        Autostart::Always => true,
        Autostart::Never => false,
        Autostart::Remember => facts.remembered.get(&slot.name) == Some(&true),
        Autostart::IfEnv(var) => facts.env.get(var).is_some_and(|v| is_truthy(v)),
    }
}

/// What svkit wants for a rendered slot: for a `remember` slot its
/// persisted state (down when never set; what the render decided when the
/// file is unusable), else what the render decided: no `down` file.
pub fn desired_up(
    autostart: Option<&Autostart>,
    remembered: impl FnOnce() -> Result<Option<Desired>, StateError>,
    normally_up: bool,
) -> bool {
    match autostart {
        Some(Autostart::Remember) => remembered().map_or(normally_up, |d| d == Some(Desired::Up)),
        _ => normally_up,
    }
}

/// Down, not finishing, and not wanted up by s6: the slot stays down until
/// someone starts it. Whether that is a failure, a finished job or an
/// operator's stop, only the slot's [`End`] record says (see
/// [`super::end`]): s6's status is the same for all three.
pub fn kept_down(raw: &RawStatus) -> bool {
    !raw.want_up && raw.pid == 0 && !raw.finishing
}

/// Stopped for good by its `finish`, which recorded why: a permanent exit
/// code, a crash loop, or a clean exit of the program's own accord under
/// `on_clean_exit: "stop"` that is not a finished job. A stop or restart
/// asked for (svctl, s6-svc, a shutdown) is never a failure.
pub fn failed(st: &Status, end: Option<&End>) -> bool {
    kept_down(&st.raw) && matches!(end, Some(End::Failed(_)))
}

/// Finished: a clean exit the restart policy keeps down
/// (`on_clean_exit: "stop"`). Healthy, as a stop is.
pub fn done(st: &Status, end: Option<&End>) -> bool {
    kept_down(&st.raw) && end == Some(&End::Done)
}

/// Up and ready. A slot that does not notify readiness is ready once up:
/// one rule for `svctl status`, `svctl wait ready` and the docs.
pub fn ready(st: &Status, notifies: bool) -> bool {
    st.up && (st.ready || !notifies)
}

/// Whether the slot in `dir` notifies readiness (has a `notification-fd`).
pub fn notifies(dir: &Path) -> bool {
    dir.join("notification-fd").is_file()
}

/// Up, not ready, and its readiness check gave up: `timeout` after the
/// program started (`started`: None while its `run` still waits for its
/// dependencies, which is no part of the check's time; s6-notifyoncheck
/// stops checking then): it will not become ready unless restarted.
pub fn ready_overdue(
    st: &Status,
    notifies: bool,
    timeout: Option<Duration>,
    started: Option<SystemTime>,
    now: SystemTime,
) -> bool {
    st.up
        && !ready(st, notifies)
        && timeout
            .is_some_and(|t| started.is_some_and(|s| now.duration_since(s).is_ok_and(|d| d >= t)))
}

/// Whether the slot's clean exit ends it (`on_clean_exit: "stop"`, which
/// every oneshot has): its exit 0 is then a completion, its work done.
pub fn completes(slot: &Slot) -> bool {
    slot.restart.on_clean_exit == OnCleanExit::Stop
}

/// Whether a record of s6's death tally is a death: every record but a
/// completion (an exit 0 of a slot that [`completes`], asked for or not).
/// The one rule of every count of deaths: status, `--json`, events,
/// metrics, and the crash-loop rule and the backoff ([`after_death`]).
pub fn is_death(d: Death, completes: bool) -> bool {
    !(completes && d.exited_zero())
}

/// The deaths among the records of a death tally ([`is_death`]).
pub fn deaths(tally: &[Death], completes: bool) -> u64 {
    tally.iter().filter(|d| is_death(**d, completes)).count() as u64
}

/// (k, window_s, delay_s): after the k-th death in a row, wait delay_s.
/// Deaths count as "in a row" while k of them fit in the time k-1 runs
/// shorter than `reset_after_s` plus their delays would take, so a run
/// that outlives `reset_after_s` resets the delay: min(max_s, 2^(k-2)) s.
pub fn backoff_steps(b: Backoff) -> Vec<(u32, u64, u32)> {
    let (mut steps, mut window, mut prev_delay) = (Vec::new(), 0u64, 0u32);
    for k in 2..=100u32 {
        // One more quick run: the previous delay, s6's 1 s respawn spacing,
        // 1 s of slack for the scripts, and a run shorter than reset_after_s.
        window += u64::from(prev_delay) + 2 + u64::from(b.reset_after_s);
        let delay = 1u32.checked_shl(k - 2).unwrap_or(u32::MAX).min(b.max_s);
        steps.push((k, window, delay));
        if delay >= b.max_s {
            break;
        }
        prev_delay = delay;
    }
    steps
}

/// What the crash-loop rule decides after a death that no other rule of
/// `finish` decided (`svkit slot-end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterDeath {
    /// `max_deaths` deaths within its window: down for good.
    Fail(MaxDeaths),
    /// Start again after this backoff, in seconds (0: at once; s6 still
    /// waits 1 s between starts).
    Restart(u32),
}

/// The crash-loop rule, over s6's death tally (this death its last record)
/// at `now`: the deaths ([`is_death`]) within `within_s` against
/// `max_deaths`, else the backoff of [`backoff_steps`], each step only when
/// the one before it held. As `s6-permafailon` counts: a record is within
/// S seconds when its stamp is no earlier than `now` - S.
pub fn after_death(
    max_deaths: Option<MaxDeaths>,
    backoff: Backoff,
    completes: bool,
    tally: &[(Tai64N, Death)],
    now: Tai64N,
) -> AfterDeath {
    let within = |s: u64| {
        let since = Tai64N::new(now.label().saturating_sub(s), now.nanos()).unwrap_or(now);
        let recent = tally.iter().filter(|(t, _)| *t >= since);
        recent.filter(|(_, d)| is_death(*d, completes)).count() as u64
    };
    if let Some(m) = max_deaths.filter(|m| within(m.within_s.into()) >= m.deaths.into()) {
        return AfterDeath::Fail(m);
    }
    let mut delay = 0;
    if backoff.max_s > 0 {
        for (k, window, d) in backoff_steps(backoff) {
            if within(window) < k.into() {
                break;
            }
            delay = d;
        }
    }
    AfterDeath::Restart(delay)
}

/// The readiness check's timeout of `slot`, when it has one.
pub fn ready_timeout(slot: &Slot) -> Option<Duration> {
    let r = slot.readiness.as_ref().filter(|r| r.timeout_ms > 0)?;
    Some(Duration::from_millis(r.timeout_ms.into()))
}

/// The health check: supervised, not failed, not overdue for readiness,
/// not blocked on its dependencies, its liveness check not failing, its
/// output getting through ([`logger`]), no copy of its program left
/// unsupervised ([`stray`]) nor up beside its foreground copy, and up
/// exactly when s6 wants it up (a slot an operator stopped, a finished
/// oneshot, or one whose program runs in the foreground, is down as
/// wanted; a job between two runs is as wanted too).
pub fn in_wanted_state(st: Option<&Status>, v: &Verdict) -> bool {
    st.is_some_and(|s| {
        !v.failed
            && !v.ready_overdue
            && !v.unhealthy
            && v.waiting.is_none()
            && v.log.is_none()
            && v.stray.is_none()
            && !(s.up && v.foreground.is_some())
            && (s.up == s.want_up || v.job.as_ref().is_some_and(|j| j.between_runs))
    })
}

/// Slots the config declares that have no dir in the scandir: a boot
/// that could not make them (it said why), a dir removed by hand, a
/// config edited and not applied yet. None of them is in its wanted
/// state: `svctl status` shows each as `missing` and the health check
/// fails until an apply makes it.
pub fn declared_missing(model: &Model, scandir: &Path) -> Vec<String> {
    model
        .slots
        .iter()
        .filter(|s| !scandir.join(&s.name).is_dir())
        .map(|s| s.name.clone())
        .collect()
}

/// The rules applied to the slots of one scandir, with the config when it
/// loaded (without it: no remembered states, svkit's default policy).
impl Slots<'_> {
    /// [`deaths`] of the slot `name`. Its tally is read only when some
    /// record may be a completion: else the count is its length, which
    /// `st` has. The slot [`completes`] by its config, or by its `finish`
    /// having kept a clean exit down (`done`): only the `finish` of a slot
    /// that completes does, whatever the config says since.
    pub fn deaths(&self, name: &str, st: &Status, done: bool) -> u64 {
        let completing = done || self.slot(name).is_some_and(completes);
        if st.deaths == 0 || !completing {
            return st.deaths;
        }
        // A tally that cannot be read now (`st` read its length a moment
        // ago): every record counts, as s6's own count does.
        death_tally(&self.scandir.join(name)).map_or(st.deaths, |t| deaths(&t, true))
    }

    /// [`failed`] of the slot `name`.
    pub fn failed(&self, name: &str, st: &Status) -> bool {
        failed(st, end::read(&self.scandir.join(name)).as_ref())
    }

    /// [`ready_overdue`] of the slot `name` (its timeout from the config).
    pub fn ready_overdue(&self, name: &str, st: &Status, now: SystemTime) -> bool {
        let Some(timeout) = self.slot(name).and_then(ready_timeout) else {
            return false;
        };
        let dir = self.scandir.join(name);
        let started = self.program_started(name, st, end::waiting_for(&dir, st.up).is_some());
        ready_overdue(st, notifies(&dir), Some(timeout), started, now)
    }

    /// When the program itself started: None when down or while its `run`
    /// waits for dependencies; else when `run` ended its wait
    /// ([`end::STARTED_FILE`], if written since s6 started `run`), or when
    /// s6 started `run` (no wait). A slot the config gives no `depends_on`
    /// never waits, so its `run`'s start is its program's (one stat less on
    /// the health-check path).
    pub fn program_started(&self, name: &str, st: &Status, waiting: bool) -> Option<SystemTime> {
        if self.slot(name).is_some_and(|s| s.depends_on.is_empty()) {
            return st.up.then_some(st.since);
        }
        if !st.up || waiting {
            return None;
        }
        let stamp = std::fs::symlink_metadata(self.dir(name).join(end::STARTED_FILE))
            .and_then(|m| m.modified())
            .ok();
        Some(stamp.filter(|t| *t >= st.since).unwrap_or(st.since))
    }

    /// [`logger::look`] of the slot `name`: its fault and its logger's
    /// pid; none without a logger.
    pub fn log_look(&self, name: &str) -> (Option<logger::Fault>, Option<u32>) {
        let dir = self.dir(name);
        if !logger::has_logger(&dir) {
            return (None, None);
        }
        logger::look(&dir, self.log_dir(name).map(Path::new))
    }

    /// Sets [`logger::Fault::Stalled`] for the slots whose logger is
    /// otherwise fine (`fault` None) but whose pipe stays full over
    /// [`logger::STALL_WINDOW`] (looked at together: the window is paid
    /// once, and only when some pipe is full).
    pub fn mark_stalled<'v>(
        &self,
        slots: impl IntoIterator<Item = (&'v str, &'v mut Option<logger::Fault>)>,
    ) {
        let (mut faults, mut dirs) = (Vec::new(), Vec::new());
        for (name, fault) in slots {
            // A slot without a logger costs one failed open: no pipe.
            if fault.is_none() {
                dirs.push(self.scandir.join(name));
                faults.push(fault);
            }
        }
        for k in logger::find_stalled(&dirs, logger::STALL_WINDOW) {
            *faults[k] = Some(logger::Fault::Stalled);
        }
    }

    /// Everything svkit decides about the slot `name` at `now`; without a
    /// supervisor (`st` None): what its `down` file says, nothing else.
    /// When s6 could not write its status file (a full `/run`) and its
    /// supervisor runs the program `run` recorded, `st` is made to say so
    /// ([`unrecorded`]) before anything is judged on it.
    pub fn verdict(&self, name: &str, st: Option<&mut Status>, now: SystemTime) -> Verdict {
        let dir = self.scandir.join(name);
        let Some(st) = st else {
            return Verdict {
                desired_up: !dir.join("down").exists(),
                stray: stray::find(&dir, 0).map(|c| c.pid),
                foreground: in_foreground(name),
                ..Verdict::default()
            };
        };
        let (stray, unrecorded) = match stray::unseen(&dir, st.raw.pid) {
            Some(Unseen::Stray(c)) => (Some(c.pid), None),
            Some(Unseen::Unrecorded(c, at)) => (None, Some(self::unrecorded(&dir, st, c, at))),
            None => (None, None),
        };
        let st = &*st;
        let slot = self.slot(name);
        let end = end::read(&dir);
        let notifies = notifies(&dir);
        let timeout = slot.and_then(ready_timeout);
        let (log, logger_pid) = self.log_look(name);
        let waiting = end::waiting_for(&dir, st.up);
        let started = self.program_started(name, st, waiting.is_some());
        let done = done(st, end.as_ref());
        let live = st
            .up
            .then(|| super::liveness::read(&dir, st.raw.pid))
            .flatten();
        let unhealthy = live.as_ref().is_some_and(|l| l.failing > 0);
        let sd = self.model.map_or("", |m| m.state_dir.as_str());
        let remembered = || state::read_desired(Path::new(sd), name);
        // A job: what it waits for, and its last run (failed until a
        // later run succeeds).
        let job = (slot.and_then(|s| s.schedule.as_ref()))
            .map(|sc| JobState::read(&dir, st, &sc.text, Path::new(sd), name));
        let job_failed = job.as_ref().and_then(|j| j.last_run).filter(|r| !r.ok());
        Verdict {
            desired_up: desired_up(slot.map(|s| &s.autostart), remembered, st.normally_up),
            failed: failed(st, end.as_ref()) || job_failed.is_some(),
            done,
            why: match end {
                Some(End::Failed(why)) if kept_down(&st.raw) => Some(why),
                _ => job_failed.map(|r| format!("its last run failed: {}", super::job::result(&r))),
            },
            job,
            ready: ready(st, notifies) && waiting.is_none() && !unhealthy,
            ready_overdue: ready_overdue(st, notifies, timeout, started, now),
            // What keeps a waiting slot waiting: its dependencies that
            // failed for good (none known without the config).
            blocked_by: (slot.filter(|_| waiting.is_some()).into_iter())
                .flat_map(|s| &s.depends_on)
                .filter(|d| {
                    read_slot(&self.scandir.join(&d.on)).is_ok_and(|st| self.failed(&d.on, &st))
                })
                .map(|d| d.on.clone())
                .collect(),
            waiting,
            started,
            deaths: self.deaths(name, st, done),
            unhealthy,
            live,
            log,
            logger_pid,
            stray,
            unrecorded,
            foreground: in_foreground(name),
        }
    }
}

/// The truth s6 could not write: its supervisor runs `program` (its
/// child, recorded by `run` at `at`) while `st`, its status file, names
/// another pid or none. `st` becomes what s6-supervise holds since that
/// start (up, that pid, since `at`, not yet notified ready: s6's own
/// start); what the file said, and when it was last written, are kept
/// for the note.
pub fn unrecorded(dir: &Path, st: &mut Status, program: Copy, at: SystemTime) -> Unrecorded {
    let note = Unrecorded {
        file_pid: st.pid,
        written: std::fs::metadata(dir.join("supervise/status"))
            .and_then(|m| m.modified())
            .ok(),
    };
    let mut raw = st.raw;
    raw.pid = u32::try_from(program.pid).unwrap_or(0);
    (raw.finishing, raw.ready, raw.paused) = (false, false, false);
    raw.stamp = Tai64N::from_wallclock(at).unwrap_or(raw.stamp);
    *st = Status::from_parts(raw, st.normally_up, st.deaths);
    note
}

/// What a stale status file said ([`unrecorded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unrecorded {
    /// The program it names as up (gone), None when it names none.
    pub file_pid: Option<u32>,
    /// When s6 last wrote it.
    pub written: Option<SystemTime>,
}

/// The pid of the foreground copy of the slot's program, while it lives
/// (a redirect's opt-out: `crate::claim::foreground`).
fn in_foreground(name: &str) -> Option<i32> {
    crate::claim::foreground::running(name).map(|c| c.pid)
}

/// One slot judged: see [`Slots::verdict`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub desired_up: bool,
    pub failed: bool,
    /// Why it failed, as its `finish` recorded it.
    pub why: Option<String>,
    pub done: bool,
    pub ready: bool,
    pub ready_overdue: bool,
    /// Up, but its `run` still waits for these dependencies.
    pub waiting: Option<String>,
    /// While waiting: the dependencies that failed for good.
    pub blocked_by: Vec<String>,
    /// When the program started ([`Slots::program_started`]): its uptime.
    pub started: Option<SystemTime>,
    /// Deaths in s6's tally, its completions not counted ([`deaths`]).
    pub deaths: u64,
    /// Up and its liveness check failing (not yet restarted for it).
    pub unhealthy: bool,
    /// What its liveness watcher last saw, while up, when it has one.
    pub live: Option<super::liveness::LiveState>,
    /// Its output is not getting through ([`logger`]).
    pub log: Option<logger::Fault>,
    /// Its logger's process, when it runs (read with `log`).
    pub logger_pid: Option<u32>,
    /// The pid of a copy of its program that no supervisor knows
    /// ([`stray`]).
    pub stray: Option<i32>,
    /// s6 could not write its status file since a change: the status
    /// shown is what its supervisor runs ([`unrecorded`]).
    pub unrecorded: Option<Unrecorded>,
    /// The pid of its program run in the foreground, the container's
    /// command (a redirect's opt-out), while it lives: the slot itself
    /// never starts then.
    pub foreground: Option<i32>,
    /// A job's schedule, next and last run ([`super::job`]).
    pub job: Option<JobState>,
}
