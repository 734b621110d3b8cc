//! `/run` full for a moment (a small tmpfs: `docker run --tmpfs
//! /run:size=…`, a pod's `emptyDir` with a `sizeLimit`), on s6-overlay's
//! real `/init`: s6-supervise cannot write `supervise/status` and says so
//! only in `docker logs`; its file keeps naming the program that died.
//! Once there is room again, `svctl status` shows what the supervisor
//! runs, says its file is stale, never takes the supervised program for
//! a copy left by a dead supervisor, and `svctl stop` stops the slot as
//! s6 does, no more.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod svctl_common;

use std::process::Command;
use std::time::Duration;
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "srv", "command": ["sleep", "100000"] }
  ]
}"#;

/// Gives the sandbox's `/run` tmpfs a size limit, as the engine would at
/// its start (from the host: the container may not remount).
fn limit_run(sbx: &Sandbox, size: &str) {
    let o = Command::new("nsenter")
        .args(["-t", &sbx.init_pid(), "-m", "-r", "-w"])
        .args(["mount", "-o", &format!("remount,size={size}"), "/run"])
        .output()
        .expect("nsenter");
    expect_code(&o, 0);
}

#[test]
fn a_moment_of_full_run_leaves_status_true_and_no_stray() {
    if !sandbox_or_skip("a_moment_of_full_run_leaves_status_true_and_no_stray") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["srv"]);
    wait_field(&sbx, "srv", "up", "true");
    let first = svstat(&sbx, "srv", "pid");
    limit_run(&sbx, "1m");
    // Fills it: head fails once nothing more fits.
    sbx.sh("head -c 100000000 /dev/zero > /run/fill");
    expect_code(&sbx.sh(&format!("kill {first}")), 0);
    // The new program runs and `run` recorded it; s6's file still names
    // the first.
    let second = poll("a new program", Duration::from_secs(15), || {
        let rec = stdout(&sbx.sh("cat /run/service/srv/.svkit-program"));
        let pid = rec.split_whitespace().next()?.to_string();
        (pid != first && sbx.sh(&format!("kill -0 {pid}")).status.success()).then_some(pid)
    });
    sbx.wait_for_log(
        "s6-supervise srv: warning: unable to write status file",
        Duration::from_secs(5),
    );
    expect_code(&sbx.sh("rm /run/fill"), 0);
    assert_eq!(svstat(&sbx, "srv", "pid"), first, "s6's file is stale");
    let (c, v) = status_json(&sbx, &["srv"]);
    let s = &v["slots"][0];
    assert_eq!(c, Some(0), "{v}");
    assert_eq!(s["stray_pid"], serde_json::Value::Null, "{v}");
    assert_eq!(s["pid"].to_string(), second, "{v}");
    assert_eq!(s["status_unrecorded"]["file_pid"].to_string(), first, "{v}");
    let o = sbx.run(&["svctl", "status", "srv"], 0);
    let e = err(&o);
    assert!(
        e.contains("slot srv: its supervisor could not write its status file since")
            && e.contains(&format!(
                "it says pid {first}, gone, but the supervisor runs pid {second}"
            )),
        "{e}"
    );
    assert!(!e.contains("unsupervised"), "{e}");
    // Stopping it is s6's stop: no copy to end beside it, and s6 writes
    // its file anew.
    let o = sbx.run(&["svctl", "stop", "srv"], 0);
    assert!(!err(&o).contains("copy"), "{}", err(&o));
    sbx.wait_gone(&second, Duration::from_secs(10));
    let (c, v) = status_json(&sbx, &["srv"]);
    let s = &v["slots"][0];
    assert_eq!(c, Some(0), "{v}");
    assert_eq!(s["up"], false, "{v}");
    assert_eq!(s["status_unrecorded"], serde_json::Value::Null, "{v}");
    sbx.run(&["svctl", "start", "srv"], 0);
    sbx.run(&["svctl", "status", "srv"], 0);
}
