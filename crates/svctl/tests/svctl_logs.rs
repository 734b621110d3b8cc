//! `svctl logs` on a real s6-log dir in the sandbox: the last lines across a
//! forced rotation, and following across rotations.

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

/// Each start prints 1000 numbered lines (with the run's tag) and waits:
/// with timestamps that is ~45 kB, several rotations at 4096 bytes.
const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "chatty", "autostart": "never",
      "command": ["sh", "-c", "t=$(cat /tmp/tag 2>/dev/null); i=0; while [ $i -lt 1000 ]; do echo \"$t line $i\"; i=$((i+1)); done; exec sleep 1000"],
      "log": { "dir": "/data/logs/chatty", "stdout": false, "keep": 20, "max_bytes": 4096 } },
    { "name": "quiet", "command": ["sleep", "1000"], "autostart": "never" }
  ]
}"#;

fn lines(tag: &str, from: usize, to: usize) -> Vec<String> {
    (from..to).map(|i| format!("{tag} line {i}")).collect()
}

/// The log lines without s6-log's timestamp.
fn bodies(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_once("  ").map_or(l, |(_, b)| b).to_string())
        .collect()
}

/// Whether the log holds `needle` yet, in any of its files.
fn logged(fx: &Fixture, needle: &str) -> Option<()> {
    let dir = fx.data.path().join("logs/chatty");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|c| c.contains(needle)))
        .then_some(())
}

#[test]
fn logs_tail_across_rotation_and_follow() {
    if !sandbox_or_skip("logs_tail_across_rotation_and_follow") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["chatty"]);
    expect_code(&sbx.sh("echo one > /tmp/tag"), 0);
    expect_code(&sbx.exec(&["svctl", "start", "--wait", "chatty"]), 0);
    poll("line 299 logged", Duration::from_secs(10), || {
        logged(&fx, "one line 999\n")
    });
    let archives = std::fs::read_dir(fx.data.path().join("logs/chatty"))
        .expect("log dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('@'))
        .count();
    assert!(archives >= 2, "no forced rotation: {archives} archives");
    let current =
        std::fs::read_to_string(fx.data.path().join("logs/chatty/current")).expect("current");
    assert!(current.len() <= 4096 + 100, "{}", current.len());

    let o = sbx.exec(&["svctl", "logs", "-n", "5", "chatty"]);
    expect_code(&o, 0);
    assert_eq!(bodies(&stdout(&o)), lines("one", 995, 1000));
    // Spanning archives and current, in order.
    let o = sbx.exec_as("nobody", &["svctl", "logs", "-n", "700", "chatty"]);
    expect_code(&o, 0);
    assert_eq!(bodies(&stdout(&o)), lines("one", 300, 1000));
    let o = sbx.exec(&["svctl", "logs", "-n", "5000", "chatty"]);
    assert_eq!(bodies(&stdout(&o)), lines("one", 0, 1000));
    // Timestamps are ISO 8601 (s6-log's T).
    assert!(stdout(&o).starts_with("20"), "{}", stdout(&o));

    // Follow from the end, then a second run rotates several times.
    let o = sbx.sh("svctl logs -f -n 0 chatty > /tmp/follow.out 2>/tmp/follow.err &");
    expect_code(&o, 0);
    let out = sbx.root().join("tmp/follow.out");
    // The follower is up once it holds `current` open (no sleep needed).
    poll("follower running", Duration::from_secs(10), || {
        stdout(&sbx.sh("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^svctl logs -f'"))
            .trim()
            .eq("1")
            .then_some(())
    });
    expect_code(&sbx.sh("echo two > /tmp/tag"), 0);
    expect_code(&sbx.exec(&["svctl", "restart", "--wait", "chatty"]), 0);
    let text = poll(
        "follower saw the second run",
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(&out)
                .ok()
                .filter(|t| t.contains("two line 999\n"))
        },
    );
    assert_eq!(bodies(&text), lines("two", 0, 1000));

    // No log dir: a clear error; unknown slot: 4.
    let o = sbx.exec(&["svctl", "logs", "quiet"]);
    expect_code(&o, 1);
    assert!(err(&o).contains("no log dir"), "{}", err(&o));
    expect_code(&sbx.exec(&["svctl", "logs", "nope"]), 4);
    sbx.stop();
}
