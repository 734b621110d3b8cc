//! A slot's log pipe that fills (its logger cannot write: a full disk, a
//! stopped s6-log) blocks every writer. On the real /init: what svkit
//! itself writes never waits on it (the liveness watcher still restarts,
//! `finish` still keeps a slot down), and a readiness check's output never
//! lands between the program's lines.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;

use svctl_common::*;

/// A program that writes far more than a pipe holds (about 64 KiB), once
/// `/data/flood` exists, then idles; `trap` lets a test make it exit 78.
const FLOOD: &str = "trap 'exit 78' USR2; \
    if [ -e /data/flood ]; then i=0; while [ $i -lt 4000 ]; do \
    echo \"flood line $i: 0123456789012345678901234567890123456789\"; i=$((i + 1)); done & fi; \
    sleep 100000 & while :; do wait; done";

/// Stops the slot's s6-log (what a logger that cannot write looks like to
/// the pipe), makes its program flood, and waits until the program is
/// blocked writing to the full pipe. Returns the logger's pid.
fn fill_pipe(sbx: &Sandbox, fx: &Fixture, slot: &str) -> String {
    let logger = svstat(sbx, &format!("{slot}/log"), "pid");
    assert!(sbx.sh(&format!("kill -STOP {logger}")).status.success());
    std::fs::write(fx.data.path().join("flood"), "").expect("write");
    let old = svstat(sbx, slot, "pid");
    sbx.run(&["svctl", "restart", slot], 0);
    poll(
        &format!("{slot}'s writer blocked on its full log pipe"),
        Duration::from_secs(20),
        || {
            let pid = svstat(sbx, slot, "pid");
            if pid == old || pid == "-1" {
                return None;
            }
            // The flooding child of the program: blocked in pipe_write
            // (its wchan is only readable by its own user, without
            // CAP_SYS_PTRACE as in Docker).
            let o = sbx.exec_as("nobody", &["sh", "-c", &format!(
                "for p in /proc/[0-9]*; do grep -q '^PPid:[[:space:]]*{pid}$' $p/status 2>/dev/null && cat $p/wchan; done"
            )]);
            stdout(&o).contains("pipe_write").then_some(())
        },
    );
    logger
}

#[test]
fn a_full_log_pipe_never_stops_a_liveness_restart() {
    if !sandbox_or_skip("a_full_log_pipe_never_stops_a_liveness_restart") {
        return;
    }
    let fx = Fixture::new(&format!(
        r#"{{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      {{ "name": "hung", "command": ["sh", "-c", {flood}],
        "log": {{ "dir": "/data/logs/hung", "stdout": false }},
        "liveness": {{ "exec": ["sh", "-c", "! [ -e /data/fail ]"], "interval_ms": 200,
                      "timeout_ms": 150, "failures": 3 }} }}
    ] }}"#,
        flood = serde_json::to_string(FLOOD).expect("json")
    ));
    let sbx = fx.boot();
    wait_supervised(&sbx, &["hung"]);
    wait_field(&sbx, "hung", "up", "true");
    let logger = fill_pipe(&sbx, &fx, "hung");
    let old = svstat(&sbx, "hung", "pid");
    std::fs::write(fx.data.path().join("fail"), "").expect("write");
    poll(
        "the watcher's restart despite the full pipe",
        Duration::from_secs(10),
        || {
            let now = svstat(&sbx, "hung", "up,pid");
            let p = now.strip_prefix("true ")?;
            (p != old && p != "-1").then_some(())
        },
    );
    // The pipe is full and the logger copies nothing to stdout: the line
    // can only have come through the container's own stderr.
    sbx.wait_for_log(
        "svkit: liveness check of hung failed 3 times in a row",
        Duration::from_secs(10),
    );
    assert!(sbx.sh(&format!("kill -CONT {logger}")).status.success());
}

