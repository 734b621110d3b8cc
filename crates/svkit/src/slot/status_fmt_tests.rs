use super::*;
use crate::s6::status::{Death, RawStatus};
use crate::s6::tai64::Tai64N;
use crate::slot::health::{self, Verdict};
use std::time::Duration;

fn at(t: SystemTime) -> Tai64N {
    Tai64N::from_system_time(t).expect("stamp")
}

fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

fn raw(pid: u32, wstat: u16, want_up: bool, ready: bool, ago: u64) -> RawStatus {
    let t = at(now() - Duration::from_secs(ago));
    RawStatus {
        stamp: t,
        ready_stamp: t,
        pid,
        pgid: None,
        wstat,
        paused: false,
        finishing: false,
        want_up,
        ready,
    }
}

/// A row as `Slots::verdict` would make it: `v` says failed/done/overdue;
/// ready follows the one rule (`health::ready`), here without notification
/// unless the row is overdue.
fn row(name: &str, r: RawStatus, v: Verdict, log: Option<&str>) -> Row {
    let st = Status::from_parts(r, true, 2);
    let ready = health::ready(&st, v.ready_overdue) && !v.unhealthy && v.waiting.is_none();
    // Two deaths in every tally, the last an exit 0: the done job's
    // completion, a death of every other slot.
    let tally = [Death { code: 1, signal: 0 }, Death { code: 0, signal: 0 }];
    let deaths = health::deaths(&tally, v.done);
    Row {
        name: name.into(),
        ours: true,
        st: Some(st),
        v: Verdict {
            desired_up: true,
            ready,
            deaths,
            ..v
        },
        log_dir: log.map(str::to_string),
        unreadable: None,
        missing: false,
    }
}

fn plain() -> Verdict {
    Verdict::default()
}

fn rows() -> Vec<Row> {
    vec![
        row(
            "gateway-default",
            raw(4242, 0, true, true, 3723),
            plain(),
            Some("/data/logs/gw"),
        ),
        // exit 1, waiting to be restarted
        row("dash", raw(0, 1 << 8, true, false, 5), plain(), None),
        // killed by SIGTERM after `s6-svc -d`
        row("worker", raw(0, 15, false, true, 61), plain(), None),
        // exit 78: permanent failure
        row(
            "broken",
            raw(0, 78 << 8, false, true, 10),
            Verdict {
                failed: true,
                why: Some("exited 78, a permanent exit code".into()),
                ..plain()
            },
            None,
        ),
        // a clean exit kept down by on_clean_exit: stop
        row(
            "job",
            raw(0, 0, false, false, 20),
            Verdict {
                done: true,
                ..plain()
            },
            None,
        ),
        // up, no readiness notification: ready although s6's flag is not set
        row("plainup", raw(77, 0, true, false, 30), plain(), None),
        // up, its readiness check gave up
        row(
            "slow",
            raw(88, 0, true, false, 90),
            Verdict {
                ready_overdue: true,
                ..plain()
            },
            None,
        ),
        // up, its liveness check failing
        row(
            "sick",
            raw(99, 0, true, false, 40),
            Verdict {
                unhealthy: true,
                ..plain()
            },
            None,
        ),
        // its run waits for a dependency that failed for good
        row(
            "web",
            raw(100, 0, true, false, 50),
            Verdict {
                waiting: Some("migrate (completed)".into()),
                blocked_by: vec!["migrate".into()],
                ..plain()
            },
            None,
        ),
        Row {
            name: "orphan".into(),
            ours: false,
            st: None,
            v: plain(),
            log_dir: None,
            unreadable: None,
            missing: false,
        },
    ]
}

#[test]
fn table_is_aligned_without_colour() {
    let t = table(&rows(), now(), false);
    let expected = "\
NAME             STATE         WANT  PID   UPTIME/EXIT                                                    READY      DEATHS  LOG
gateway-default  up            up    4242  1h02m                                                          yes        2       /data/logs/gw
dash             down          up    -     exit 1, 5s ago                                                 -          2       -
worker           down          down  -     SIGTERM, 1m01s ago                                             -          2       -
broken           failed        down  -     exit 78, 10s ago: exited 78, a permanent exit code             -          2       -
job              done          down  -     exit 0, 20s ago                                                -          1       -
plainup          up            up    77    30s                                                            yes        2       -
slow             up            up    88    1m30s                                                          timeout    2       -
sick             up            up    99    40s                                                            unhealthy  2       -
web              waiting       up    100   waiting for migrate (completed), 50s: migrate failed for good  no         2       -
orphan           unsupervised  -     -     supervisor not running                                         -          -       -
";
    assert_eq!(t, expected);
    assert!(!t.contains('\x1b'));
}

