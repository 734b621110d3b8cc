//! The rules of `svkit::s6::health`: desired, failed, ready, in wanted
//! state, autostart, each on hand-made inputs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::PathBuf;

use svkit::config::{
    load_layers, Autostart, FixedInstances, MaxDeaths, Model, OnCleanExit, Restart,
};
use svkit::s6::health::*;
use svkit::s6::status::{RawStatus, Status};
use svkit::s6::tai64::{Tai64N, TAI64_BASE, TAI_UTC_1970};
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

fn no_tally(_: u32) -> Option<u64> {
    panic!("the death tally is only read for max_deaths")
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
fn given_up_needs_a_death_and_no_want() {
    assert!(given_up(&raw(0, 78 << 8, false), true));
    assert!(!given_up(&raw(0, 78 << 8, false), false), "not desired up");
    assert!(!given_up(&raw(0, 1 << 8, true), true), "s6 will restart it");
    assert!(!given_up(&raw(42, 0, false), true), "up");
    let mut finishing = raw(42, 0, false);
    finishing.finishing = true;
    assert!(!given_up(&finishing, true));
    let mut never = raw(0, 0, false);
    never.ready = true;
    never.ready_stamp = never.stamp;
    assert!(never.never_started() && !given_up(&never, true));
}

#[test]
fn failed_follows_what_finish_does() {
    // svkit's default policy: exit 78 is permanent, a stop is not.
    assert!(failed(&exited(78, 1), true, None, no_tally));
    assert!(!failed(&exited(78, 1), false, None, no_tally));
    assert!(!failed(&exited(1, 1), true, None, no_tally));
    let stopped = Status::from_parts(raw(0, 15, false), true, 1);
    assert!(!failed(&stopped, true, None, no_tally));
    let running = Status::from_parts(raw(42, 0, true), true, 0);
    assert!(!failed(&running, true, None, no_tally));

    let codes = Restart {
        permanent_exit_codes: vec![1],
        ..Restart::default()
    };
    assert!(failed(&exited(1, 1), true, Some(&codes), no_tally));
    assert!(!failed(&exited(78, 1), true, Some(&codes), no_tally));
    let stop = Restart {
        on_clean_exit: OnCleanExit::Stop,
        ..Restart::default()
    };
    assert!(failed(&exited(0, 1), true, Some(&stop), no_tally));
    assert!(!failed(&exited(0, 1), true, None, no_tally));
}

#[test]
fn max_deaths_counts_within_the_window() {
    let r = Restart {
        max_deaths: Some(MaxDeaths {
            deaths: 3,
            within_s: 60,
        }),
        ..Restart::default()
    };
    let within = |n: Option<u64>| {
        move |secs: u32| {
            assert_eq!(secs, 60);
            n
        }
    };
    // Fewer deaths in the whole tally: the tally is not read.
    assert!(!failed(&exited(1, 2), true, Some(&r), no_tally));
    assert!(failed(&exited(1, 3), true, Some(&r), within(Some(3))));
    assert!(!failed(&exited(1, 5), true, Some(&r), within(Some(2))));
    assert!(!failed(&exited(1, 5), true, Some(&r), within(None)));
}

#[test]
fn ready_and_in_wanted_state() {
    let mut up = raw(42, 0, true);
    let st = |r: RawStatus| Status::from_parts(r, true, 0);
    assert!(!ready(&st(up), true), "notifies, not yet ready");
    assert!(ready(&st(up), false), "up is ready without notification");
    up.ready = true;
    assert!(ready(&st(up), true));
    let mut down = raw(0, 0, false);
    down.ready = true;
    assert!(!ready(&st(down), false));

    assert!(in_wanted_state(Some(&st(up)), false));
    assert!(!in_wanted_state(Some(&st(up)), true), "failed");
    assert!(
        in_wanted_state(Some(&exited(1, 1)), false),
        "down as wanted"
    );
    let crashing = Status::from_parts(raw(0, 1 << 8, true), true, 1);
    assert!(!in_wanted_state(Some(&crashing), false));
    assert!(!in_wanted_state(None, false), "unsupervised");
}

#[test]
fn judge_reads_the_config_the_state_and_the_scandir() {
    let t = tempfile::tempdir().expect("tempdir");
    let (scandir, state) = (t.path().join("scan"), t.path().join("state"));
    std::fs::create_dir_all(scandir.join("r")).expect("mkdir");
    std::fs::write(scandir.join("r/down"), "").expect("down");
    std::fs::create_dir_all(scandir.join("p")).expect("mkdir");
    let m = model(&format!(
        r#"{{"state_dir": "{}", "slots": [
        {{"name": "r", "command": ["a"], "autostart": "remember",
          "restart": {{"permanent_exit_codes": [3]}}}}]}}"#,
        state.display()
    ));
    let with = Judge {
        model: Some(&m),
        scandir: &scandir,
    };
    let without = Judge {
        model: None,
        ..with
    };
    let verdict = |desired_up, failed| Verdict { desired_up, failed };
    // Without a supervisor: the down file, never failed.
    assert_eq!(with.verdict("r", None), verdict(false, false));
    assert_eq!(without.verdict("p", None), verdict(true, false));

    let dead = Status::from_parts(raw(0, 3 << 8, false), false, 1);
    assert_eq!(with.verdict("r", Some(&dead)), verdict(false, false));
    write_desired(&state, "r", Desired::Up, None).expect("write");
    assert_eq!(with.verdict("r", Some(&dead)), verdict(true, true));
    // Without the config: the down file, and exit 3 is not permanent.
    assert_eq!(without.verdict("r", Some(&dead)), verdict(false, false));
    assert!(!without.failed("r", &dead, true));
    assert!(with.failed("r", &dead, true));
}
