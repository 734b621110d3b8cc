//! `svctl logs -f` against s6-log rotating as fast as it can, on the real
//! /init: every line once, in order, however many files it went through.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

/// Lines the burst prints: with s6-log's timestamps about 4 MB, so at
/// least 280 rotations even when s6-log overshoots `max_bytes` under a burst
/// (archives of ~14 kB were seen).
const LINES: usize = 400_000;

/// `keep` holds every archive of the burst: no line may be missing, and the
/// archives left count the rotations.
const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "burst", "autostart": "never",
      "command": ["sh", "-c", "seq 0 399999; exec sleep 1000"],
      "log": { "dir": "/data/logs/burst", "stdout": false, "keep": 5000, "max_bytes": 4096 } },
    { "name": "tight", "autostart": "never",
      "command": ["sh", "-c", "seq 0 99999; exec sleep 1000"],
      "log": { "dir": "/data/logs/tight", "stdout": false, "keep": 2, "max_bytes": 4096 } }
  ]
}"#;

/// Starts `svctl logs -f -n 0 SLOT` in the background, its output in
/// /tmp/SLOT.out and .err; returns its pid once it follows: it holds
/// `current` open and has its inotify watch, so every line written from
/// then on is new to it.
fn follow(sbx: &Sandbox, slot: &str) -> String {
    let o = sbx.sh(&format!(
        "svctl logs -f -n 0 {slot} > /tmp/{slot}.out 2>/tmp/{slot}.err & echo $!"
    ));
    expect_code(&o, 0);
    let pid = stdout(&o).trim().to_string();
    poll("follower holding current", Duration::from_secs(10), || {
        let fds = stdout(&sbx.sh(&format!(
            "kill -0 {pid} && ls -l /proc/{pid}/fd || echo gone"
        )));
        assert!(
            !fds.contains("gone"),
            "the follower ended: {}",
            read(sbx, &format!("tmp/{slot}.err"))
        );
        (fds.contains(&format!(" -> /data/logs/{slot}/current\n")) && fds.contains("inotify"))
            .then_some(())
    });
    pid
}

fn read(sbx: &Sandbox, rel: &str) -> String {
    std::fs::read_to_string(sbx.root().join(rel)).unwrap_or_default()
}

/// Whether the last of `lines` numbers is in `slot`'s log dir: in `current`
/// or, when its write made s6-log rotate, in the newest archive.
fn burst_logged(fx: &Fixture, slot: &str, lines: usize) -> Option<()> {
    let dir = fx.data.path().join("logs").join(slot);
    let last = format!("  {}\n", lines - 1);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('@'))
        .collect();
    names.sort();
    let has = |n: &str| std::fs::read_to_string(dir.join(n)).is_ok_and(|t| t.contains(&last));
    (has("current") || names.last().is_some_and(|n| has(n))).then_some(())
}

/// The log lines without s6-log's timestamp.
fn bodies(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.split_once("  ").map_or(l, |(_, b)| b))
        .collect()
}

#[test]
fn follow_keeps_every_line_across_fast_rotations() {
    if !sandbox_or_skip("follow_keeps_every_line_across_fast_rotations") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["burst"]);
    follow(&sbx, "burst");
    sbx.run(&["svctl", "start", "burst"], 0);
    poll("the burst logged", Duration::from_secs(60), || {
        burst_logged(&fx, "burst", LINES)
    });
    // What the follower printed is checked whether or not it got to the
    // last line: a follower that lost it must fail on the numbers.
    let last = format!("  {}\n", LINES - 1);
    let end = std::time::Instant::now() + Duration::from_secs(20);
    let text = loop {
        let t = read(&sbx, "tmp/burst.out");
        if t.contains(&last) || std::time::Instant::now() > end {
            break t;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    let rotations = std::fs::read_dir(fx.data.path().join("logs/burst"))
        .expect("log dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('@'))
        .count();
    assert!(rotations >= 200, "only {rotations} rotations");

    let got = bodies(&text);
    let want: Vec<String> = (0..LINES).map(|i| i.to_string()).collect();
    if got != want {
        let have: std::collections::HashSet<&str> = got.iter().copied().collect();
        let missing = want.iter().filter(|w| !have.contains(w.as_str())).count();
        let at = got.iter().zip(&want).position(|(g, w)| g != w);
        let around = at.map(|i| &got[i.saturating_sub(3)..(i + 3).min(got.len())]);
        panic!(
            "{} lines followed for {LINES} ({missing} missing) across {rotations} rotations; first difference at {at:?}: {around:?}; stderr: {}",
            got.len(),
            read(&sbx, "tmp/burst.err")
        );
    }
    // No warning: nothing was deleted unread.
    assert_eq!(read(&sbx, "tmp/burst.err"), "");
    sbx.stop();
}

#[test]
fn follow_says_when_s6_log_deleted_files_it_had_not_read() {
    if !sandbox_or_skip("follow_says_when_s6_log_deleted_files_it_had_not_read") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["tight"]);
    let pid = follow(&sbx, "tight");
    // The follower frozen while s6-log rotates hundreds of times and keeps
    // 2 archives: most of the burst is deleted before it can look.
    expect_code(&sbx.sh(&format!("kill -STOP {pid}")), 0);
    sbx.run(&["svctl", "start", "tight"], 0);
    poll("the burst logged", Duration::from_secs(60), || {
        burst_logged(&fx, "tight", 100_000)
    });
    expect_code(&sbx.sh(&format!("kill -CONT {pid}")), 0);
    let err = poll("the follower's warning", Duration::from_secs(20), || {
        Some(read(&sbx, "tmp/tight.err")).filter(|e| e.contains('\n'))
    });
    assert_eq!(
        err,
        "svctl: warning: lines of tight may be missing here: s6-log deleted log files before they could be read (it keeps 2 archives; more rotated while following)\n"
    );
    // What it still shows is in order, each line once, up to the last.
    poll(
        "the follower saw the last line",
        Duration::from_secs(20),
        || {
            read(&sbx, "tmp/tight.out")
                .contains("  99999\n")
                .then_some(())
        },
    );
    let text = read(&sbx, "tmp/tight.out");
    let got: Vec<usize> = bodies(&text)
        .iter()
        .map(|b| b.parse().expect("a number"))
        .collect();
    assert!(
        got.windows(2).all(|w| w[0] < w[1]),
        "out of order or repeated"
    );
    assert!(got.len() < 100_000, "nothing was lost: {} lines", got.len());
    sbx.stop();
}
