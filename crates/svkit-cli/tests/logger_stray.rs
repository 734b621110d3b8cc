//! `kill -9` of a slot's logger supervisor (`SLOT/log`'s s6-supervise:
//! the OOM killer does this), on s6-overlay's real `/init`. s6-svscan
//! starts a new supervisor, whose `log/run` starts a new s6-log; the old
//! one still reads the same pipe and holds the log dir's lock. The new
//! `log/run` must end it (TERM, so that it writes out what it read)
//! before it takes the dir: afterwards one s6-log reads the pipe, every
//! line reaches the dir's files in order, and no logger fault shows.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::fs;
use std::path::Path;
use std::time::Duration;
use svctl_common::*;

/// Numbered lines, steadily: `n 1`, `n 2`, …
const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "talk",
      "command": ["sh", "-c", "i=0; while :; do i=$((i+1)); echo \"n $i\"; sleep 0.02; done"],
      "log": { "dir": "/data/logs/talk", "stdout": false } }
  ]
}"#;

/// The pids of the s6-log processes (argv0 `s6-log`, with or without a
/// path). `talk` is the sandbox's one slot with a logger: all of them
/// read its pipe.
fn s6_logs(sbx: &Sandbox) -> Vec<String> {
    let o = sbx.sh(
        "for d in /proc/[0-9]*; do a=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null) || continue; set -f; set -- $a; \
         case ${1:-} in s6-log|*/s6-log) echo ${d#/proc/} ;; esac; done",
    );
    stdout(&o).split_whitespace().map(str::to_string).collect()
}

/// The pid of `s6-supervise talk/log`.
fn logger_supervisor(sbx: &Sandbox) -> String {
    let o = sbx.sh(
        "for d in /proc/[0-9]*; do [ \"$(tr '\\0' ' ' < $d/cmdline 2>/dev/null)\" = 's6-supervise talk/log ' ] && echo ${d#/proc/}; done",
    );
    let pids = stdout(&o);
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 1, "one supervisor of talk/log: {pids:?}");
    pids[0].to_string()
}

/// The numbers of the lines in the log dir's files, archives (oldest
/// first, by their TAI64N names) then `current`.
fn logged(dir: &Path) -> Vec<u64> {
    let mut archives: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('@'))
                .collect()
        })
        .unwrap_or_default();
    archives.sort();
    archives.push("current".into());
    let mut text = String::new();
    for f in &archives {
        text.push_str(&fs::read_to_string(dir.join(f)).unwrap_or_default());
    }
    // `YYYY-MM-DD hh:mm:ss.nnnnnnnnn  n 123`
    text.lines()
        .filter_map(|l| l.split("  n ").nth(1)?.trim().parse().ok())
        .collect()
}

#[test]
fn a_logger_left_by_a_killed_supervisor_is_ended_and_no_line_is_lost() {
    if !sandbox_or_skip("a_logger_left_by_a_killed_supervisor_is_ended_and_no_line_is_lost") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let dir = fx.data.path().join("logs/talk");
    let sbx = fx.boot();
    wait_supervised(&sbx, &["talk", "talk/log"]);
    poll("lines logged", Duration::from_secs(15), || {
        (logged(&dir).len() >= 20).then_some(())
    });
    let old = svstat(&sbx, "talk/log", "pid");
    expect_code(&sbx.sh(&format!("kill -9 {}", logger_supervisor(&sbx))), 0);
    // One s6-log reads the slot's pipe, the one the new supervisor runs,
    // and it writes to the dir (not the stdout-only fallback). Before the
    // fix: the old one (the first to start) runs on beside it.
    let new = poll(
        "one s6-log on the pipe, supervised",
        Duration::from_secs(15),
        || {
            let st = svstat(&sbx, "talk/log", "up,pid");
            let ["true", pid] = st.split_whitespace().collect::<Vec<_>>()[..] else {
                return None;
            };
            if pid == old {
                return None;
            }
            (s6_logs(&sbx) == [pid]).then(|| pid.to_string())
        },
    );
    let argv = stdout(&sbx.sh(&format!("tr '\\0' ' ' < /proc/{new}/cmdline")));
    assert!(argv.contains("/data/logs/talk"), "stdout only: {argv}");
    sbx.wait_for_log(
        &format!("slot talk: a copy of its logger from before its supervisor was restarted still ran (pid {old}): stopped it"),
        Duration::from_secs(5),
    );
    // Lines well past the kill reach the files: all of them, in order.
    let after = logged(&dir).last().copied().unwrap_or(0) + 100;
    let nums = poll("lines past the kill", Duration::from_secs(30), || {
        let nums = logged(&dir);
        (nums.last().is_some_and(|n| *n >= after)).then_some(nums)
    });
    assert_eq!(nums.first(), Some(&1), "from the first line");
    let gaps: Vec<_> = nums.windows(2).filter(|w| w[1] != w[0] + 1).collect();
    assert!(
        gaps.is_empty(),
        "{} lines logged up to {}, missing or out of order at {:?}",
        nums.len(),
        nums.last().unwrap_or(&0),
        &gaps[..gaps.len().min(10)]
    );
    // No logger fault: the new logger holds the dir and runs as configured.
    poll("status healthy", Duration::from_secs(10), || {
        (status_json(&sbx, &["talk"]).0 == Some(0)).then_some(())
    });
    expect_code(
        &sbx.sh("test ! -e /run/service/talk/log/.svkit-log-error"),
        0,
    );
    assert_eq!(s6_logs(&sbx), [new.as_str()], "one s6-log");
    // The logger's record is a runtime file, no difference to plan.
    sbx.run(&["svctl", "plan"], 0);
}
