//! A job: a oneshot with a `schedule`, supervised by s6 like any slot. Its
//! `run` first execs `svkit job wait`, one process that sleeps until the
//! next tick (a timer on the wall clock that a clock change cancels, so the
//! tick is computed again; no polling), then execs `run` again for one
//! run. `finish` ends in `svkit job end`, which records the run's result
//! under `state_dir` and the ticks that came while it ran (skipped: one
//! run at a time); s6 then starts `run`, which waits again.
//!
//! Records: [`JOB_FILE`] in the slot dir says what the job does now
//! (`next TICK AT` while it waits, `run TICK START` once a run began);
//! `<state_dir>/jobs/SLOT` is the last run ([`LastRun`]), kept across
//! boots for `catch_up` and for status. `svctl run` ([`run_now`]) leaves
//! [`RUN_NOW_FILE`] and wakes the wait with SIGUSR1, under the slot dir's
//! flock, which the wait also holds while it reads that file and writes
//! [`JOB_FILE`]: a wake-up is never lost, nor sent to a running program.

use std::io;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jiff::Timestamp;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};

use crate::fsutil;
use crate::s6::status::Status;
use crate::schedule::{self, When};

/// What the job does now: `next TICK AT` (waiting; AT is TICK plus its
/// jitter) or `run TICK START` (a run began at START), Unix seconds.
pub const JOB_FILE: &str = ".svkit-job";
/// Left by `svctl run`: run once, now.
pub const RUN_NOW_FILE: &str = ".svkit-run-now";
/// Made by the first wait of this slot dir (this boot): whether to catch
/// up, and, its mtime, when the schedule started.
pub const SINCE_FILE: &str = ".svkit-job-since";
/// svkit's own bytes in the slot's `event/` fifodir, beside s6's: a run
/// began, a run ended (its record written).
pub const RUN_START: u8 = b'r';
pub const RUN_END: u8 = b'R';
/// Under `state_dir`: one file per job, its last run.
pub const RECORDS_DIR: &str = "jobs";

/// A job's schedule, as `run` and `finish` pass it.
#[derive(Debug, Clone)]
pub struct Job {
    pub slot: String,
    pub state_dir: PathBuf,
    pub when: When,
    pub timezone: Option<String>,
    pub jitter_s: u32,
    pub catch_up: bool,
}

/// What [`JOB_FILE`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Next { tick: i64, at: i64 },
    Run { tick: i64, start: i64 },
}

/// The last run of a job (`<state_dir>/jobs/SLOT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LastRun {
    /// The tick it ran for (a run asked for with `svctl run` keeps the
    /// tick before it); 0: none yet.
    pub tick: i64,
    /// Unix seconds.
    pub start: i64,
    pub duration_ms: u64,
    /// `finish`'s `$1` (256: killed by a signal) and `$2`.
    pub code: u32,
    pub signal: u32,
    /// Ticks skipped since the first run recorded, as runs outlasted them.
    pub skipped: u64,
}

