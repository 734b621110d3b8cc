//! Decoded statuses checked field by field, and against what s6-svstat
//! prints for them (the oracle in `svstat/`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svstat;

use std::time::{Duration, UNIX_EPOCH};

use svkit::s6::status::{decode, LastExit, RawStatus, Status};
use svkit::s6::tai64::Tai64N;
use svkit::slot::health::kept_down;
use svstat::{
    encode, svstat_fields, SvstatFlavor, FLAG_FINISHING, FLAG_PAUSED, FLAG_READY, FLAG_WANTUP,
    SVSTAT_FIELDS,
};

/// What a `finish` exit 125 leaves: kept down though normally up, after a run.
fn given_up(raw: &RawStatus, normally_up: bool) -> bool {
    normally_up && kept_down(raw) && !raw.never_started()
}

const T0: u64 = 1_796_016_145;

fn tai(unix: u64, nanos: u32) -> Tai64N {
    Tai64N::from_system_time(UNIX_EPOCH + Duration::new(unix, nanos)).unwrap()
}

/// A status record laid out by hand, independent of `RawStatus::encode`.
fn record(stamp: Tai64N, ready: Tai64N, pid: u64, wstat: u16, flags: u8) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&stamp.label().to_be_bytes());
    v.extend_from_slice(&stamp.nanos().to_be_bytes());
    v.extend_from_slice(&ready.label().to_be_bytes());
    v.extend_from_slice(&ready.nanos().to_be_bytes());
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&wstat.to_be_bytes());
    v.push(flags);
    v
}

fn status(bytes: &[u8], normally_up: bool) -> Status {
    let raw = decode(bytes).unwrap();
    assert_eq!(encode(&raw), bytes);
    Status::from_parts(raw, normally_up, 0)
}

