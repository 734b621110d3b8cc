//! A logger is part of a slot's health, on s6-overlay's real `/init`: a
//! full log volume and a logger that stopped draining its pipe make
//! `svctl status` exit 3 with the reason, `wait ready` fail and the
//! metric drop, the watcher says so once in the container's output, and
//! all of it clears when the logger can write again, with no line lost.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use svctl_common::*;

/// A tmpfs of `size` mounted on a fresh dir, unmounted when dropped: the
/// container's data volume with a size of its own.
struct SmallVolume {
    dir: tempfile::TempDir,
}

impl SmallVolume {
    fn new(size: &str) -> SmallVolume {
        let dir = tempfile::tempdir().expect("tempdir");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755")])
            .arg("tmpfs")
            .arg(dir.path())
            .status()
            .expect("mount");
        assert!(st.success(), "mount tmpfs (needs root)");
        let state = dir.path().join(".svkit");
        std::fs::create_dir(&state).expect("mkdir");
        std::os::unix::fs::chown(&state, Some(NOBODY), Some(NOBODY)).expect("chown");
        SmallVolume { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallVolume {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// `svctl status SLOT` exit code and both streams.
fn status(sbx: &Sandbox, slot: &str) -> (Option<i32>, String, String) {
    let o = sbx.exec(&["svctl", "status", slot]);
    (code(&o), stdout(&o), err(&o))
}

fn log_fault_kind(sbx: &Sandbox, slot: &str) -> Option<String> {
    let (_, v) = status_json(sbx, &[slot]);
    v["slots"][0]["log_fault"]["kind"]
        .as_str()
        .map(str::to_string)
}

fn metric(sbx: &Sandbox, line_start: &str) -> Option<String> {
    let o = sbx.exec(&["svctl", "metrics"]);
    stdout(&o)
        .lines()
        .find(|l| l.starts_with(line_start))
        .map(str::to_string)
}

/// Every numbered body `N` in the log dir's files, archives first.
fn numbers_logged(dir: &Path) -> Vec<u64> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        n.starts_with('@') || n == "previous" || n == "current"
    });
    // Archive names sort in time order; then `previous` (a rotation under
    // way: it becomes an archive), then `current`.
    files.sort_by_key(|p| {
        let n = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        (n == "previous" || n == "current", n == "current", n)
    });
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for l in text.lines() {
            if let Some(n) = l.split("line ").nth(1).and_then(|r| r.split(' ').next()) {
                if let Ok(n) = n.parse() {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// `0-1929, 2825-2999`: consecutive numbers as one run.
fn runs(n: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < n.len() {
        let mut j = i;
        while j + 1 < n.len() && n[j + 1] == n[j] + 1 {
            j += 1;
        }
        out.push(format!("{}-{}", n[i], n[j]));
        i = j + 1;
    }
    out.join(", ")
}

const LINES: u64 = 3000;

/// 3000 numbered lines of ~100 bytes (~330 kB with timestamps), then idle.
fn config() -> String {
    format!(
        r#"{{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    {{ "name": "noisy",
      "command": ["sh", "-c", "i=0; while [ $i -lt {LINES} ]; do echo \"line $i ..........................................................................\"; i=$((i+1)); done; exec sleep 100000"],
      "log": {{ "dir": "/data/logs/noisy", "stdout": false, "keep": 50, "max_bytes": 50000 }} }}
  ]
}}"#
    )
}