impl LastRun {
    pub fn ok(&self) -> bool {
        self.code == 0
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("{0}")]
    Zone(String),
    #[error("{what}: {}", crate::msg::strerror(source))]
    Io { what: String, source: io::Error },
    #[error("a run is going on")]
    Running,
    #[error(transparent)]
    Control(#[from] crate::s6::control::ControlError),
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> JobError {
    let what = what.into();
    move |source| JobError::Io { what, source }
}

fn now_s() -> i64 {
    Timestamp::now().as_second()
}

/// Reads [`JOB_FILE`] of `slot_dir`.
pub fn phase(slot_dir: &Path) -> Option<Phase> {
    let (text, _) = fsutil::read_record(&slot_dir.join(JOB_FILE), 128).ok()?;
    let mut w = text.split_whitespace();
    let (word, tick, n) = (w.next()?, w.next()?.parse().ok()?, w.next()?.parse().ok()?);
    match word {
        "next" => Some(Phase::Next { tick, at: n }),
        "run" => Some(Phase::Run { tick, start: n }),
        _ => None,
    }
}

fn write_phase(slot_dir: &Path, p: Phase) -> Result<(), JobError> {
    let text = match p {
        Phase::Next { tick, at } => format!("next {tick} {at}\n"),
        Phase::Run { tick, start } => format!("run {tick} {start}\n"),
    };
    fsutil::write_atomic(&slot_dir.join(JOB_FILE), text.as_bytes(), 0o644, None)
        .map_err(io_err(format!("unable to write {JOB_FILE}")))
}

/// `<state_dir>/jobs/SLOT`.
pub fn record_path(state_dir: &Path, slot: &str) -> PathBuf {
    state_dir.join(RECORDS_DIR).join(slot)
}

/// The last run recorded, if any (a damaged record is none).
pub fn last_run(state_dir: &Path, slot: &str) -> Option<LastRun> {
    let (text, _) = fsutil::read_record(&record_path(state_dir, slot), 256).ok()?;
    let n: Vec<u64> = text
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    let [tick, start, duration_ms, code, signal, skipped] = n[..] else {
        return None;
    };
    Some(LastRun {
        tick: i64::try_from(tick).ok()?,
        start: i64::try_from(start).ok()?,
        duration_ms,
        code: u32::try_from(code).ok()?,
        signal: u32::try_from(signal).ok()?,
        skipped,
    })
}

/// Writes `r` as the last run. When it cannot (a full or read-only
/// `state_dir`), the record of the run before would stand for this one:
/// it is removed (a removal needs no space), so the job has no last run,
/// as before its first; a record that stays is said too.
fn record(state_dir: &Path, slot: &str, r: &LastRun) -> Result<(), JobError> {
    let path = record_path(state_dir, slot);
    let text = format!(
        "{} {} {} {} {} {}\n",
        r.tick, r.start, r.duration_ms, r.code, r.signal, r.skipped
    );
    let written = (path.parent().map_or(Ok(()), std::fs::create_dir_all))
        .and_then(|()| fsutil::write_atomic(&path, text.as_bytes(), 0o644, None));
    let Err(e) = written else { return Ok(()) };
    let e = io_err(format!(
        "unable to record its run in {}",
        crate::msg::path(&path)
    ))(e);
    match std::fs::remove_file(&path) {
        Err(rm) if rm.kind() != io::ErrorKind::NotFound => {
            let stays = "status still shows the run before, unable to remove its record";
            Err(io_err(format!("{e}; {stays}"))(rm))
        }
        _ => Err(e),
    }
}

/// The ticks of `when` in (`from`, `to`], counted from `anchor`, at most
/// a million (a period of 1 s over 11 days).
pub fn ticks_between(when: &When, tz: &jiff::tz::TimeZone, anchor: i64, from: i64, to: i64) -> u64 {
    let ts = |s: i64| Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH);
    if let When::Every(n) = when {
        let n = i64::from(*n);
        let k = |t: i64| (t - anchor).div_euclid(n);
        return u64::try_from(k(to) - k(from)).unwrap_or(0);
    }
    let mut count = 0;
    let mut t = ts(from);
    while let Some(next) = when.next(t, ts(anchor), tz).filter(|n| n.as_second() <= to) {
        count += 1;
        if count >= 1_000_000 {
            break;
        }
        t = next;
    }
    count
}

/// A random delay in 0..=`max` s (`jitter_s`): std's hasher keys come
/// from the kernel's random source.
fn jitter(max: u32) -> i64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    if max == 0 {
        return 0;
    }
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    i64::try_from(r % (u64::from(max) + 1)).unwrap_or(0)
}

/// How long the wait and `svctl run` wait for each other's hold of the
/// slot dir's flock (each holds it for a few file operations).
const LOCK_WITHIN: Duration = Duration::from_secs(10);

