//! Defaults that end, on the real /init: a slot that keeps dying backs off
//! and becomes `failed` (a oneshot too), a command that cannot be run is
//! failed at once, a completion is no death, a dependent of a failed slot
//! says why it waits, and an essential one that can never start ends the
//! container. Also: readiness and uptime count from the program's start,
//! not from its wait for dependencies; a failing liveness check is not
//! ready.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::{Duration, Instant};

use svctl_common::*;

/// Polls `svctl status --json` until `slot` is `state`; the document.
fn wait_state(sbx: &Sandbox, slot: &str, state: &str, within: Duration) -> serde_json::Value {
    poll(&format!("{slot} {state}"), within, || {
        let (_, doc) = status_json(sbx, &[slot]);
        (slot_json(&doc, slot)["state"] == state).then(|| slot_json(&doc, slot).clone())
    })
}

/// Every slot keeps the default restart policy, except where it says.
const CRASHING: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "job", "type": "oneshot", "command": ["sh", "-c", "exit 1"] },
    { "name": "quick", "command": ["sh", "-c", "exit 0"] },
    { "name": "nf", "command": ["/nonexistent/prog"] },
    { "name": "ok", "type": "oneshot", "command": ["true"] },
    { "name": "web", "command": ["sleep", "1000"], "essential": false,
      "depends_on": { "job": "completed" } }
  ]
}"#;

#[test]
fn a_slot_that_keeps_dying_backs_off_and_fails_by_default() {
    if !sandbox_or_skip("a_slot_that_keeps_dying_backs_off_and_fails_by_default") {
        return;
    }
    let fx = Fixture::new(CRASHING);
    let sbx = fx.boot();
    let start = Instant::now();

    // Not found: failed after its one death, whatever permanent_exit_codes says.
    let nf = wait_state(&sbx, "nf", "failed", Duration::from_secs(15));
    assert_eq!(nf["deaths"], 1, "{nf}");
    assert_eq!(nf["why"], "exited 127: command not found", "{nf}");

    // A completion is not a death.
    let ok = wait_state(&sbx, "ok", "done", Duration::from_secs(15));
    assert_eq!(ok["deaths"], 0, "{ok}");

    // A oneshot that fails, and a worker that exits 0 at once: 5 deaths
    // within 60 s, with growing delays between them, then failed.
    for slot in ["job", "quick"] {
        let s = wait_state(&sbx, slot, "failed", Duration::from_secs(60));
        assert_eq!(s["why"], "died 5 times within 60 s", "{s}");
        assert_eq!(s["deaths"], 5, "{s}");
    }
    let took = start.elapsed();
    let logs = sbx.logs();
    for slot in ["job", "quick"] {
        for delay in [1, 2, 4] {
            let needle = format!("slot {slot} is crash-looping: restarting in {delay} s");
            assert!(logs.contains(&needle), "missing {needle:?} in:\n{logs}");
        }
        assert!(
            logs.contains(&format!(
                "slot {slot} died 5 times within 60 s: not restarting"
            )),
            "{logs}"
        );
    }
    // The delays (1 + 2 + 4 s) were waited out.
    assert!(took >= Duration::from_secs(7), "failed after {took:?}");

    // The dependent waits, and says what for and why it never ends.
    let o = sbx.run(&["svctl", "status"], 3);
    let table = stdout(&o);
    let line = |slot: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{slot} ")))
            .unwrap_or_else(|| panic!("{slot} not in {table}"))
            .to_string()
    };
    assert!(
        line("web").contains("waiting for job (completed)")
            && line("web").contains("job failed for good"),
        "{table}"
    );
    assert!(line("job").contains("died 5 times within 60 s"), "{table}");
    assert!(line("nf").contains("command not found"), "{table}");
    let (_, doc) = status_json(&sbx, &["web"]);
    assert_eq!(
        slot_json(&doc, "web")["blocked_by"],
        serde_json::json!(["job"])
    );

    // Failed stays failed: no restart after the fifth death.
    let before = svstat(&sbx, "job", "up,wantedup");
    assert_eq!(before, "false false");
    sbx.stop();
}

/// `api` is essential and waits for a migration that fails for good.
const ESSENTIAL: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "migrate", "type": "oneshot", "command": ["sh", "-c", "exit 1"],
      "restart": { "max_deaths": 2 } },
    { "name": "api", "command": ["sleep", "1000"], "essential": true,
      "depends_on": { "migrate": "completed" } }
  ]
}"#;

#[test]
fn an_essential_slot_that_can_never_start_ends_the_container() {
    if !sandbox_or_skip("an_essential_slot_that_can_never_start_ends_the_container") {
        return;
    }
    let fx = Fixture::new(ESSENTIAL);
    let sbx = fx.boot();
    let logs = sbx.wait_for_log(
        "is essential: stopping the container with exit code 69",
        Duration::from_secs(30),
    );
    assert!(
        logs.contains("slot api could not start: dependency migrate failed for good: died 2 times within 60 s"),
        "{logs}"
    );
    assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 69, "{logs}");
}

