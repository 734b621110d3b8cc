//! The rules of `svkit::slot::health`: desired, failed, ready, in wanted
//! state, autostart, each on hand-made inputs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::PathBuf;

use std::time::{Duration, SystemTime};

use svkit::config::{load_layers, Autostart, FixedInstances, Model};
use svkit::s6::status::{RawStatus, Status};
use svkit::s6::tai64::{Tai64N, TAI64_BASE, TAI_UTC_1970};
use svkit::slot::end::{self, End};
use svkit::slot::health::*;
use svkit::slot::snapshot::Slots;
use svkit::state::{write_desired, Desired, StateError};

fn model(json: &str) -> Model {
    let files = vec![(
        PathBuf::from("/etc/svkit/10.json"),
        json.as_bytes().to_vec(),
    )];
    match load_layers(&files, &FixedInstances::default()) {
        Ok(v) => v.model,
        Err(e) => panic!("{e}"),
    }
}

/// A status as s6 writes it: a death (exit code or signal) 10 s after the
/// last ready stamp, or a run process when `pid` is not 0.
fn raw(pid: u32, wstat: u16, want_up: bool) -> RawStatus {
    let t = |s: u64| Tai64N::new(TAI64_BASE + TAI_UTC_1970 + s, 0).expect("stamp");
    RawStatus {
        stamp: t(1_700_000_010),
        ready_stamp: t(1_700_000_000),
        pid,
        pgid: None,
        wstat,
        paused: false,
        finishing: false,
        want_up,
        ready: false,
    }
}

fn exited(code: u8, deaths: u64) -> Status {
    Status::from_parts(raw(0, u16::from(code) << 8, false), true, deaths)
}

#[test]
fn autostart_decisions() {
    let m = model(
        r#"{"slots": [
        {"name": "r", "command": ["a"], "autostart": "remember"},
        {"name": "e", "command": ["a"], "autostart": {"if_env": "X"}},
        {"name": "n", "command": ["a"], "autostart": "never"},
        {"name": "a", "command": ["a"]}]}"#,
    );
    let mut facts = StartFacts::default();
    let up = |facts: &StartFacts| -> Vec<bool> {
        m.slots.iter().map(|s| autostarts(s, facts)).collect()
    };
    assert_eq!(up(&facts), [false, false, false, true]);
    facts.remembered.insert("r".into(), true);
    facts.env.insert("X".into(), "YES".into());
    assert_eq!(up(&facts), [true, true, false, true]);
    facts.env.insert("X".into(), "no".into());
    facts.remembered.insert("r".into(), false);
    assert_eq!(up(&facts), [false, false, false, true]);
}

#[test]
fn desired_is_the_remembered_state_else_the_down_file() {
    let unread = || -> Result<Option<Desired>, StateError> { panic!("read a state file") };
    assert!(desired_up(None, unread, true));
    assert!(!desired_up(Some(&Autostart::Always), unread, false));
    assert!(desired_up(
        Some(&Autostart::IfEnv("X".into())),
        unread,
        true
    ));
    let rem = Some(&Autostart::Remember);
    assert!(desired_up(rem, || Ok(Some(Desired::Up)), false));
    assert!(!desired_up(rem, || Ok(Some(Desired::Down)), true));
    // Never set: down, whatever the render left.
    assert!(!desired_up(rem, || Ok(None), true));
    // Unusable: what the render decided.
    let bad = || Err(StateError::Corrupt { path: "/x".into() });
    assert!(desired_up(rem, bad, true));
    assert!(!desired_up(rem, bad, false));
}

#[test]
fn kept_down_needs_no_process_and_no_want() {
    assert!(kept_down(&raw(0, 78 << 8, false)));
    assert!(!kept_down(&raw(0, 1 << 8, true)), "s6 will restart it");
    assert!(!kept_down(&raw(42, 0, false)), "up");
    let mut finishing = raw(42, 0, false);
    finishing.finishing = true;
    assert!(!kept_down(&finishing));
}

#[test]
fn failed_and_done_are_what_finish_recorded() {
    let fail = End::Failed("exited 78".into());
    let down = exited(78, 1);
    assert!(failed(&down, Some(&fail)));
    assert!(!done(&down, Some(&fail)));
    // No record: a stop, whatever the exit code (s6 says the same).
    assert!(!failed(&down, None));
    assert!(!failed(&exited(0, 1), None));
    assert!(done(&exited(0, 1), Some(&End::Done)));
    assert!(!failed(&exited(0, 1), Some(&End::Done)));
    // A record only counts while the slot stays down.
    let running = Status::from_parts(raw(42, 0, true), true, 0);
    assert!(!failed(&running, Some(&fail)));
    assert!(!done(&running, Some(&End::Done)));
    let restarting = Status::from_parts(raw(0, 1 << 8, true), true, 1);
    assert!(!failed(&restarting, Some(&fail)));
}

