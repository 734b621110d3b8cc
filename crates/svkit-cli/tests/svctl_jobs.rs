//! Jobs on a schedule under the real /init: each tick a new run with the
//! slot's user, env and secrets; one run at a time (ticks that come
//! during a run are skipped and counted); `svctl run`, `stop`/`start`,
//! `timeout_s`, `catch_up`, and what status says of them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

/// The lines of a job's log (its `current`), once there are `n`.
fn lines(fx: &Fixture, job: &str, n: usize, deadline: Duration) -> Vec<String> {
    let log = fx.data.path().join(format!("logs/{job}/current"));
    poll(&format!("{n} lines from {job}"), deadline, || {
        let text = std::fs::read_to_string(&log).ok()?;
        // After s6-log's timestamp.
        let l: Vec<String> = (text.lines())
            .map(|l| l.split_once("  ").map_or(l, |(_, t)| t).to_string())
            .collect();
        (l.len() >= n).then_some(l)
    })
}

#[test]
fn every_s_runs_each_tick_as_the_slot_and_never_overlaps() {
    if !sandbox_or_skip("every_s_runs_each_tick_as_the_slot_and_never_overlaps") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "state_dir": "/data/.svkit", "slots": [
  { "name": "tick", "type": "oneshot", "user": "nobody", "env": { "MODE": "m1" },
    "secrets": { "PASS": "/etc/job/pass" },
    "command": ["sh", "-c", "echo \"run $(date +%s) $(id -un) $MODE $PASS $$\""],
    "schedule": { "every_s": 2 }, "log": { "dir": "/data/logs/tick" } },
  { "name": "slow", "type": "oneshot", "user": "nobody",
    "command": ["sh", "-c", "echo start; sleep 3; echo end"],
    "schedule": { "every_s": 1 }, "log": { "dir": "/data/logs/slow" } }
] }"#,
    );
    fx.rootfs.file("etc/job/pass", "s3cret\n");
    std::fs::set_permissions(
        fx.rootfs.path().join("etc/job/pass"),
        std::os::unix::fs::PermissionsExt::from_mode(0o400),
    )
    .unwrap();
    let sbx = fx.boot();

    // Six runs: five periods of 2 s, each run a new process.
    let runs = lines(&fx, "tick", 6, Duration::from_secs(30));
    let mut pids = Vec::new();
    let mut times = Vec::new();
    for l in &runs[..6] {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w.len(), 6, "{runs:?}");
        assert_eq!(&w[2..5], ["nobody", "m1", "s3cret"], "{runs:?}");
        times.push(w[1].parse::<i64>().unwrap());
        pids.push(w[5].to_string());
    }
    let span = times[5] - times[0];
    assert!(
        (9..=11).contains(&span),
        "5 periods of 2 s took {span} s: {runs:?}"
    );
    pids.sort();
    pids.dedup();
    assert_eq!(pids.len(), 6, "each run is a new process: {runs:?}");

    // A 3 s run under every_s 1: never two starts without an end between,
    // and the ticks it outlasted are counted, and said.
    let slow = lines(&fx, "slow", 6, Duration::from_secs(30));
    for pair in slow.chunks(2) {
        assert_eq!(pair[0], "start", "{slow:?}");
        if pair.len() == 2 {
            assert_eq!(pair[1], "end", "{slow:?}");
        }
    }
    let record = std::fs::read_to_string(fx.data.path().join(".svkit/jobs/slow")).unwrap();
    let skipped: u64 = record.split(' ').nth(5).unwrap().trim().parse().unwrap();
    assert!(
        skipped >= 4,
        "two runs of 3 s under every_s 1 skip 2 ticks each: {record}"
    );
    sbx.wait_for_log("job slow: its run of 3.", Duration::from_secs(5));
    assert!(
        sbx.logs().contains(" ticks (one run at a time)"),
        "{}",
        sbx.logs()
    );
    sbx.stop();
}