#[test]
fn a_full_log_volume_is_visible_and_loses_nothing_once_freed() {
    if !sandbox_or_skip("a_full_log_volume_is_visible_and_loses_nothing_once_freed") {
        return;
    }
    let vol = SmallVolume::new("1m");
    // Leave ~150 kB for the logs: the 330 kB of lines cannot fit.
    let filler = vol.path().join("filler");
    std::fs::write(&filler, vec![b'x'; 870 * 1024]).expect("filler");
    let rootfs = Rootfs::with_svkit(&config());
    let sbx = Sandbox::boot_with_data(rootfs.path(), vol.path());
    wait_supervised(&sbx, &["noisy"]);

    let why = poll(
        "status names the full log disk",
        Duration::from_secs(20),
        || {
            let (c, out, err) = status(&sbx, "noisy");
            (c == Some(3) && out.contains("disk full!")).then_some(err)
        },
    );
    assert!(
        why.contains("no space left for log dir /data/logs/noisy"),
        "{why}"
    );
    assert_eq!(log_fault_kind(&sbx, "noisy").as_deref(), Some("disk_full"));
    let o = sbx.exec(&["svctl", "wait", "ready", "noisy", "--timeout", "300"]);
    assert_eq!(
        code(&o),
        Some(1),
        "wait ready while the disk is full: {}",
        err(&o)
    );
    assert!(err(&o).contains("no space left"), "{}", err(&o));
    assert_eq!(
        metric(&sbx, "svkit_slot_log_ok{slot=\"noisy\"}").as_deref(),
        Some("svkit_slot_log_ok{slot=\"noisy\"} 0")
    );
    let said = "svkit: warning: slot noisy: no space left";
    sbx.wait_for_log(said, Duration::from_secs(10));

    std::fs::remove_file(&filler).expect("free the space");
    poll("status healthy again", Duration::from_secs(20), || {
        (status(&sbx, "noisy").0 == Some(0)).then_some(())
    });
    let dir = vol.path().join("logs/noisy");
    // Every line, once, in order: polled until so (a rotation may still be
    // under way when the last line lands), shown as runs when not.
    let want: Vec<u64> = (0..LINES).collect();
    let end = Instant::now() + Duration::from_secs(20);
    let got = loop {
        let n = numbers_logged(&dir);
        if n == want || Instant::now() > end {
            break n;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    assert!(
        got == want,
        "lines lost or repeated: logged {}; files {:?}",
        runs(&got),
        std::fs::read_dir(&dir).map(|rd| rd.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
    );
    sbx.wait_for_log(
        "slot noisy: its output gets through its logger again",
        Duration::from_secs(10),
    );
    assert_eq!(
        metric(&sbx, "svkit_slot_log_ok{slot=\"noisy\"}").as_deref(),
        Some("svkit_slot_log_ok{slot=\"noisy\"} 1")
    );
    // Once per episode, not once a second: the whole episode above took
    // several of the watcher's looks.
    assert_eq!(sbx.logs().matches(said).count(), 1, "{}", sbx.logs());
}

const STALL: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "chatty",
      "command": ["sh", "-c", "i=0; while :; do echo \"line $i\"; i=$((i+1)); done"],
      "log": { "dir": "/data/logs/chatty", "stdout": false, "keep": 3, "max_bytes": 100000 } }
  ]
}"#;

#[test]
fn a_logger_that_stops_draining_is_visible_until_it_drains_again() {
    if !sandbox_or_skip("a_logger_that_stops_draining_is_visible_until_it_drains_again") {
        return;
    }
    let fx = Fixture::new(STALL);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["chatty"]);
    wait_field(&sbx, "chatty/log", "up", "true");
    let (c, out, _) = status(&sbx, "chatty");
    assert_eq!(
        c,
        Some(0),
        "healthy while the logger drains a busy pipe: {out}"
    );
    expect_code(
        &sbx.sh("svctl events chatty > /tmp/events 2>&1 < /dev/null &"),
        0,
    );
    let logger = svstat(&sbx, "chatty/log", "pid");
    expect_code(&sbx.sh(&format!("kill -STOP {logger}")), 0);
    let why = poll(
        "status names the stalled pipe",
        Duration::from_secs(10),
        || {
            let (c, out, err) = status(&sbx, "chatty");
            (c == Some(3) && out.contains("stalled!")).then_some(err)
        },
    );
    assert!(why.contains("pipe to the logger is full"), "{why}");
    let said = "svkit: warning: slot chatty: the pipe to the logger is full";
    sbx.wait_for_log(said, Duration::from_secs(10));
    expect_code(&sbx.sh(&format!("kill -CONT {logger}")), 0);
    poll("status healthy again", Duration::from_secs(10), || {
        (status(&sbx, "chatty").0 == Some(0)).then_some(())
    });
    sbx.wait_for_log(
        "slot chatty: its output gets through its logger again",
        Duration::from_secs(10),
    );
    assert_eq!(sbx.logs().matches(said).count(), 1, "{}", sbx.logs());
    let events = poll("events reported both", Duration::from_secs(10), || {
        let ev = stdout(&sbx.sh("cat /tmp/events"));
        ev.contains(" chatty log-ok").then_some(ev)
    });
    assert!(
        events.contains(" chatty log-failing: stalled: the pipe to the logger is full"),
        "{events}"
    );
}

const SETUP: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "api", "command": ["sh", "-c", "while :; do echo tick; sleep 0.2; done"],
      "log": { "dir": "/data/logs/api", "stdout": false } }
  ]
}"#;

#[test]
fn a_logger_that_cannot_start_is_visible_with_its_reason() {
    if !sandbox_or_skip("a_logger_that_cannot_start_is_visible_with_its_reason") {
        return;
    }
    let fx = Fixture::new(SETUP);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["api"]);
    wait_field(&sbx, "api/log", "up", "true");
    assert_eq!(status(&sbx, "api").0, Some(0));
    let logger = poll("the logger's pid", Duration::from_secs(10), || {
        let p = svstat(&sbx, "api/log", "pid");
        p.parse::<u32>().is_ok_and(|p| p > 0).then_some(p)
    });
    // The log dir's parent becomes a symlink: the logger's run script
    // refuses it at its next start. s6-log may die of the move before it
    // is killed: either way it starts again.
    let logs = fx.data.path().join("logs");
    std::fs::rename(&logs, fx.data.path().join("old-logs")).expect("mv");
    std::os::unix::fs::symlink("/tmp", &logs).expect("ln");
    let killed = sbx.sh(&format!("kill {logger} || ! kill -0 {logger}"));
    expect_code(&killed, 0);
    let why = poll(
        "status names the logger's setup failure",
        Duration::from_secs(10),
        || {
            let (c, out, err) = status(&sbx, "api");
            (c == Some(3) && out.contains("setup! /data/logs/api")).then_some(err)
        },
    );
    assert!(
        why.contains("logger not started: log dir /data/logs/api: refused"),
        "{why}"
    );
    assert_eq!(log_fault_kind(&sbx, "api").as_deref(), Some("setup"));
    // Put right, the logger's next start (s6 retries every second) works.
    std::fs::remove_file(&logs).expect("rm");
    std::fs::rename(fx.data.path().join("old-logs"), &logs).expect("mv");
    poll("status healthy again", Duration::from_secs(10), || {
        (status(&sbx, "api").0 == Some(0)).then_some(())
    });
}