#[test]
fn colour_paints_only_the_state() {
    let t = table(&rows(), now(), true);
    assert!(t.contains("\x1b[32mup\x1b[0m"), "{t}");
    assert!(t.contains("\x1b[33mdown\x1b[0m"), "{t}");
    assert!(t.contains("\x1b[31mfailed\x1b[0m"), "{t}");
    assert!(t.contains("\x1b[2mdown\x1b[0m"), "{t}");
    let plain: String = t.replace("\x1b[32m", "").replace("\x1b[33m", "");
    assert!(plain.starts_with("NAME "));
}

#[test]
fn no_log_column_without_log_dirs() {
    let mut r = rows();
    r[0].log_dir = None;
    let t = table(&r, now(), false);
    assert!(!t.contains("LOG"), "{t}");
    assert!(t.lines().all(|l| !l.ends_with(' ')), "{t:?}");
}

#[test]
fn wanted_state_rules() {
    let r = rows();
    let ok: Vec<bool> = r.iter().map(Row::in_wanted_state).collect();
    assert_eq!(
        ok,
        [true, false, true, false, true, true, false, false, false, false]
    );
}

#[test]
fn json_schema() {
    let doc: Value = serde_json::from_str(&json_doc(
        &rows(),
        &["nope".into()],
        &[],
        &Supervision::Overlay,
        now(),
    ))
    .expect("json");
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["unknown"], json!(["nope"]));
    assert_eq!(doc["orphans"], json!([]));
    let s = &doc["slots"];
    let gw = &s[0];
    assert_eq!(gw["name"], "gateway-default");
    assert_eq!(gw["state"], "up");
    assert_eq!(gw["up"], true);
    assert_eq!(gw["want"], "up");
    assert_eq!(gw["normally"], "up");
    assert_eq!(gw["desired"], "up");
    assert_eq!(gw["ready"], true);
    assert_eq!(gw["pid"], 4242);
    assert_eq!(gw["since_s"], 3723);
    assert_eq!(gw["ready_s"], 3723);
    assert_eq!(gw["last_exit"], Value::Null);
    assert_eq!(gw["deaths"], 2);
    assert_eq!(gw["failed"], false);
    assert_eq!(gw["log_dir"], "/data/logs/gw");
    assert_eq!(gw["svkit"], true);
    assert_eq!(gw["supervised"], true);
    let label = gw["since_tai64n"].as_str().expect("label");
    assert!(label.starts_with("@4000") && label.len() == 25, "{label}");
    assert_eq!(s[1]["last_exit"], json!({ "code": 1 }));
    assert_eq!(s[1]["pid"], Value::Null);
    assert_eq!(
        s[2]["last_exit"],
        json!({ "signal": "SIGTERM", "signum": 15 })
    );
    assert_eq!(s[3]["state"], "failed");
    assert_eq!(s[3]["failed"], true);
    assert_eq!(s[3]["why"], "exited 78, a permanent exit code");
    assert_eq!(s[4]["state"], "done");
    assert_eq!(s[4]["done"], true);
    assert_eq!(s[4]["failed"], false);
    assert_eq!(
        (&s[5]["ready"], &s[5]["notified"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(s[6]["ready"], false);
    assert_eq!(s[6]["ready_overdue"], true);
    assert_eq!(s[4]["deaths"], 1, "a completion is not a death");
    assert_eq!(
        (&s[7]["ready"], &s[7]["state"]),
        (&json!(false), &json!("up"))
    );
    assert_eq!(s[8]["blocked_by"], json!(["migrate"]));
    let orphan = &s[9];
    assert_eq!(orphan["supervised"], false);
    assert_eq!(orphan["state"], "unsupervised");
    assert_eq!(orphan["want"], Value::Null);
    // Every object has the same keys, supervised or not.
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().expect("obj").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(gw), keys(orphan));
    assert_eq!(keys(gw).len(), 32);
}

/// A declared slot with no dir (a boot could not make it): a row that
/// says so, never in its wanted state.
#[test]
fn missing_row() {
    let gone = Row {
        name: "gone".into(),
        ours: false,
        st: None,
        v: Verdict {
            desired_up: true,
            ..plain()
        },
        log_dir: Some("/ro/logs/gone".into()),
        unreadable: None,
        missing: true,
    };
    assert!(!gone.in_wanted_state());
    let t = table(std::slice::from_ref(&gone), now(), false);
    let expected = "\
NAME  STATE    WANT  PID  UPTIME/EXIT                   READY  DEATHS  LOG
gone  missing  -     -    declared, not in the scandir  -      -       /ro/logs/gone
";
    assert_eq!(t, expected);
    let doc: Value =
        serde_json::from_str(&json_doc(&[gone], &[], &[], &Supervision::Overlay, now()))
            .expect("json");
    assert_eq!(doc["slots"][0]["state"], "missing");
    assert_eq!(doc["slots"][0]["supervised"], false);
}

#[test]
fn durations() {
    assert_eq!(human_secs(0), "0s");
    assert_eq!(human_secs(59), "59s");
    assert_eq!(human_secs(60), "1m00s");
    assert_eq!(human_secs(3600), "1h00m");
    assert_eq!(human_secs(86400 * 2 + 3600 * 5), "2d05h");
}

/// Another user's slot: a row that says so, `?` where a value is unknown
/// (not `-`, which means none), null in JSON.
#[test]
fn unreadable_slot() {
    let r = Row {
        name: "other".into(),
        ours: true,
        st: None,
        v: Verdict {
            desired_up: true,
            ..plain()
        },
        log_dir: Some("/data/logs/other".into()),
        unreadable: Some(
            "unable to read /run/service/other/supervise/status: Permission denied".into(),
        ),
        missing: false,
    };
    assert!(!r.in_wanted_state());
    let t = table(std::slice::from_ref(&r), now(), false);
    let line = t.lines().nth(1).expect("row");
    let cells: Vec<&str> = line.split("  ").filter(|c| !c.is_empty()).collect();
    assert_eq!(
        cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
        [
            "other",
            "unreadable",
            "?",
            "?",
            "permission denied",
            "?",
            "?",
            "/data/logs/other"
        ],
        "{t}"
    );
    let j = row_json(&r, now());
    assert_eq!(j["state"], "unreadable");
    assert!(j["unreadable"]
        .as_str()
        .is_some_and(|s| s.ends_with("Permission denied")));
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().expect("obj").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&j), keys(&row_json(&rows()[0], now())));
    for k in [
        "supervised",
        "failed",
        "up",
        "ready",
        "pid",
        "deaths",
        "last_exit",
    ] {
        assert!(j[k].is_null(), "{k}: {j}");
    }
    assert_eq!(j["desired"], "up");
    let j = row_json(&rows()[0], now());
    assert!(j["unreadable"].is_null(), "{j}");
}

/// A slot whose program runs in the foreground (an opt-out) is not up:
/// status says what runs, and it is down as wanted; up beside that copy,
/// it is not in its wanted state.
#[test]
fn a_slot_whose_program_runs_in_the_foreground() {
    let fg = |up_pid: u32, want_up: bool| {
        row(
            "worker",
            raw(up_pid, 0, want_up, false, 5),
            Verdict {
                foreground: Some(77),
                ..plain()
            },
            None,
        )
    };
    let down = fg(0, false);
    assert_eq!(down.state(), State::Foreground);
    assert!(down.in_wanted_state());
    let text = table(std::slice::from_ref(&down), now(), false);
    assert!(
        text.contains("foreground  down  -    its program runs in the foreground (pid 77)"),
        "{text}"
    );
    let json = row_json(&down, now());
    assert_eq!(
        (&json["state"], &json["foreground_pid"], &json["up"]),
        (&json!("foreground"), &json!(77), &json!(false))
    );
    let beside = fg(4242, true);
    assert_eq!(beside.state(), State::Up);
    assert!(!beside.in_wanted_state());
}