/// The slot dir's flock, as `svctl run` takes it ([`fsutil::flock_within`]).
fn lock_dir(slot_dir: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, JobError> {
    let dir = std::fs::File::open(slot_dir).map_err(io_err("unable to open the slot dir"))?;
    let locked =
        fsutil::flock_within(dir, LOCK_WITHIN).map_err(io_err("unable to lock the slot dir"))?;
    locked.ok_or_else(|| {
        io_err("unable to lock the slot dir within 10 s")(io::ErrorKind::TimedOut.into())
    })
}

/// Waits (in the slot dir, the cwd) until the job should run: a tick, a
/// missed tick at boot with `catch_up`, or `svctl run`. On return
/// [`JOB_FILE`] says `run`, and SIGUSR1 is no longer blocked.
pub fn wait(job: &Job) -> Result<(), JobError> {
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

    let tz = schedule::zone(Path::new("/"), job.timezone.as_deref()).map_err(JobError::Zone)?;
    let usr1 = SigSet::from_iter([Signal::SIGUSR1]);
    let sys = |what: &'static str| move |e: nix::Error| io_err(what)(e.into());
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&usr1), None)
        .map_err(sys("unable to block SIGUSR1"))?;
    let mut wake = SignalFd::with_flags(&usr1, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(sys("unable to make a signalfd"))?;
    let timer = TimerFd::new(
        ClockId::CLOCK_REALTIME,
        TimerFlags::TFD_CLOEXEC | TimerFlags::TFD_NONBLOCK,
    )
    .map_err(sys("unable to make a timer"))?;
    let since = Path::new(SINCE_FILE);
    let first = !since.exists();
    if first {
        std::fs::write(since, b"").map_err(io_err(format!("unable to write {SINCE_FILE}")))?;
    }
    let started = (std::fs::metadata(since).and_then(|m| m.modified()).ok())
        .and_then(|t| Timestamp::try_from(t).ok())
        .map_or(now_s(), |t| t.as_second().max(0));
    let mut catch_up = job.catch_up && first;
    loop {
        let lock = lock_dir(Path::new("."))?;
        let last = last_run(&job.state_dir, &job.slot).unwrap_or_default();
        let now = now_s();
        let ts = |s: i64| Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH);
        let anchor = if last.tick > 0 { last.tick } else { started };
        let next = |after: i64| {
            (job.when.next(ts(after), ts(anchor), &tz)).map_or(i64::MAX, |t| t.as_second())
        };
        let run = if std::fs::remove_file(RUN_NOW_FILE).is_ok() {
            Some(last.tick)
        } else if std::mem::take(&mut catch_up) && last.tick > 0 && next(last.tick) <= now {
            Some(next(last.tick))
        } else {
            None
        };
        if let Some(tick) = run {
            return begin(tick, lock, &mut wake, &usr1);
        }
        // Never a tick at or before the last one run: a clock set back runs
        // nothing twice.
        let tick = next(now.max(last.tick));
        let at = tick.saturating_add(jitter(job.jitter_s));
        write_phase(Path::new("."), Phase::Next { tick, at })?;
        drop(lock);
        timer
            .set(
                Expiration::OneShot(TimeSpec::new(at, 0)),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME | TimerSetTimeFlags::TFD_TIMER_CANCEL_ON_SET,
            )
            .map_err(sys("unable to set the timer"))?;
        let mut fds = [
            nix::poll::PollFd::new(timer.as_fd(), nix::poll::PollFlags::POLLIN),
            nix::poll::PollFd::new(wake.as_fd(), nix::poll::PollFlags::POLLIN),
        ];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::NONE) {
            Ok(_) | Err(nix::Error::EINTR) => {}
            Err(e) => return Err(sys("unable to wait")(e)),
        }
        // Drained; the run-now file says whether the wake-up was for us.
        while let Ok(Some(_)) = wake.read_signal() {}
        match timer.wait() {
            // The tick came (on time, or the clock jumped past it).
            Ok(()) => {
                let lock = lock_dir(Path::new("."))?;
                let _ = std::fs::remove_file(RUN_NOW_FILE);
                return begin(tick, lock, &mut wake, &usr1);
            }
            // EAGAIN (woken, not the tick: a run-now file?) or ECANCELED
            // (the clock was set): look again, the tick computed anew.
            Err(_) => continue,
        }
    }
}

/// Under the slot dir's lock: the run begins (no `svctl run` signals from
/// now on), SIGUSR1 unblocked for the program.
fn begin(
    tick: i64,
    lock: nix::fcntl::Flock<std::fs::File>,
    wake: &mut nix::sys::signalfd::SignalFd,
    usr1: &SigSet,
) -> Result<(), JobError> {
    let start = now_s();
    write_phase(Path::new("."), Phase::Run { tick, start })?;
    drop(lock);
    crate::s6::fifo::notify(Path::new("event"), RUN_START);
    while let Ok(Some(_)) = wake.read_signal() {}
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(usr1), None)
        .map_err(|e| io_err("unable to unblock SIGUSR1")(e.into()))
}

/// Unix seconds as a time.
pub fn at(s: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::try_from(s).unwrap_or(0))
}

