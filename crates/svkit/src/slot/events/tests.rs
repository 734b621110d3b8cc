use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::s6::status::{RawStatus, Status};
use crate::s6::tai64::Tai64N;
use crate::slot::health::Verdict;

fn status(pid: u32, wstat: u16, want_up: bool, finishing: bool) -> Status {
    let t = Tai64N::from_system_time(UNIX_EPOCH + Duration::from_secs(1_800_000_000)).expect("t");
    let t2 = t.checked_add_nanos(5).expect("t2");
    let raw = RawStatus {
        stamp: t,
        ready_stamp: t2,
        pid,
        pgid: None,
        wstat,
        paused: false,
        finishing,
        want_up,
        ready: false,
    };
    Status::from_parts(raw, true, 1)
}

#[test]
fn bytes_mean_what_the_status_and_the_verdict_say() {
    let v = Verdict::default();
    let up = status(7, 0, true, false);
    assert_eq!(judge(b's', None, &v), Some(What::Supervised));
    assert_eq!(judge(b'u', Some(&up), &v), Some(What::Up));
    assert_eq!(judge(b'U', Some(&up), &v), Some(What::Ready));
    assert_eq!(judge(b'x', None, &v), Some(What::Unsupervised));
    // `O` is always followed by its `D`, which says it all.
    assert_eq!(judge(b'O', Some(&up), &v), None);
    assert_eq!(judge(b'?', Some(&up), &v), None);
    // svkit's own bytes: a job's run began, ended.
    assert_eq!(judge(b'r', Some(&up), &v), Some(What::RunStart));
    assert_eq!(judge(b'R', None, &v), Some(What::RunEnd));
    let finishing = status(9, 9, true, true);
    assert_eq!(judge(b'd', Some(&finishing), &v), Some(What::Down));
    let crashed = status(0, 9, true, false);
    assert_eq!(judge(b'D', Some(&crashed), &v), Some(What::Restarting));
    let stopped = status(0, 15, false, false);
    assert_eq!(judge(b'D', Some(&stopped), &v), Some(What::Stopped));
    let failed = Verdict {
        failed: true,
        why: Some("exited 78".into()),
        ..Verdict::default()
    };
    assert_eq!(judge(b'D', Some(&stopped), &failed), Some(What::Failed));
    let done = Verdict {
        done: true,
        ..Verdict::default()
    };
    assert_eq!(judge(b'D', Some(&stopped), &done), Some(What::Done));
    assert_eq!(judge(b'D', None, &v), Some(What::Finished));
}

#[test]
fn lines_carry_the_exit_and_both_times() {
    let st = status(0, 9, true, true);
    let e = Event {
        time: UNIX_EPOCH + Duration::new(1_800_000_000, 123_456_789),
        slot: "gw-a".into(),
        what: What::Down,
        s6: Some(b'd'),
        status: Some(st),
        deaths: Some(1),
        why: None,
    };
    let v: serde_json::Value = serde_json::from_str(&json_line(&e)).expect("json");
    assert_eq!(v["time"], "2027-01-15T08:00:00.123456Z");
    assert_eq!(v["s6_time"], "2027-01-15T08:00:00.000000Z");
    assert_eq!(v["event"], "down");
    assert_eq!(v["s6"], "d");
    assert_eq!(v["last_exit"]["signal"], "SIGKILL");
    assert_eq!(v["last_exit"]["signum"], 9);
    assert_eq!(v["up"], false);
    assert_eq!(v["want"], "up");
    assert_eq!(v["deaths"], 1);
    assert!(v["pid"].is_null() && v["why"].is_null());
    assert_eq!(
        text_line(&e),
        "2027-01-15T08:00:00.123456Z gw-a down (signal SIGKILL)"
    );
    let removed = Event {
        what: What::Removed,
        s6: None,
        status: None,
        deaths: None,
        ..e
    };
    let v: serde_json::Value = serde_json::from_str(&json_line(&removed)).expect("json");
    assert!(v["s6"].is_null() && v["s6_time"].is_null() && v["up"].is_null());
    assert!(v["deaths"].is_null());
}
