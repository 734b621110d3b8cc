//! `kill -9` of a slot's s6-supervise, on s6-overlay's real `/init`:
//! s6-svscan starts a new supervisor, which knows nothing of the program
//! the old one started. The copy left behind never runs beside a new
//! one (the slot's `run` ends it first and says so), and when nothing
//! starts anew it shows in `svctl status` (exit 3, its pid) until
//! `svctl stop` ends it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "srv", "command": ["sleep", "100000"],
      "log": { "dir": "/data/logs/srv", "stdout": false } },
    { "name": "manual", "command": ["sleep", "200000"], "autostart": "never" }
  ]
}"#;

/// The pid of the s6-supervise of `slot` (its argv is `s6-supervise SLOT`).
fn supervisor_of(sbx: &Sandbox, slot: &str) -> String {
    let o = sbx.sh(&format!(
        "for d in /proc/[0-9]*; do [ \"$(tr '\\0' ' ' < $d/cmdline 2>/dev/null)\" = 's6-supervise {slot} ' ] && echo ${{d#/proc/}}; done"
    ));
    let pids = stdout(&o);
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 1, "one supervisor of {slot}: {pids:?}");
    pids[0].to_string()
}

/// Running, not a zombie.
fn runs(sbx: &Sandbox, pid: &str) -> bool {
    sbx.sh(&format!(
        "grep -q '^State:[[:space:]]*[^Z]' /proc/{pid}/status"
    ))
    .status
    .success()
}

#[test]
fn a_copy_left_by_a_killed_supervisor_never_runs_beside_the_new_one() {
    if !sandbox_or_skip("a_copy_left_by_a_killed_supervisor_never_runs_beside_the_new_one") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["srv"]);
    wait_field(&sbx, "srv", "up", "true");
    let first = svstat(&sbx, "srv", "pid");
    let sup = supervisor_of(&sbx, "srv");
    expect_code(&sbx.sh(&format!("kill -9 {sup}")), 0);
    // Both read from one status: read apart, `up` could come from the new
    // supervisor and the pid from the moment before it had any.
    let second = poll("a new copy runs", Duration::from_secs(15), || {
        let st = svstat(&sbx, "srv", "up,pid");
        match st.split_whitespace().collect::<Vec<_>>()[..] {
            ["true", p] if p != first && p.parse::<u32>().is_ok_and(|p| p > 0) => {
                Some(p.to_string())
            }
            _ => None,
        }
    });
    // s6 shows the new pid from the spawn of `run`, whose first step ends
    // the copy; once that pid runs the program itself (`s6-setuidgid`
    // has exec'd into `sleep`), the copy must be gone.
    poll(
        "the new copy runs its program",
        Duration::from_secs(15),
        || {
            let comm = sbx.sh(&format!("cat /proc/{second}/comm"));
            (stdout(&comm).trim() == "sleep").then_some(())
        },
    );
    assert!(
        !runs(&sbx, &first),
        "the first copy ({first}) still runs beside {second}"
    );
    sbx.wait_for_log(
        &format!("slot srv: a copy of its program from before its supervisor was restarted still ran (pid {first}): stopped it"),
        Duration::from_secs(5),
    );
    sbx.run(&["svctl", "status", "srv"], 0);
}

#[test]
fn a_copy_nothing_replaces_shows_in_status_until_stop_ends_it() {
    if !sandbox_or_skip("a_copy_nothing_replaces_shows_in_status_until_stop_ends_it") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["manual"]);
    sbx.run(&["svctl", "start", "manual"], 0);
    wait_field(&sbx, "manual", "up", "true");
    // Its `down` file stays: a new supervisor starts nothing.
    expect_code(&sbx.sh("test -e /run/service/manual/down"), 0);
    let first = svstat(&sbx, "manual", "pid");
    expect_code(
        &sbx.sh(&format!("kill -9 {}", supervisor_of(&sbx, "manual"))),
        0,
    );
    poll("a new supervisor", Duration::from_secs(15), || {
        (supervised(&sbx, "manual") && svstat(&sbx, "manual", "up") == "false").then_some(())
    });
    assert!(runs(&sbx, &first), "the copy left behind runs");
    let (c, v) = status_json(&sbx, &["manual"]);
    assert_eq!(c, Some(3), "{v}");
    assert_eq!(v["slots"][0]["stray_pid"].to_string(), first, "{v}");
    let o = sbx.run(&["svctl", "status", "manual"], 3);
    assert!(
        err(&o).contains(&format!(
            "a copy of its program runs unsupervised (pid {first})"
        )),
        "{}",
        err(&o)
    );
    let o = sbx.run(&["svctl", "stop", "manual"], 0);
    assert!(err(&o).contains(&format!("(pid {first})")), "{}", err(&o));
    assert!(
        !runs(&sbx, &first),
        "svctl stop did not end the copy: {}\n{}",
        err(&o),
        stdout(&sbx.sh(&format!("cat /proc/{first}/status /proc/{first}/cmdline")))
    );
    sbx.run(&["svctl", "status", "manual"], 0);
}

/// A slot with `depends_on` is `waiting` from the first moment its `run`
/// runs, even while the claim spends seconds ending a TERM-deaf copy left
/// by a killed supervisor: s6 already says it is up, and neither status
/// nor `svctl wait` may take it for started before the wait is over.
#[test]
fn a_slot_is_waiting_from_its_first_moment() {
    if !sandbox_or_skip("a_slot_is_waiting_from_its_first_moment") {
        return;
    }
    let fx = Fixture::new(
        r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "base", "command": ["sleep", "100000"] },
    { "name": "deaf", "depends_on": { "base": "up" },
      "command": ["sh", "-c", "trap '' TERM; exec sleep 100001"] }
  ]
}"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["base", "deaf"]);
    poll("deaf started", Duration::from_secs(15), || {
        let (_, doc) = status_json(&sbx, &["deaf"]);
        let s = &doc["slots"][0];
        (s["up"] == true && s["waiting_for"].is_null()).then_some(())
    });
    let sup = supervisor_of(&sbx, "deaf");
    expect_code(&sbx.sh(&format!("kill -9 {sup}")), 0);
    // The new run's claim gives the deaf copy 3 s before KILL: all that
    // time the slot is up for s6 and waiting for svkit.
    poll("the new run waiting", Duration::from_secs(10), || {
        let (code, doc) = status_json(&sbx, &["deaf"]);
        let s = &doc["slots"][0];
        (s["up"] == true && s["waiting_for"] == "base (up)" && code == Some(3)).then_some(())
    });
    sbx.wait_for_log("slot deaf: a copy of its program", Duration::from_secs(10));
    poll("deaf started again", Duration::from_secs(15), || {
        let (code, doc) = status_json(&sbx, &["deaf"]);
        (doc["slots"][0]["waiting_for"].is_null() && code == Some(0)).then_some(())
    });
}