/// `finish` of a job (`$1`, `$2`; `requested`: an operator's stop or
/// restart ended it): records a run that ended, with the ticks it
/// outlasted, and says a failed run or skipped ticks, even when the
/// record cannot be written ([`record`]: then that is the error). A wait
/// that ended (a stop) is no run.
pub fn end(job: &Job, code: u32, signal: u32, requested: bool) -> Result<(), JobError> {
    let phase = phase(Path::new("."));
    let _ = std::fs::remove_file(JOB_FILE);
    let Some(Phase::Run { tick, start }) = phase else {
        return Ok(());
    };
    if requested {
        return Ok(());
    }
    let tz = schedule::zone(Path::new("/"), job.timezone.as_deref()).map_err(JobError::Zone)?;
    let end_ms = Timestamp::now().as_millisecond();
    let duration_ms = u64::try_from(end_ms - start * 1000).unwrap_or(0);
    let prev = last_run(&job.state_dir, &job.slot).unwrap_or_default();
    let anchor = if tick > 0 { tick } else { start };
    let skipped = ticks_between(&job.when, &tz, anchor, start, end_ms / 1000);
    let r = LastRun {
        tick,
        start,
        duration_ms,
        code,
        signal,
        skipped: prev.skipped + skipped,
    };
    let recorded = record(&job.state_dir, &job.slot, &r);
    crate::s6::fifo::notify(Path::new("event"), RUN_END);
    let took = secs(duration_ms);
    let mut said = Vec::new();
    if !r.ok() {
        said.push(format!("run failed: {} after {took}", result(&r)));
    }
    if skipped > 0 {
        let s = if skipped == 1 { "" } else { "s" };
        said.push(format!(
            "its run of {took} skipped {skipped} tick{s} (one run at a time)"
        ));
    }
    if !said.is_empty() {
        let line = format_args!("job {}: {}", job.slot, said.join("; "));
        crate::msg::say_beside("warning", line);
    }
    recorded
}

/// `4.2s`, `12m3s`.
pub fn secs(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{}s", ms / 1000, ms % 1000 / 100)
    } else {
        super::status_fmt::human_secs(ms / 1000)
    }
}

/// `exit 2`, `SIGTERM`.
pub fn result(r: &LastRun) -> String {
    if r.code == 256 {
        let sig = u8::try_from(r.signal).unwrap_or(0);
        format!("SIG{}", crate::s6::signal::name(sig))
    } else {
        format!("exit {}", r.code)
    }
}

/// `svctl run`: one run now. Under the slot dir's lock: a job waiting for
/// its tick is woken; one that is down is started once (s6's `O`: not
/// again after this run); one whose run goes on is left alone.
pub fn run_now(slot_dir: &Path, st: &Status) -> Result<(), JobError> {
    let lock = lock_dir(slot_dir)?;
    let phase = phase(slot_dir);
    if st.up && matches!(phase, Some(Phase::Run { .. })) {
        return Err(JobError::Running);
    }
    fsutil::write_atomic(&slot_dir.join(RUN_NOW_FILE), b"", 0o644, None)
        .map_err(io_err(format!("unable to write {RUN_NOW_FILE}")))?;
    let sent = match (st.want_up, st.up, phase, st.pid) {
        (true, true, Some(Phase::Next { .. }), Some(pid)) => {
            let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(0));
            (nix::sys::signal::kill(pid, Signal::SIGUSR1))
                .map_err(|e| io_err("unable to wake it")(e.into()))
        }
        // Wanted up, its wait not begun (s6 starts it again after a run):
        // the wait reads the file first.
        (true, _, _, _) => Ok(()),
        // Paused: up once (`s6-svc -o`), not again after this run.
        (false, _, _, _) => {
            use crate::s6::control::SvcCommand::{Once, Up};
            crate::s6::control::write(slot_dir, &[Up, Once]).map_err(JobError::from)
        }
    };
    drop(lock);
    if sent.is_err() {
        let _ = std::fs::remove_file(slot_dir.join(RUN_NOW_FILE));
    }
    sent
}

/// How long after a run a job down and wanted up is between runs: s6
/// starts a service at most once a second, and its `finish` is quick.
const RESPAWN_S: u64 = 3;

/// One job judged for status: what it waits for, its last run, its
/// skipped ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobState {
    /// `cron 0 3 * * *`, `every 60s`.
    pub schedule: String,
    /// While it waits: when it runs next (with its jitter).
    pub next_run: Option<SystemTime>,
    /// A run goes on since then.
    pub running_since: Option<SystemTime>,
    pub last_run: Option<LastRun>,
    /// Down, wanted up, a moment after a run: s6 starts its wait again
    /// (at least a second after the last start), as wanted.
    pub between_runs: bool,
}

impl JobState {
    /// Of the slot in `dir` (s6 says `up`), a job of `schedule` whose
    /// records are under `state_dir`.
    pub fn read(dir: &Path, st: &Status, schedule: &str, state_dir: &Path, slot: &str) -> JobState {
        let up = st.up;
        let (next_run, running_since) = match phase(dir).filter(|_| up) {
            Some(Phase::Next { at: t, .. }) => (Some(at(t)), None),
            Some(Phase::Run { start, .. }) => (None, Some(at(start))),
            None => (None, None),
        };
        JobState {
            schedule: schedule.to_string(),
            next_run,
            running_since,
            last_run: last_run(state_dir, slot),
            between_runs: !up && st.want_up && st.secs_since(SystemTime::now()) < RESPAWN_S,
        }
    }
}

