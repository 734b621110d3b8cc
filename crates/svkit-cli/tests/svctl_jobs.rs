//! Jobs on a schedule under the real /init: each tick a new run with the
//! slot's user, env and secrets; one run at a time (ticks that come
//! during a run are skipped and counted); `svctl run`, `stop`/`start`,
//! `timeout_s`, `catch_up`, a run that cannot be recorded, and what
//! status says of them.
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
        "two runs of 3 s under every_s 1 skip 3 ticks each: {record}"
    );
    sbx.wait_for_log("job slow: its run of 3.", Duration::from_secs(5));
    assert!(
        sbx.logs().contains(" ticks (one run at a time)"),
        "{}",
        sbx.logs()
    );
    sbx.stop();
}

/// `svctl status --json JOB`'s object, and its exit code.
fn job_json(sbx: &Sandbox, job: &str) -> (Option<i32>, serde_json::Value) {
    let (rc, doc) = status_json(sbx, &[job]);
    (rc, doc["slots"][0].clone())
}

#[test]
fn run_now_status_pause_timeout_and_catch_up() {
    if !sandbox_or_skip("run_now_status_pause_timeout_and_catch_up") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "state_dir": "/data/.svkit", "slots": [
  { "name": "pulse", "type": "oneshot",
    "command": ["sh", "-c", "echo ran; if [ -e /tmp/fail ]; then exit 2; fi"],
    "schedule": { "every_s": 3600 }, "log": { "dir": "/data/logs/pulse" } },
  { "name": "hung", "type": "oneshot", "command": ["sleep", "100"],
    "schedule": { "every_s": 2, "timeout_s": 1 } },
  { "name": "ticker", "type": "oneshot", "command": ["echo", "tick"],
    "schedule": { "every_s": 1 }, "log": { "dir": "/data/logs/ticker" } },
  { "name": "cu", "type": "oneshot", "command": ["echo", "caught up"],
    "schedule": { "every_s": 60, "catch_up": true }, "log": { "dir": "/data/logs/cu" } },
  { "name": "nocu", "type": "oneshot", "command": ["echo", "ran"],
    "schedule": { "every_s": 60 }, "log": { "dir": "/data/logs/nocu" } }
] }"#,
    );
    // Their last runs, from an earlier boot: a tick (100 s ago + 60 s)
    // passed while the container was down.
    let jobs = fx.data.path().join(".svkit/jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for j in ["cu", "nocu"] {
        let t = now - 100;
        std::fs::write(jobs.join(j), format!("{t} {t} 10 0 0 0\n")).unwrap();
    }
    let sbx = fx.boot();

    // catch_up: the missed tick runs once at boot; without it, the next.
    lines(&fx, "cu", 1, Duration::from_secs(15));
    let (_, cu) = job_json(&sbx, "cu");
    assert_eq!(cu["last_run"]["exit"], 0, "{cu}");
    assert!(
        !fx.data.path().join("logs/nocu/current").exists()
            || lines(&fx, "nocu", 0, Duration::ZERO).is_empty(),
        "nocu ran"
    );
    let (_, nocu) = job_json(&sbx, "nocu");
    assert_eq!(nocu["state"], "scheduled", "{nocu}");

    // Waiting: scheduled, its next run in the JSON and the table.
    let (rc, p) = poll("pulse scheduled", Duration::from_secs(10), || {
        let (rc, p) = job_json(&sbx, "pulse");
        (p["state"] == "scheduled").then_some((rc, p))
    });
    assert_eq!(rc, Some(0), "{p}");
    assert_eq!(p["schedule"], "every 3600s", "{p}");
    assert!(p["next_run"].is_string() && p["last_run"].is_null(), "{p}");
    assert_eq!(p["skipped"], 0, "{p}");
    let table = stdout(&sbx.exec(&["svctl", "status", "pulse"]));
    assert!(
        table.contains("scheduled") && table.contains("next ") && table.contains("(in 59m"),
        "{table}"
    );

    // svctl run: at once, its exit code with --wait; an event at its
    // start and its end.
    expect_code(
        &sbx.sh("(timeout 30 svctl events pulse > /tmp/ev 2>&1 &)"),
        0,
    );
    poll("svctl events subscribed", Duration::from_secs(5), || {
        let o = sbx.sh("ls /run/service/pulse/event | grep -q ftrig1");
        o.status.success().then_some(())
    });
    let o = sbx.exec(&["svctl", "run", "--wait", "pulse"]);
    expect_code(&o, 0);
    let seen =
        |ev: &str| ev.contains(" pulse run-start\n") && ev.contains(" pulse run-end (exit 0)\n");
    let ev = poll("run events", Duration::from_secs(5), || {
        let ev = stdout(&sbx.sh("cat /tmp/ev"));
        (seen(&ev) || ev.contains("run-end")).then_some(ev)
    });
    assert!(seen(&ev), "{ev}");
    assert_eq!(lines(&fx, "pulse", 1, Duration::from_secs(5)), ["ran"]);
    let (rc, p) = job_json(&sbx, "pulse");
    assert_eq!(
        (rc, &p["last_run"]["exit"]),
        (Some(0), &serde_json::json!(0)),
        "{p}"
    );

    // A failed run: failed (status exits 3) until a run succeeds; one line.
    expect_code(&sbx.sh("touch /tmp/fail"), 0);
    expect_code(&sbx.exec(&["svctl", "run", "--wait", "pulse"]), 2);
    let (rc, p) = job_json(&sbx, "pulse");
    assert_eq!(
        (rc, &p["state"]),
        (Some(3), &serde_json::json!("failed")),
        "{p}"
    );
    let table = stdout(&sbx.exec(&["svctl", "status", "pulse"]));
    assert!(table.contains("last failed: exit 2 after "), "{table}");
    sbx.wait_for_log(
        "job pulse: run failed: exit 2 after ",
        Duration::from_secs(5),
    );
    expect_code(&sbx.sh("rm /tmp/fail"), 0);
    expect_code(&sbx.exec(&["svctl", "run", "--wait", "pulse"]), 0);
    let (rc, _) = poll("pulse healthy", Duration::from_secs(10), || {
        let (rc, p) = job_json(&sbx, "pulse");
        (rc == Some(0)).then_some((rc, p))
    });
    assert_eq!(rc, Some(0));

    // Paused: svctl stop; a run asked for runs once and it stays paused.
    expect_code(&sbx.exec(&["svctl", "stop", "--wait", "pulse"]), 0);
    expect_code(&sbx.exec(&["svctl", "run", "--wait", "pulse"]), 0);
    assert_eq!(lines(&fx, "pulse", 4, Duration::from_secs(5)).len(), 4);
    wait_field(&sbx, "pulse", "up", "false");
    let (_, p) = job_json(&sbx, "pulse");
    assert_eq!(p["state"], "down", "{p}");

    // stop pauses a job ticking every second; start resumes it.
    wait_field(&sbx, "ticker", "up", "true");
    expect_code(&sbx.exec(&["svctl", "stop", "--wait", "ticker"]), 0);
    let n = lines(&fx, "ticker", 0, Duration::ZERO).len();
    // An observation window of three ticks, not a synchronisation.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        lines(&fx, "ticker", 0, Duration::ZERO).len(),
        n,
        "ran while stopped"
    );
    expect_code(&sbx.exec(&["svctl", "start", "--wait", "ticker"]), 0);
    lines(&fx, "ticker", n + 2, Duration::from_secs(10));

    // timeout_s: the hung run gets SIGTERM after 1 s; failed.
    let h = poll("hung timed out", Duration::from_secs(15), || {
        let (_, h) = job_json(&sbx, "hung");
        (h["last_run"]["exit"] == "SIGTERM").then_some(h)
    });
    assert_eq!(h["failed"], true, "{h}");
    let d = h["last_run"]["duration_s"].as_f64().unwrap();
    assert!((1.0..3.0).contains(&d), "{h}");
    assert!(
        sbx.logs()
            .contains("job hung: its run is still going after 1.0s (timeout_s): sending SIGTERM"),
        "{}",
        sbx.logs()
    );
    sbx.stop();
}

