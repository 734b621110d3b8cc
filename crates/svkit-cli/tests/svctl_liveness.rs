//! When a liveness check restarts a slot, on the real /init: only after
//! `failures` failed checks in a row, and never while the slot is still
//! starting (not ready yet); what the watcher says never lands inside a
//! line the program has not finished.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::{Duration, Instant};

use svctl_common::*;

fn pid(sbx: &Sandbox, slot: &str) -> String {
    svstat(sbx, slot, "pid")
}

/// The failing count `svctl status --json` shows for `slot`'s check.
fn failing(sbx: &Sandbox, slot: &str) -> Option<u64> {
    let (_, doc) = status_json(sbx, &[slot]);
    slot_json(&doc, slot)["liveness"]["failing"].as_u64()
}

fn wait_failing(sbx: &Sandbox, slot: &str, n: u64) {
    poll(
        &format!("{slot}'s check failing {n} times in a row"),
        Duration::from_secs(10),
        || (failing(sbx, slot) == Some(n)).then_some(()),
    );
}

/// A check that fails, passes, then fails again has never failed twice in
/// a row: with `failures: 2` the slot is never restarted, and a pass
/// starts the count over. The check looks once a second, so each state
/// of the file is seen by one check before the test changes it.
#[test]
fn only_failures_in_a_row_restart_a_slot() {
    if !sandbox_or_skip("only_failures_in_a_row_restart_a_slot") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "beat", "command": ["sleep", "100000"],
        "liveness": { "exec": ["test", "!", "-e", "/tmp/beat-fails"],
                      "interval_ms": 1000, "timeout_ms": 500, "failures": 2 } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["beat"]);
    wait_field(&sbx, "beat", "up", "true");
    wait_failing(&sbx, "beat", 0);
    let first = pid(&sbx, "beat");
    for _ in 0..2 {
        sbx.sh("touch /tmp/beat-fails");
        wait_failing(&sbx, "beat", 1);
        // While it fails it is up but not ready.
        let (_, doc) = status_json(&sbx, &["beat"]);
        let b = slot_json(&doc, "beat");
        if b["liveness"]["failing"] == 1 {
            assert_eq!(
                (&b["up"], &b["ready"]),
                (&true.into(), &false.into()),
                "{doc}"
            );
        }
        sbx.sh("rm /tmp/beat-fails");
        wait_failing(&sbx, "beat", 0);
    }
    assert_eq!(pid(&sbx, "beat"), first, "restarted after failures apart");
    // Two in a row do restart it.
    sbx.sh("touch /tmp/beat-fails");
    poll("beat restarted", Duration::from_secs(10), || {
        let now = pid(&sbx, "beat");
        (now != first && now != "-1").then_some(())
    });
}

/// A slot that is not ready yet is still starting: its liveness check
/// counts nothing (a slow start is no hang). Once it is ready, the same
/// failing check restarts it.
#[test]
fn a_slot_that_is_not_ready_yet_is_not_checked() {
    if !sandbox_or_skip("a_slot_that_is_not_ready_yet_is_not_checked") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "slow", "command": ["sleep", "100000"],
        "readiness": { "check": { "command": ["test", "-e", "/tmp/slow-ready"],
                                  "interval_ms": 100, "timeout_ms": 60000 } },
        "liveness": { "exec": ["false"], "interval_ms": 200, "timeout_ms": 100,
                      "failures": 1 } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["slow"]);
    wait_field(&sbx, "slow", "up", "true");
    let first = pid(&sbx, "slow");
    // Not an event to wait for but a span to watch: ten of the check's
    // intervals, in which a counted check would have restarted it.
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        assert_eq!(pid(&sbx, "slow"), first, "restarted before it was ready");
        assert_ne!(
            failing(&sbx, "slow"),
            Some(1),
            "a check counted before ready"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    sbx.sh("touch /tmp/slow-ready");
    poll("slow restarted once ready", Duration::from_secs(10), || {
        let now = pid(&sbx, "slow");
        (now != first && now != "-1").then_some(())
    });
}

/// A liveness record belongs to the run it watched: once the check is
/// removed from the config and the slot runs again without a watcher,
/// the last "failing" of the old run no longer keeps it unready.
#[test]
fn a_record_of_an_earlier_run_counts_for_nothing() {
    if !sandbox_or_skip("a_record_of_an_earlier_run_counts_for_nothing") {
        return;
    }
    let slot = |liveness: &str| {
        format!(
            r#"{{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      {{ "name": "beat", "command": ["sleep", "100000"]{liveness} }} ] }}"#
        )
    };
    let fx = Fixture::new(&slot(
        r#", "liveness": { "exec": ["test", "!", "-e", "/tmp/beat-fails"],
            "interval_ms": 300, "timeout_ms": 200, "failures": 100 }"#,
    ));
    let sbx = fx.boot();
    wait_supervised(&sbx, &["beat"]);
    wait_field(&sbx, "beat", "up", "true");
    sbx.sh("touch /tmp/beat-fails");
    poll("beat's check failing", Duration::from_secs(10), || {
        (failing(&sbx, "beat") >= Some(1)).then_some(())
    });
    let first = pid(&sbx, "beat");
    let o = sbx.reconcile_with(&slot(""));
    expect_code(&o, 0);
    poll("beat running again", Duration::from_secs(10), || {
        let now = pid(&sbx, "beat");
        (now != first && now != "-1").then_some(())
    });
    sbx.wait_gone(&first, Duration::from_secs(10));
    let (code, doc) = status_json(&sbx, &["beat"]);
    let b = slot_json(&doc, "beat");
    assert_eq!(
        (code, &b["ready"], &b["liveness"]),
        (Some(0), &true.into(), &serde_json::Value::Null),
        "{doc}"
    );
}