fn verdict(desired_up: bool, failed: bool) -> Verdict {
    Verdict {
        desired_up,
        failed,
        ..Verdict::default()
    }
}

#[test]
fn ready_overdue_and_in_wanted_state() {
    let mut up = raw(42, 0, true);
    let st = |r: RawStatus| Status::from_parts(r, true, 0);
    assert!(!ready(&st(up), true), "notifies, not yet ready");
    assert!(ready(&st(up), false), "up is ready without notification");
    let since = st(up).since;
    let at = |s: u64| since + Duration::from_secs(s);
    let t = Some(Duration::from_secs(30));
    assert!(!ready_overdue(&st(up), true, t, Some(since), at(29)));
    assert!(ready_overdue(&st(up), true, t, Some(since), at(30)));
    assert!(
        !ready_overdue(&st(up), true, None, Some(since), at(3000)),
        "no timeout"
    );
    assert!(
        !ready_overdue(&st(up), false, t, Some(since), at(3000)),
        "ready once up"
    );
    up.ready = true;
    assert!(ready(&st(up), true));
    assert!(!ready_overdue(&st(up), true, t, Some(since), at(3000)));
    // The check counts from the program's start, not from its run's.
    let later = Some(at(100));
    up.ready = false;
    assert!(
        !ready_overdue(&st(up), true, t, later, at(129)),
        "started late"
    );
    assert!(ready_overdue(&st(up), true, t, later, at(130)));
    assert!(!ready_overdue(&st(up), true, t, None, at(3000)), "waiting");
    up.ready = true;
    let mut down = raw(0, 0, false);
    down.ready = true;
    assert!(!ready(&st(down), false));
    assert!(!ready_overdue(&st(down), true, t, Some(since), at(3000)));

    assert!(in_wanted_state(Some(&st(up)), &verdict(true, false)));
    assert!(
        !in_wanted_state(Some(&st(up)), &verdict(true, true)),
        "failed"
    );
    let overdue = Verdict {
        ready_overdue: true,
        ..verdict(true, false)
    };
    assert!(!in_wanted_state(Some(&st(up)), &overdue));
    let unhealthy = Verdict {
        unhealthy: true,
        ..verdict(true, false)
    };
    assert!(
        !in_wanted_state(Some(&st(up)), &unhealthy),
        "liveness failing"
    );
    assert!(
        in_wanted_state(Some(&exited(1, 1)), &verdict(true, false)),
        "down as wanted"
    );
    let crashing = Status::from_parts(raw(0, 1 << 8, true), true, 1);
    assert!(!in_wanted_state(Some(&crashing), &verdict(true, false)));
    assert!(
        !in_wanted_state(None, &verdict(true, false)),
        "unsupervised"
    );
}