/// A run whose result cannot be recorded (its `state_dir` full) is still
/// said failed, with why; the record of the run before is removed, so
/// status never shows that earlier success as its last run.
#[test]
fn a_run_not_recorded_is_said_and_not_shown_as_the_run_before() {
    if !sandbox_or_skip("a_run_not_recorded_is_said_and_not_shown_as_the_run_before") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "state_dir": "/data/.svkit", "slots": [
  { "name": "flaky", "type": "oneshot",
    "command": ["sh", "-c", "if [ -e /tmp/fail ]; then exit 2; fi"],
    "schedule": { "every_s": 3600 } },
  { "name": "long", "type": "oneshot", "command": ["sleep", "100"],
    "schedule": { "every_s": 3600 } }
] }"#,
    );
    let sbx = fx.boot();
    // A run ended by a stop has no result: `--wait` ends with it.
    poll("long scheduled", Duration::from_secs(10), || {
        (job_json(&sbx, "long").1["state"] == "scheduled").then_some(())
    });
    let bg = "(svctl run --wait --timeout 30s long; echo \"rc=$?\") > /tmp/rw 2>&1 &";
    expect_code(&sbx.sh(bg), 0);
    poll("long running", Duration::from_secs(10), || {
        let o = sbx.sh("grep -q '^run ' /run/service/long/.svkit-job");
        o.status.success().then_some(())
    });
    expect_code(&sbx.exec(&["svctl", "stop", "long"]), 0);
    let rw = poll("svctl run --wait ended", Duration::from_secs(10), || {
        let rw = stdout(&sbx.sh("cat /tmp/rw"));
        rw.contains("rc=").then_some(rw)
    });
    assert!(
        rw.ends_with("long ended with no result recorded: stopped or restarted, or its record could not be written (see the container's output)\nrc=1\n"),
        "{rw}"
    );
    poll("flaky scheduled", Duration::from_secs(10), || {
        (job_json(&sbx, "flaky").1["state"] == "scheduled").then_some(())
    });
    expect_code(&sbx.exec(&["svctl", "run", "--wait", "flaky"]), 0);
    assert_eq!(job_json(&sbx, "flaky").1["last_run"]["exit"], 0);

    // Its records on a tmpfs of one page (mounted from the host, as the
    // engine would: the container may not mount), taken by the record.
    expect_code(&sbx.sh("cp /data/.svkit/jobs/flaky /tmp/"), 0);
    let o = std::process::Command::new("nsenter")
        .args(["-t", &sbx.init_pid(), "-m", "-r", "-w"])
        .args(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs"])
        .arg("/data/.svkit/jobs")
        .output()
        .expect("nsenter");
    expect_code(&o, 0);
    let full = sbx.sh("set -e; cd /data/.svkit/jobs; cp /tmp/flaky .
         dd if=/dev/zero of=fill bs=1k 2>/dev/null || true
         if head -c 1 /dev/zero > probe; then exit 9; fi; rm -f probe; touch /tmp/fail");
    assert!(err(&full).contains("No space left on device"), "{full:?}");
    // `--wait` ends with the run, though no record of it changes.
    let o = sbx.exec(&["svctl", "run", "--wait", "--timeout", "30s", "flaky"]);
    expect_code(&o, 1);
    let said = "svctl: fatal: the run of flaky ended with no result recorded: stopped or restarted, or its record could not be written (see the container's output)\n";
    assert_eq!(err(&o), said);
    let logs = sbx.wait_for_log(
        "job flaky: unable to record its run in /data/.svkit/jobs/flaky: No space left on device",
        Duration::from_secs(10),
    );
    assert!(
        logs.contains("job flaky: run failed: exit 2 after "),
        "{logs}"
    );
    let (_, j) = poll("flaky waiting again", Duration::from_secs(10), || {
        let (rc, j) = job_json(&sbx, "flaky");
        (j["state"] == "scheduled").then_some((rc, j))
    });
    assert!(
        j["last_run"].is_null(),
        "the run before shown as the last: {j}"
    );
    expect_code(&sbx.sh("! test -e /data/.svkit/jobs/flaky"), 0);
    sbx.stop();
}

/// A cron job runs at its minute, within a second of it (the sandbox's
/// clock is the host's).
#[test]
fn cron_runs_within_a_second_of_its_minute() {
    if !sandbox_or_skip("cron_runs_within_a_second_of_its_minute") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "state_dir": "/data/.svkit", "slots": [
  { "name": "minutely", "type": "oneshot", "command": ["echo", "ran"],
    "schedule": { "cron": "* * * * *" }, "log": { "dir": "/data/logs/minutely" } }
] }"#,
    );
    let sbx = fx.boot();
    lines(&fx, "minutely", 1, Duration::from_secs(75));
    // s6-log's stamp: `2026-12-03 18:07:22.007229608`, UTC.
    let text = std::fs::read_to_string(fx.data.path().join("logs/minutely/current")).unwrap();
    let stamp = text.split("  ").next().unwrap();
    let secs: f64 = stamp.rsplit(':').next().unwrap().parse().unwrap();
    assert!(secs < 1.0, "ran {secs} s past its minute: {text}");
    sbx.stop();
}

