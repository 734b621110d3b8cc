//! A `remember` slot started or stopped by an operator, on the real /init:
//! the slot's `down` file follows the desired state, so `svctl plan` has
//! nothing to put right afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

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