#[test]
fn judge_reads_the_config_the_state_and_the_scandir() {
    let t = tempfile::tempdir().expect("tempdir");
    let (scandir, state) = (t.path().join("scan"), t.path().join("state"));
    std::fs::create_dir_all(scandir.join("r")).expect("mkdir");
    std::fs::write(scandir.join("r/down"), "").expect("down");
    std::fs::write(scandir.join("r/notification-fd"), "3\n").expect("fd");
    std::fs::create_dir_all(scandir.join("p")).expect("mkdir");
    let m = model(&format!(
        r#"{{"state_dir": "{}", "slots": [
        {{"name": "d", "command": ["a"]}},
        {{"name": "r", "command": ["a"], "autostart": "remember", "depends_on": {{"d": "up"}},
          "readiness": {{"check": {{"command": ["true"], "timeout_ms": 5000}}}}}}]}}"#,
        state.display()
    ));
    let with = Slots {
        model: Some(&m),
        scandir: &scandir,
    };
    let without = Slots {
        model: None,
        ..with
    };
    let now = SystemTime::now();
    // Without a supervisor: the down file, nothing else.
    assert_eq!(with.verdict("r", None, now), verdict(false, false));
    assert_eq!(without.verdict("p", None, now), verdict(true, false));

    let dead = Status::from_parts(raw(0, 3 << 8, false), false, 1);
    let one_death = |v: Verdict| Verdict { deaths: 1, ..v };
    assert_eq!(
        with.verdict("r", Some(&mut dead.clone()), now),
        one_death(verdict(false, false))
    );
    write_desired(&state, "r", Desired::Up, None).expect("write");
    assert_eq!(
        with.verdict("r", Some(&mut dead.clone()), now),
        one_death(verdict(true, false))
    );
    // Failed is what finish recorded, with or without the config.
    let why = "exited 3, a permanent exit code";
    std::fs::write(
        scandir.join("r").join(end::END_FILE),
        format!("failed: {why}\n"),
    )
    .expect("end");
    let v = with.verdict("r", Some(&mut dead.clone()), now);
    assert!(
        v.failed && !v.done && v.why.as_deref() == Some(why),
        "{v:?}"
    );
    assert!(without.failed("r", &dead));
    // The record outlives the failure: once the slot runs again (an
    // operator's `s6-svc -u`), it is neither failed nor says why.
    let again = Status::from_parts(raw(42, 3 << 8, true), false, 1);
    let v = with.verdict("r", Some(&mut again.clone()), now);
    assert!(!v.failed && v.why.is_none(), "{v:?}");
    // Readiness overdue needs the config's timeout.
    let up = Status::from_parts(raw(42, 0, true), false, 1);
    let later = up.since + Duration::from_secs(6);
    assert!(
        with.verdict("r", Some(&mut up.clone()), later)
            .ready_overdue
    );
    assert!(
        !without
            .verdict("r", Some(&mut up.clone()), later)
            .ready_overdue
    );
    assert!(
        !with
            .verdict("r", Some(&mut up.clone()), up.since)
            .ready_overdue
    );

    // A completion is not a death: a done slot's exit 0, with or without
    // the config; any exit 0 of a slot whose config says it completes.
    std::fs::create_dir_all(scandir.join("r/supervise")).expect("mkdir");
    let record = |code: u8, signal: u8| [[0u8; 12].as_slice(), &[code, signal]].concat();
    let tally = [record(0, 0), record(1, 0), record(143, 15), record(0, 0)].concat();
    std::fs::write(scandir.join("r/supervise/death_tally"), &tally).expect("tally");
    let completed = Status::from_parts(raw(0, 0, false), false, 4);
    std::fs::write(scandir.join("r").join(end::END_FILE), "done\n").expect("end");
    let v = with.verdict("r", Some(&mut completed.clone()), now);
    assert!(v.done && v.deaths == 2, "{v:?}");
    assert_eq!(
        without
            .verdict("r", Some(&mut completed.clone()), now)
            .deaths,
        2
    );
    std::fs::remove_file(scandir.join("r").join(end::END_FILE)).expect("rm");
    let waits = Status::from_parts(raw(0, 0, true), false, 4);
    assert_eq!(with.verdict("r", Some(&mut waits.clone()), now).deaths, 4);
    let job = model(&format!(
        r#"{{"state_dir": "{}", "slots": [{{"name": "r", "command": ["a"], "type": "oneshot"}}]}}"#,
        state.display()
    ));
    let jobs = Slots {
        model: Some(&job),
        ..with
    };
    assert_eq!(jobs.verdict("r", Some(&mut waits.clone()), now).deaths, 2);
    std::fs::remove_file(scandir.join("r/supervise/death_tally")).expect("rm");
    // Waiting for dependencies is not the check's time; the program's
    // start (its run's mark, after s6's stamp) is.
    std::fs::write(scandir.join("r").join(end::WAITING_FILE), "x (up)\n").expect("w");
    let v = with.verdict("r", Some(&mut up.clone()), later);
    assert!(!v.ready_overdue && v.started.is_none(), "{v:?}");
    std::fs::remove_file(scandir.join("r").join(end::WAITING_FILE)).expect("rm");
    let mark = scandir.join("r").join(end::STARTED_FILE);
    let f = std::fs::File::create(&mark).expect("mark");
    let started = up.since + Duration::from_secs(100);
    f.set_modified(started).expect("mtime");
    let v = with.verdict("r", Some(&mut up.clone()), started + Duration::from_secs(4));
    assert!(!v.ready_overdue && v.started == Some(started), "{v:?}");
    assert!(
        with.verdict("r", Some(&mut up.clone()), started + Duration::from_secs(5))
            .ready_overdue
    );
    // A mark older than s6's stamp is an earlier run's.
    f.set_modified(up.since - Duration::from_secs(1))
        .expect("mtime");
    assert_eq!(
        with.verdict("r", Some(&mut up.clone()), now).started,
        Some(up.since)
    );
}