/// A hung program that ignores its down signal, in a slot without
/// `stop_timeout_ms` (s6 would wait for ever): its liveness restart
/// still ends it, with KILL after the default grace, and a new run
/// starts. The KILL is the watcher's, said in the logs.
#[test]
fn a_program_deaf_to_its_down_signal_is_killed_by_its_liveness_restart() {
    if !sandbox_or_skip("a_program_deaf_to_its_down_signal_is_killed_by_its_liveness_restart") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "deaf", "command": ["sh", "-c", "trap '' TERM; while :; do sleep 1; done"],
        "liveness": { "exec": ["test", "!", "-e", "/tmp/deaf-hangs"],
                      "interval_ms": 200, "timeout_ms": 100, "failures": 1 } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["deaf"]);
    wait_field(&sbx, "deaf", "up", "true");
    wait_failing(&sbx, "deaf", 0);
    let first = pid(&sbx, "deaf");
    sbx.sh("touch /tmp/deaf-hangs");
    sbx.wait_for_log(
        "liveness check of deaf failed 1 times in a row",
        Duration::from_secs(10),
    );
    // TERM changes nothing; KILL comes after the default grace (3 s).
    poll("deaf restarted", Duration::from_secs(15), || {
        let now = pid(&sbx, "deaf");
        (now != first && now != "-1").then_some(())
    });
    sbx.sh("rm /tmp/deaf-hangs");
    sbx.wait_gone(&first, Duration::from_secs(5));
    let logs = sbx.wait_for_log(
        &format!("slot deaf: pid {first} did not end within 3000 ms of SIGTERM: killed it"),
        Duration::from_secs(5),
    );
    // Asked for: neither a crash nor a clean exit of its own; the new run
    // (or, had its first check come before the rm, the next) is healthy.
    poll("deaf up and passing", Duration::from_secs(15), || {
        let (_, doc) = status_json(&sbx, &["deaf"]);
        let d = slot_json(&doc, "deaf");
        assert_eq!(d["failed"], false, "{d}\n{logs}");
        (d["state"] == "up" && d["liveness"]["failing"] == 0).then_some(())
    });
}

/// A hung program's last line is often unfinished (`loading...`): s6-log
/// keeps it in its memory until a newline comes. The watcher's own lines
/// go to the container's output, never into the slot's pipe, where they
/// would end that line: whole in `docker logs`, and nothing glued to the
/// program's half line in its log files.
#[test]
fn the_watchers_lines_never_end_a_programs_half_line() {
    if !sandbox_or_skip("the_watchers_lines_never_end_a_programs_half_line") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "half", "command": ["sh", "-c", "echo whole-line; printf half-a-line; exec sleep 100000"],
        "log": { "dir": "/data/logs/half" },
        "liveness": { "exec": ["test", "!", "-e", "/tmp/half-hangs"],
                      "interval_ms": 200, "timeout_ms": 100, "failures": 1 } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["half"]);
    wait_field(&sbx, "half", "up", "true");
    wait_failing(&sbx, "half", 0);
    let current = fx.data.path().join("logs/half/current");
    poll("the whole line logged", Duration::from_secs(10), || {
        std::fs::read_to_string(&current)
            .is_ok_and(|c| c.contains("whole-line"))
            .then_some(())
    });
    let first = pid(&sbx, "half");
    sbx.sh("touch /tmp/half-hangs");
    let said = "svkit: warning: liveness check of half failed 1 times in a row";
    let logs = sbx.wait_for_log(said, Duration::from_secs(10));
    poll("half restarted", Duration::from_secs(10), || {
        let now = pid(&sbx, "half");
        (now != first && now != "-1").then_some(())
    });
    sbx.sh("rm /tmp/half-hangs");
    // The new run's first line ends the old run's half line in s6-log:
    // the file then holds what the programs wrote, and only that.
    let file = poll(
        "the next run's line logged",
        Duration::from_secs(10),
        || {
            let c = std::fs::read_to_string(&current).unwrap_or_default();
            (c.matches("whole-line").count() >= 2).then_some(c)
        },
    );
    assert!(
        !file.contains("svkit"),
        "svkit's line in the program's log:\n{file}"
    );
    assert!(file.contains("half-a-linewhole-line"), "{file}");
    assert!(
        logs.lines().any(|l| l.starts_with(said)),
        "the watcher's line is not whole in docker logs:\n{logs}"
    );
}