#[test]
fn a_full_log_pipe_never_stops_finish_from_keeping_a_slot_down() {
    if !sandbox_or_skip("a_full_log_pipe_never_stops_finish_from_keeping_a_slot_down") {
        return;
    }
    let fx = Fixture::new(&format!(
        r#"{{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      {{ "name": "perm", "command": ["sh", "-c", {flood}],
        "log": {{ "dir": "/data/logs/perm", "stdout": false }},
        "restart": {{ "permanent_exit_codes": [78] }} }}
    ] }}"#,
        flood = serde_json::to_string(FLOOD).expect("json")
    ));
    let sbx = fx.boot();
    wait_supervised(&sbx, &["perm"]);
    wait_field(&sbx, "perm", "up", "true");
    let logger = fill_pipe(&sbx, &fx, "perm");
    let pid = svstat(&sbx, "perm", "pid");
    assert!(sbx.sh(&format!("kill -USR2 {pid}")).status.success());
    let end = sbx.root().join("run/service/perm/.svkit-end");
    let why = poll("finish to keep perm down", Duration::from_secs(10), || {
        std::fs::read_to_string(&end).ok()
    });
    assert_eq!(why, "failed: exited 78, a permanent exit code\n", "{end:?}");
    poll("perm down for good", Duration::from_secs(10), || {
        let (_, doc) = status_json(&sbx, &["perm"]);
        let s = &doc["slots"][0];
        (s["failed"] == true && s["up"] == false).then_some(())
    });
    sbx.wait_for_log(
        "svkit: slot perm exited 78, a permanent failure",
        Duration::from_secs(10),
    );
    assert!(sbx.sh(&format!("kill -CONT {logger}")).status.success());
}

/// A program that writes each line in two pieces (as a block-buffered
/// program does at a buffer's edge) while its readiness check prints: the
/// check's output must not land between the pieces.
#[test]
fn readiness_check_output_never_mixes_into_the_programs_lines() {
    if !sandbox_or_skip("readiness_check_output_never_mixes_into_the_programs_lines") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "chk",
        "command": ["sh", "-c", "i=0; while [ $i -lt 30 ]; do printf 'prog %s begin ' $i; sleep 0.03; echo \"end $i\"; i=$((i + 1)); done; echo prog done; exec sleep 100000"],
        "log": { "dir": "/data/logs/chk", "stdout": true },
        "readiness": { "check": { "command": ["sh", "-c", "echo check says hello; echo check complains >&2; [ -e /data/ready ]"],
                                  "interval_ms": 10 } } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["chk"]);
    let current = fx.data.path().join("logs/chk/current");
    let log = poll("the program's last line", Duration::from_secs(20), || {
        std::fs::read_to_string(&current)
            .ok()
            .filter(|t| t.contains("prog done"))
    });
    let mut whole = 0;
    for line in log.lines() {
        assert!(
            !line.contains("check"),
            "check output in the log: {line:?}\n{log}"
        );
        // `TIMESTAMP prog N begin end N`
        let Some((_, rest)) = line.split_once(" prog ") else {
            continue;
        };
        if rest == "done" {
            continue;
        }
        let n = rest.split(' ').next().unwrap_or("");
        assert_eq!(rest, format!("{n} begin end {n}"), "a split line:\n{log}");
        whole += 1;
    }
    assert_eq!(whole, 30, "{log}");
    assert!(!sbx.logs().contains("check says"), "{}", sbx.logs());
    // The operator still sees what the check said, and it still works.
    let out = sbx.root().join("run/service/chk/.svkit-check-output");
    // Rewritten at every run (every 10 ms here): caught between runs.
    poll(
        "the last check run's output",
        Duration::from_secs(10),
        || {
            let said = std::fs::read_to_string(&out).ok()?;
            (said == "check says hello\ncheck complains\n").then_some(())
        },
    );
    std::fs::write(fx.data.path().join("ready"), "").expect("write");
    wait_field(&sbx, "chk", "ready", "true");
}