/// A status file s6 could not write since a start: the status becomes
/// what the supervisor runs (up, that pid, since the record), and the
/// note keeps what the file said.
#[test]
fn a_stale_status_file_gives_way_to_what_the_supervisor_runs() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut st = Status::from_parts(raw(54, 0, true), true, 1);
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_100);
    let program = svkit::stray::Copy {
        pid: 96,
        start_time: 7,
    };
    let note = unrecorded(t.path(), &mut st, program, at);
    assert_eq!(note.file_pid, Some(54));
    assert_eq!(note.written, None, "no status file to stat here");
    assert!(st.up && !st.finishing && !st.ready);
    assert_eq!(st.pid, Some(96));
    // To the microsecond of s6's stamps.
    let off = st.since.duration_since(at).expect("not before");
    assert!(off < Duration::from_micros(1), "{off:?}");
    assert!(st.want_up, "s6's want flag is kept");
    let mut none = Status::from_parts(raw(0, 0, false), false, 0);
    assert_eq!(unrecorded(t.path(), &mut none, program, at).file_pid, None);
    assert_eq!(none.pid, Some(96));
}

#[test]
fn backoff_steps_grow_to_max() {
    use svkit::config::Backoff;
    let s = backoff_steps(Backoff {
        max_s: 30,
        reset_after_s: 60,
    });
    let delays: Vec<u32> = s.iter().map(|x| x.2).collect();
    assert_eq!(delays, vec![1, 2, 4, 8, 16, 30]);
    assert_eq!(s[0], (2, 62, 1));
    assert_eq!(s[1], (3, 62 + 1 + 62, 2));
}

/// The crash-loop rule on hand-made tallies: deaths within the window
/// against max_deaths, else the delay of each step that held; a
/// completion counts for nothing, a record older than the window neither.
#[test]
fn the_crash_loop_rule_counts_the_deaths_status_counts() {
    use svkit::config::{Backoff, MaxDeaths};
    use svkit::s6::status::Death;
    let now = Tai64N::new(TAI64_BASE + 1_000_000, 500).unwrap();
    let at = |ago: u64| Tai64N::new(now.label() - ago, now.nanos()).unwrap();
    let crash = Death { code: 1, signal: 0 };
    let done = Death { code: 0, signal: 0 };
    let killed = Death {
        code: 137,
        signal: 9,
    };
    let m = MaxDeaths {
        deaths: 5,
        within_s: 60,
    };
    let max = Some(m);
    let b = Backoff {
        max_s: 30,
        reset_after_s: 60,
    };
    let rule = |tally: &[(Tai64N, Death)], completes| after_death(max, b, completes, tally, now);
    assert_eq!(rule(&[(at(0), crash)], false), AfterDeath::Restart(0));
    assert_eq!(
        rule(&[(at(5), killed), (at(0), crash)], false),
        AfterDeath::Restart(1)
    );
    let three = [(at(9), crash), (at(5), crash), (at(0), crash)];
    assert_eq!(rule(&three, false), AfterDeath::Restart(2));
    let five: Vec<_> = (0..5).map(|i| (at(i * 10), crash)).collect();
    assert_eq!(rule(&five, false), AfterDeath::Fail(m));
    // 60 s ago is within the window; a moment before it is not.
    let edge = [
        (at(60), crash),
        (at(3), crash),
        (at(2), crash),
        (at(1), crash),
        (at(0), crash),
    ];
    assert_eq!(rule(&edge, false), AfterDeath::Fail(m));
    let mut before = edge;
    before[0].0 = Tai64N::new(now.label() - 60, now.nanos() - 1).unwrap();
    assert!(matches!(rule(&before, false), AfterDeath::Restart(_)));
    // Completions: not deaths when the slot completes, deaths otherwise.
    let jobs: Vec<_> = (0..5).map(|i| (at(i), done)).collect();
    assert_eq!(rule(&jobs, false), AfterDeath::Fail(m));
    assert_eq!(rule(&jobs, true), AfterDeath::Restart(0));
    // No max_deaths: the backoff only, capped; max_s 0: none.
    let many: Vec<_> = (0..20).map(|i| (at(i), crash)).collect();
    assert_eq!(
        after_death(None, b, false, &many, now),
        AfterDeath::Restart(30)
    );
    let none = Backoff { max_s: 0, ..b };
    assert_eq!(
        after_death(None, none, false, &many, now),
        AfterDeath::Restart(0)
    );
    // A run that outlived reset_after_s: the steps start over.
    let reset = [
        (at(200), crash),
        (at(199), crash),
        (at(1), crash),
        (at(0), crash),
    ];
    assert_eq!(
        after_death(None, b, false, &reset, now),
        AfterDeath::Restart(1)
    );
}