fn fields(st: &Status, now_unix: u64, flavor: SvstatFlavor) -> String {
    let now = UNIX_EPOCH + Duration::from_secs(now_unix);
    let f = svstat_fields(st, now, flavor);
    let names: Vec<_> = f.iter().map(|(k, _)| *k).collect();
    assert_eq!(names, SVSTAT_FIELDS);
    // Drop the two stamps: checked separately.
    f.iter()
        .filter(|(k, _)| !k.ends_with("since"))
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn running() {
    let b = record(tai(T0, 600), tai(T0 - 1, 0), 4985, 0, FLAG_WANTUP);
    let st = status(&b, true);
    assert!(st.up && st.want_up && !st.ready && !st.paused && !st.never_started);
    assert_eq!(st.pid, Some(4985));
    assert_eq!(st.last_exit, LastExit::None);
    assert_eq!(st.since, UNIX_EPOCH + Duration::new(T0, 600));
    assert!(!given_up(&st.raw, st.normally_up));
    assert_eq!(st.secs_since(UNIX_EPOCH + Duration::from_secs(T0 + 7)), 6);
    let line = fields(&st, T0 + 7, SvstatFlavor::Before2_13_2);
    assert_eq!(line, "true true true false false 4985 -1 NA -1 6 8");
}

#[test]
fn ready_and_paused() {
    let flags = FLAG_WANTUP | FLAG_READY | FLAG_PAUSED;
    let st = status(&record(tai(T0, 0), tai(T0 + 1, 0), 7, 0, flags), false);
    assert!(st.up && st.ready && st.paused);
    assert_eq!(st.secs_ready(UNIX_EPOCH + Duration::from_secs(T0 + 3)), 2);
    let line = fields(&st, T0 + 3, SvstatFlavor::Since2_13_2);
    assert_eq!(line, "true true false true true 7 -1 NA -1 3 2");
}

#[test]
fn never_started_2_11() {
    // s6-supervise's initial state: both stamps equal, down-ready, wstat 0.
    let b = record(tai(T0, 9), tai(T0, 9), 0, 0, FLAG_READY);
    let st = status(&b, false);
    assert!(st.never_started && !st.up && !st.ready && st.pid.is_none());
    assert_eq!(st.last_exit, LastExit::None);
    assert!(!given_up(&st.raw, st.normally_up));
    // 2.11's s6-svstat has no notion of it and prints exit code 0.
    let line = fields(&st, T0 + 1, SvstatFlavor::Before2_13_2);
    assert_eq!(line, "false false false false false -1 0 NA -1 1 1");
}

#[test]
fn never_started_2_13_2_marker() {
    let b = record(
        tai(T0, 9),
        tai(T0, 9),
        0,
        0,
        FLAG_READY | FLAG_WANTUP | FLAG_PAUSED,
    );
    let st = status(&b, true);
    assert!(st.never_started && !st.paused);
    let line = fields(&st, T0, SvstatFlavor::Since2_13_2);
    assert_eq!(line, "false true true false false -1 -1 NA -1 0 0");
}

#[test]
fn exited_with_code() {
    let b = record(
        tai(T0, 0),
        tai(T0, 4000),
        0,
        3 << 8,
        FLAG_WANTUP | FLAG_READY,
    );
    let st = status(&b, true);
    assert!(!st.up && st.want_up && !st.never_started);
    assert_eq!(st.last_exit, LastExit::Exited(3));
    let line = fields(&st, T0 + 2, SvstatFlavor::Before2_13_2);
    assert_eq!(line, "false true true false false -1 3 NA -1 2 1");
}

#[test]
fn killed_by_signal() {
    let b = record(tai(T0, 0), tai(T0, 100), 0, 15, FLAG_READY);
    let mut raw = decode(&b).unwrap();
    let st = Status::from_parts(raw, true, 2);
    assert_eq!(st.last_exit, LastExit::Signaled(15));
    assert_eq!(st.deaths, 2);
    // Down, not wanted up although normally up: what finish exit 125 leaves.
    assert!(given_up(&st.raw, st.normally_up));
    let line = fields(&st, T0, SvstatFlavor::Before2_13_2);
    assert_eq!(line, "false false true false false -1 -1 SIGTERM 15 0 0");
    raw.wstat = 9 | 0x80; // core dump bit
    let st = Status::from_parts(raw, false, 0);
    assert_eq!(st.last_exit, LastExit::Signaled(9));
    assert!(!given_up(&st.raw, st.normally_up));
    raw.wstat = 0x137f; // a stop status: neither exited nor signaled
    assert_eq!(
        Status::from_parts(raw, false, 0).last_exit,
        LastExit::Other(0x137f)
    );
}

#[test]
fn finishing() {
    // The finish script's pid is in the pid field; the run's wstat stays.
    let b = record(
        tai(T0, 0),
        tai(T0 - 9, 0),
        5000,
        1 << 8,
        FLAG_WANTUP | FLAG_FINISHING,
    );
    let st = status(&b, true);
    assert!(!st.up && st.finishing && st.pid.is_none() && !given_up(&st.raw, st.normally_up));
    assert_eq!(st.last_exit, LastExit::Exited(1));
    let line = fields(&st, T0 + 1, SvstatFlavor::Before2_13_2);
    assert_eq!(line, "false true true false false -1 1 NA -1 1 10");
}

#[test]
fn future_stamps() {
    let b = record(tai(T0 + 100, 0), tai(T0 + 100, 0), 3, 0, FLAG_WANTUP);
    let st = status(&b, true);
    let now = UNIX_EPOCH + Duration::from_secs(T0);
    assert_eq!(st.secs_since(now), 0);
    let f = svstat_fields(&st, now, SvstatFlavor::Before2_13_2);
    // Clamped updownsince, wrapped readyfor, exactly as s6-svstat prints.
    assert_eq!(f[9].1, Tai64N::from_wallclock(now).unwrap().to_string());
    assert_eq!(f[12].1, (u64::MAX - 99).to_string());
}

#[test]
fn s6_2_13_layout_with_pgid() {
    let mut b = record(tai(T0, 0), tai(T0, 0), 42, 0, FLAG_WANTUP);
    b.splice(32..32, 42u64.to_be_bytes());
    let raw = decode(&b).unwrap();
    assert_eq!((raw.pid, raw.pgid, raw.want_up), (42, Some(42), true));
    assert_eq!(encode(&raw), b);
}