/// A timezone the image lacks: at boot a located warning and the job left
/// out (the others run); `svctl apply` refuses the config.
#[test]
fn a_timezone_the_image_lacks_leaves_the_job_out_at_boot() {
    if !sandbox_or_skip("a_timezone_the_image_lacks_leaves_the_job_out_at_boot") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "state_dir": "/data/.svkit", "slots": [
  { "name": "ok", "type": "oneshot", "command": ["true"], "schedule": { "cron": "@daily" } },
  { "name": "mars", "type": "oneshot", "command": ["true"],
    "schedule": { "cron": "@daily", "timezone": "Mars/Olympus" } }
] }"#,
    );
    let sbx = fx.boot();
    let logs = sbx.wait_for_log("the job is left out", Duration::from_secs(10));
    assert!(
        logs.contains("10-test.json:4:37: slots[1].schedule.timezone: `Mars/Olympus`: no such timezone in /usr/share/zoneinfo"),
        "{logs}"
    );
    let (_, ok) = poll("ok scheduled", Duration::from_secs(10), || {
        let (rc, j) = job_json(&sbx, "ok");
        (j["state"] == "scheduled").then_some((rc, j))
    });
    assert_eq!(ok["schedule"], "cron @daily", "{ok}");
    let (rc, mars) = job_json(&sbx, "mars");
    assert_eq!(
        (rc, &mars["state"]),
        (Some(3), &serde_json::json!("missing")),
        "{mars}"
    );
    let o = sbx.exec(&["svctl", "apply"]);
    expect_code(&o, 1);
    assert!(
        err(&o).contains("`Mars/Olympus`: no such timezone"),
        "{}",
        err(&o)
    );
    sbx.stop();
}
