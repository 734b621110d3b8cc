//! The rendered logger under real s6 in the sandbox: raw lines to docker
//! logs, timestamped lines in `current`, rotation keeping `keep` archives;
//! and two containers sharing a volume, where the second one's logger finds
//! the log dir locked by the first's s6-log: it must say so and keep
//! running (stdout only), not crash-loop every second.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Rootfs, Sandbox};

const CONFIG: &str = r#"{ "slots": [ { "name": "talker",
  "command": ["sh", "-c", "while :; do echo tick; sleep 0.2; done"],
  "log": { "dir": "/data/logs/talker", "stdout": true } } ] }"#;

#[test]
fn logger_tees_timestamps_and_rotates_keeping_keep_archives() {
    if !sandbox_or_skip("logger_tees_timestamps_and_rotates_keeping_keep_archives") {
        return;
    }
    // ~100 bytes a line, 4096-byte files: a rotation every ~40 lines.
    let config = r#"{ "slots": [ { "name": "counter",
      "command": ["sh", "-c", "i=0; while [ $i -lt 600 ]; do i=$((i+1)); printf 'line %05d %090d\\n' $i 0; done; exec sleep 100000"],
      "log": { "dir": "/data/logs/counter", "stdout": true, "keep": 2, "max_bytes": 4096 } } ] }"#;
    let rootfs = Rootfs::with_svkit(config);
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());
    let dir = data.path().join("logs/counter");
    // The dir once s6-log is done with the last line: `current` and the
    // archives (@<tai64n>.s) hold it, no rotation half done (`previous`,
    // `processed`, no `current`, or an archive more until the trim), the
    // same names at two looks in a row and after the reading. The last
    // line alone is not enough: found in `previous`, it is in no archive
    // yet.
    let names = || -> Option<Vec<String>> {
        let mut v: Vec<String> = (fs::read_dir(&dir).ok()?.flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Some(v)
    };
    let mut last = None;
    let settled = || {
        let before = names()?;
        if last.replace(before.clone()).as_ref() != Some(&before) {
            return None;
        }
        let busy = |n: &String| n == "previous" || n == "processed";
        if before.iter().any(busy) || !before.iter().any(|n| n == "current") {
            return None;
        }
        // Rotated, keeping `keep` archives; sorted, oldest first.
        let archives: Vec<String> = (before.iter())
            .filter(|n| n.starts_with('@') && n.ends_with(".s"))
            .cloned()
            .collect();
        let mut kept = String::new();
        for a in &archives {
            kept.push_str(&fs::read_to_string(dir.join(a)).ok()?);
        }
        let current = fs::read_to_string(dir.join("current")).ok()?;
        kept.push_str(&current);
        (names()? == before && kept.contains("  line 00600 ")).then_some((archives, current, kept))
    };
    let (archives, current, kept) = poll("the last line logged", Duration::from_secs(20), settled);
    // Timestamped in the files: `YYYY-MM-DD hh:mm:ss.nnnnnnnnn  line ...`.
    for l in current.lines() {
        let b = l.as_bytes();
        assert!(
            b.len() > 30 && b[4] == b'-' && b[13] == b':' && l.contains("  line "),
            "{l:?}"
        );
    }
    assert_eq!(archives.len(), 2, "{archives:?}");
    // No size bound per archive: under a burst s6-log writes a whole
    // buffer before it checks the size (seen: 10 KB archives at s4096).
    // The kept lines are the most recent ones, in order, none lost between.
    let nums: Vec<u32> = kept
        .lines()
        .filter_map(|l| l.split("  line ").nth(1)?.get(..5)?.parse().ok())
        .collect();
    assert_eq!(nums.last(), Some(&600));
    assert!(
        nums.windows(2).all(|w| w[1] == w[0] + 1),
        "gap in kept lines"
    );
    // Raw lines, without the timestamp, in docker logs. Searched in a
    // line, not at its start: the container's output has other writers
    // while the slots boot (once, in a full run under load, the first
    // line was not found at the start of one; these logs will say why).
    let logs = sbx.wait_for_log("line 00600 ", Duration::from_secs(10));
    assert!(
        logs.lines()
            .any(|l| l.contains("line 00001 ") && !l.contains("  line 00001 ")),
        "raw lines in docker logs:\n{logs}"
    );
    sbx.stop();
}

fn log_field(sbx: &Sandbox, field: &str) -> String {
    stdout(&sbx.sh(&format!("s6-svstat -o {field} /run/service/talker/log")))
        .trim()
        .to_string()
}

#[test]
fn second_container_on_the_same_volume_reports_the_log_lock() {
    if !sandbox_or_skip("second_container_on_the_same_volume_reports_the_log_lock") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let data = tempfile::tempdir().expect("tempdir");

    let first = Sandbox::boot_with_data(rootfs.path(), data.path());
    poll("first logger writing", Duration::from_secs(10), || {
        let cur = fs::read_to_string(data.path().join("logs/talker/current")).ok()?;
        cur.contains("tick").then_some(())
    });
    let second = Sandbox::boot_with_data(rootfs.path(), data.path());
    let logs = second.wait_for_log("unable to lock", Duration::from_secs(10));
    assert!(
        logs.contains("svkit: slot talker: unable to lock /data/logs/talker"),
        "{logs}"
    );
    // Lines still reach docker logs, and the logger stays up: its pid does
    // not change while many ticks go by (no respawn every second).
    let pid = log_field(&second, "pid");
    assert_ne!(pid, "-1");
    let ticks = |s: &Sandbox| s.logs().matches("tick").count();
    let start = ticks(&second);
    poll("ticks in docker logs", Duration::from_secs(10), || {
        (ticks(&second) >= start + 10).then_some(())
    });
    assert_eq!(log_field(&second, "pid"), pid, "the logger respawned");
    assert_eq!(
        second.logs().matches("unable to lock").count(),
        1,
        "reported once"
    );
    second.stop();
    first.stop();
}