#[test]
fn a_deleted_log_dir_is_made_again_by_the_watcher() {
    if !sandbox_or_skip("a_deleted_log_dir_is_made_again_by_the_watcher") {
        return;
    }
    let fx = Fixture::new(SETUP);
    let sbx = fx.boot();
    let dir = fx.data.path().join("logs/api");
    poll("first lines logged", Duration::from_secs(10), || {
        std::fs::read_to_string(dir.join("current"))
            .is_ok_and(|c| c.contains("tick"))
            .then_some(())
    });
    std::fs::remove_dir_all(&dir).expect("rm -rf the log dir");
    sbx.wait_for_log(
        "svkit: warning: slot api: log dir /data/logs/api is gone",
        Duration::from_secs(10),
    );
    poll(
        "lines in the log dir made again",
        Duration::from_secs(15),
        || {
            std::fs::read_to_string(dir.join("current"))
                .is_ok_and(|c| c.contains("tick"))
                .then_some(())
        },
    );
    poll("status healthy again", Duration::from_secs(10), || {
        (status(&sbx, "api").0 == Some(0)).then_some(())
    });
    let logs = sbx.logs();
    assert!(
        logs.contains("restarting its logger to make its log dir again"),
        "{logs}"
    );
}

const COPY: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "shipper", "command": ["sh", "-c", "i=0; while :; do echo \"tick $i\"; i=$((i+1)); sleep 0.1; done"],
      "log": { "dir": "/data/logs/shipper", "format": "json" } }
  ]
}"#;

/// How many of the slot's JSON lines `docker logs` holds.
fn copied(sbx: &Sandbox) -> usize {
    sbx.logs()
        .matches(r#""slot":"shipper","line":"tick"#)
        .count()
}

#[test]
fn a_lost_stdout_copy_is_visible_until_the_watcher_brings_it_back() {
    if !sandbox_or_skip("a_lost_stdout_copy_is_visible_until_the_watcher_brings_it_back") {
        return;
    }
    let fx = Fixture::new(COPY);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["shipper"]);
    wait_field(&sbx, "shipper/log", "up", "true");
    poll(
        "the copy reaches docker logs",
        Duration::from_secs(10),
        || (copied(&sbx) > 0).then_some(()),
    );
    assert_eq!(status(&sbx, "shipper").0, Some(0));
    // The watcher would bring the copy back within a second: stopped
    // first, so that what status says is seen.
    expect_code(
        &sbx.sh("s6-svc -wD -T 5000 -d /run/service/svkit-log-watch"),
        0,
    );
    // The copy is s6-log's one child (`svkit log-stdout`); killed, s6-log
    // closes its stdout at its next line and writes to the files only.
    let logger = svstat(&sbx, "shipper/log", "pid");
    expect_code(
        &sbx.sh(&format!(
            "kill -9 $(cat /proc/{logger}/task/{logger}/children)"
        )),
        0,
    );
    let why = poll(
        "status names the lost copy",
        Duration::from_secs(10),
        || {
            let (c, out, err) = status(&sbx, "shipper");
            (c == Some(3) && out.contains("copy lost! /data/logs/shipper")).then_some(err)
        },
    );
    assert!(why.contains("stdout copy"), "{why}");
    assert_eq!(
        log_fault_kind(&sbx, "shipper").as_deref(),
        Some("copy_lost")
    );
    assert_eq!(
        metric(&sbx, "svkit_slot_log_ok{slot=\"shipper\"}").as_deref(),
        Some("svkit_slot_log_ok{slot=\"shipper\"} 0")
    );
    // The watcher says so, and restarts the logger: a new copy.
    expect_code(&sbx.sh("s6-svc -u /run/service/svkit-log-watch"), 0);
    sbx.wait_for_log(
        "svkit: warning: slot shipper: the stdout copy",
        Duration::from_secs(10),
    );
    sbx.wait_for_log(
        "restarting its logger to bring its stdout copy back",
        Duration::from_secs(10),
    );
    poll("status healthy again", Duration::from_secs(10), || {
        (status(&sbx, "shipper").0 == Some(0)).then_some(())
    });
    let after = copied(&sbx);
    poll("the copy flows again", Duration::from_secs(10), || {
        (copied(&sbx) > after).then_some(())
    });
}