/// `api` waits ~4 s for `dep`, longer than its readiness timeout (1 s),
/// then becomes ready at once; `sick` runs, its liveness check failing.
const STARTS: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "dep", "type": "oneshot", "command": ["sleep", "4"] },
    { "name": "api", "command": ["sleep", "1000"],
      "depends_on": { "dep": "completed" },
      "readiness": { "check": { "command": ["true"], "interval_ms": 100, "timeout_ms": 1000 } } },
    { "name": "sick", "command": ["sleep", "1001"],
      "liveness": { "exec": ["false"], "interval_ms": 200, "timeout_ms": 100, "failures": 100 } }
  ]
}"#;

#[test]
fn readiness_and_uptime_count_from_the_programs_start() {
    if !sandbox_or_skip("readiness_and_uptime_count_from_the_programs_start") {
        return;
    }
    let fx = Fixture::new(STARTS);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["dep", "api"]);
    // Waiting longer than the readiness timeout is neither a timeout nor
    // a reason for `wait ready` to give up.
    poll(
        "api waiting past its readiness timeout",
        Duration::from_secs(10),
        || {
            let (_, doc) = status_json(&sbx, &["api"]);
            let api = slot_json(&doc, "api");
            assert_eq!(api["ready_overdue"], false, "{api}");
            (api["state"] == "waiting" && api["since_s"].as_u64() >= Some(2)).then_some(())
        },
    );
    sbx.run(&["svctl", "wait", "ready", "api", "--timeout", "20000"], 0);
    // Its uptime is the program's, not its run's (which waited 4 s).
    let (_, doc) = status_json(&sbx, &["api"]);
    let api = slot_json(&doc, "api");
    assert_eq!(
        (&api["state"], &api["ready"]),
        (&"up".into(), &true.into()),
        "{api}"
    );
    assert!(api["since_s"].as_u64() < Some(3), "{api}");

    // A failing liveness check: not ready, and status says so (exit 3).
    poll("sick's liveness failing", Duration::from_secs(15), || {
        let (rc, doc) = status_json(&sbx, &["sick"]);
        let s = slot_json(&doc, "sick");
        (s["liveness"]["failing"].as_u64() > Some(0)).then(|| {
            assert_eq!((rc, &s["ready"]), (Some(3), &false.into()), "{s}");
        })
    });
    let o = sbx.run(&["svctl", "status", "sick"], 3);
    let table = stdout(&o);
    let at = table.find("READY").expect("READY column");
    let row = table.lines().nth(1).expect("sick's row");
    assert!(
        row.get(at..).is_some_and(|c| c.starts_with("unhealthy ")),
        "{table}"
    );
    sbx.stop();
}

/// A job run again and again, each run exiting 0, then once failing.
const RERUN: &str = r#"{
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "job", "type": "oneshot",
      "command": ["sh", "-c", "if [ -e /tmp/fail-once ]; then rm /tmp/fail-once; exit 1; fi"] }
  ]
}"#;

/// A oneshot's completions are no deaths, in any view: six runs that
/// exit 0 leave `deaths` at 0 (status, `--json`, metrics), and a failing
/// run after them is its first death, retried, not a crash loop.
#[test]
fn a_oneshot_run_again_counts_no_completion_as_a_death() {
    if !sandbox_or_skip("a_oneshot_run_again_counts_no_completion_as_a_death") {
        return;
    }
    let fx = Fixture::new(RERUN);
    let sbx = fx.boot();
    sbx.run(&["svctl", "wait", "done", "job", "--timeout", "20000"], 0);
    let records = || {
        let o = sbx.sh("s6-svdt /run/service/job | wc -l");
        stdout(&o).trim().parse::<usize>().expect("a count")
    };
    for run in 2..=6 {
        sbx.run(
            &["svctl", "start", "job", "--wait", "--timeout", "20000"],
            0,
        );
        // s6 recorded every run's end: the job did run again.
        assert_eq!(records(), run, "s6's death records after run {run}");
    }
    let (_, doc) = status_json(&sbx, &["job"]);
    let job = slot_json(&doc, "job");
    assert_eq!(
        (&job["state"], &job["deaths"]),
        (&"done".into(), &0.into()),
        "{job}"
    );
    let table = stdout(&sbx.run(&["svctl", "status", "job"], 0));
    let at = table.find("DEATHS").expect("DEATHS column");
    let row = table.lines().nth(1).expect("job's row");
    let cell = row.get(at..).and_then(|c| c.split_whitespace().next());
    assert_eq!(cell, Some("0"), "{table}");
    let metrics = stdout(&sbx.run(&["svctl", "metrics", "job"], 0));
    assert!(
        metrics
            .lines()
            .any(|l| l == r#"svkit_slot_deaths{slot="job"} 0"#),
        "{metrics}"
    );

    // One failure: a death, retried at once, and the retry completes.
    sbx.sh("touch /tmp/fail-once");
    sbx.run(&["svctl", "start", "job"], 0);
    let job = poll("job's failed run retried", Duration::from_secs(20), || {
        let (_, doc) = status_json(&sbx, &["job"]);
        let job = slot_json(&doc, "job").clone();
        let settled = job["state"] == "failed" || (records() == 8 && job["state"] == "done");
        settled.then_some(job)
    });
    assert_eq!(
        (&job["state"], &job["deaths"], &job["why"]),
        (&"done".into(), &1.into(), &serde_json::Value::Null),
        "{job}\n{}",
        sbx.logs()
    );
    sbx.stop();
}