/// `timeout_s`: the watcher of the run `run` (its pid and start time:
/// never another process), started just before the run begins (`svkit
/// job timeout`, detached: no child of the job's program) in the slot dir
/// `slot_dir`. Asleep on the run's pidfd; after `after`, the run is ended
/// as its supervisor would stop it ([`stray::stop_plan`]: the slot's down
/// signal, then KILL to its process group after its `timeout-kill`).
pub fn watch_timeout(
    slot_dir: &Path,
    slot: &str,
    run: crate::stray::Copy,
    after: Duration,
) -> Result<(), JobError> {
    let fd = crate::sys::pidfd_open(run.pid).map_err(io_err("unable to watch its run"))?;
    if crate::stray::Copy::of(run.pid) != Some(run) {
        return Ok(());
    }
    if crate::sys::pidfd_wait(&fd, after).map_err(io_err("unable to watch its run"))? {
        return Ok(());
    }
    let (sig, grace) = crate::stray::stop_plan(slot_dir);
    crate::msg::say_beside(
        "warning",
        format_args!(
            "job {slot}: its run is still going after {} (timeout_s): sending {}",
            secs(u64::try_from(after.as_millis()).unwrap_or(u64::MAX)),
            sig.as_str()
        ),
    );
    crate::stray::end(run, sig, grace).map_err(io_err("unable to end its run"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::TimeZone;

    #[test]
    fn ticks_a_run_outlasted() {
        let utc = TimeZone::UTC;
        // every 1 s from 100: a run from 100 to 103.4 saw 101, 102, 103.
        assert_eq!(ticks_between(&When::Every(1), &utc, 100, 100, 103), 3);
        assert_eq!(ticks_between(&When::Every(60), &utc, 100, 100, 159), 0);
        assert_eq!(ticks_between(&When::Every(60), &utc, 100, 130, 160), 1);
        let hourly = When::Cron(schedule::Cron::parse("@hourly").expect("cron"));
        // 00:30 to 03:10 UTC: 01:00, 02:00, 03:00.
        assert_eq!(ticks_between(&hourly, &utc, 0, 1800, 3 * 3600 + 600), 3);
    }

    #[test]
    fn records_round_trip_and_damage_is_none() {
        let t = tempfile::tempdir().expect("tempdir");
        let r = LastRun {
            tick: 1_800_000_000,
            start: 1_800_000_001,
            duration_ms: 4200,
            code: 256,
            signal: 15,
            skipped: 7,
        };
        record(t.path(), "backup", &r).expect("write");
        assert_eq!(last_run(t.path(), "backup"), Some(r));
        assert_eq!(result(&r), "SIGTERM");
        assert!(!r.ok());
        std::fs::write(record_path(t.path(), "backup"), "1 2 3\n").expect("write");
        assert_eq!(last_run(t.path(), "backup"), None);
        write_phase(t.path(), Phase::Next { tick: 5, at: 7 }).expect("write");
        assert_eq!(phase(t.path()), Some(Phase::Next { tick: 5, at: 7 }));
        write_phase(t.path(), Phase::Run { tick: 5, start: 6 }).expect("write");
        assert_eq!(phase(t.path()), Some(Phase::Run { tick: 5, start: 6 }));
        assert_eq!((secs(4200), secs(125_000)), ("4.2s".into(), "2m05s".into()));
    }

    #[test]
    fn a_run_not_recorded_leaves_no_record_of_the_run_before() {
        let t = tempfile::tempdir().expect("tempdir");
        let ok = LastRun {
            tick: 1,
            start: 2,
            duration_ms: 3,
            ..LastRun::default()
        };
        record(t.path(), "b", &ok).expect("write");
        // The write's temp file name taken: it fails, as on a full disk.
        let tmp = format!(".b.{}.tmp", std::process::id());
        std::fs::create_dir(t.path().join(RECORDS_DIR).join(tmp)).expect("mkdir");
        let failed = LastRun { code: 2, ..ok };
        let e = record(t.path(), "b", &failed).expect_err("unrecorded");
        let e = e.to_string();
        assert!(e.starts_with("unable to record its run in "), "{e}");
        assert!(e.ends_with("/jobs/b: File exists"), "{e}");
        assert_eq!(last_run(t.path(), "b"), None);
        // Neither written nor removed (a dir in its place): said.
        std::fs::create_dir_all(record_path(t.path(), "c").join("x")).expect("mkdir");
        let e = record(t.path(), "c", &failed).expect_err("unrecorded");
        let stays = "; status still shows the run before, unable to remove its record: ";
        assert!(e.to_string().contains(stays), "{e}");
    }
}
