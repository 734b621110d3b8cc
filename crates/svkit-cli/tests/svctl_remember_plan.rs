//! A `remember` slot started or stopped by an operator, on the real /init:
//! the slot's `down` file follows the desired state, so `svctl plan` has
//! nothing to put right afterwards; and when two operators start and stop
//! it at the same moment, whichever wins, what is remembered
//! (`state_dir/desired/SLOT`), the `down` file and s6's want flag agree,
//! so a container restart brings back what runs now.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::{Duration, Instant};
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "rem", "command": ["sleep", "1000"], "autostart": "remember" }
  ]
}"#;

#[test]
fn start_and_stop_of_a_remember_slot_leave_nothing_to_plan() {
    if !sandbox_or_skip("start_and_stop_of_a_remember_slot_leave_nothing_to_plan") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["rem"]);
    let down = sbx.root().join("run/service/rem/down");
    assert!(down.exists(), "never set: rendered down");
    let plan = |when: &str| {
        let o = sbx.exec(&["svctl", "plan"]);
        assert_eq!(code(&o), Some(0), "after {when}: {}{}", stdout(&o), err(&o));
    };
    plan("the boot");
    sbx.run(
        &["svctl", "start", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    plan("start");
    assert!(!down.exists());
    sbx.run(&["svctl", "stop", "--wait", "--timeout", "10000", "rem"], 0);
    plan("stop");
    assert!(down.exists());
    sbx.run(
        &["svctl", "restart", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    plan("restart");
    assert!(!down.exists());
    sbx.stop();
}

const ROUNDS: usize = 20;

/// What each of the three says: (remembered, normally up, wanted up).
fn three(sbx: &Sandbox) -> String {
    stdout(
        &sbx.sh("cat /data/.svkit/desired/rem 2>/dev/null || echo unset; \
         test -e /run/service/rem/down && echo down-file || echo no-down-file; \
         s6-svstat -o wantedup /run/service/rem"),
    )
}

fn agree(seen: &str) -> bool {
    let l: Vec<&str> = seen.lines().collect();
    matches!(
        l.as_slice(),
        ["up", "no-down-file", "true"] | ["down", "down-file", "false"]
    )
}

#[test]
fn concurrent_start_and_stop_of_a_remember_slot_agree() {
    if !sandbox_or_skip("concurrent_start_and_stop_of_a_remember_slot_agree") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["rem"]);
    let mut wrong = Vec::new();
    for round in 0..ROUNDS {
        // Both from one shell inside the container: the two svctl
        // processes start within a fork of each other. Alternate which
        // one is forked first.
        let (a, b) = if round % 2 == 0 {
            ("start", "stop")
        } else {
            ("stop", "start")
        };
        let o = sbx.sh(&format!(
            "svctl {a} rem & p=$!; svctl {b} rem; r=$?; wait $p; echo $? $r"
        ));
        assert_eq!(stdout(&o).trim(), "0 0", "round {round}: {}", err(&o));
        // s6-supervise reads the control FIFO after svctl has written
        // it: give it a bounded moment to act on the last byte.
        let end = Instant::now() + Duration::from_secs(3);
        let mut seen = three(&sbx);
        while !agree(&seen) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
            seen = three(&sbx);
        }
        if !agree(&seen) {
            wrong.push(format!("round {round}: {}", seen.replace('\n', " ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "remembered, down file and want flag disagree in {} of {ROUNDS} rounds:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    sbx.stop();
}
