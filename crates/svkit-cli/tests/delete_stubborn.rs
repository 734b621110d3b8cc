//! Deleting a slot whose process ignores its down signal, under real s6 in
//! the sandbox: apply waits its bounded stop time, then SIGKILLs the process
//! (as s6's own timeout-kill would) before the slot's dir goes, so nothing
//! is left running unsupervised.
//!
//! The slot sets no `stop_timeout_ms`, so s6-supervise never kills it by
//! itself: only svkit's own fallback can. That takes apply's 10 s stop bound.
//! The process logs each TERM it shrugs off, which shows it outlived the
//! down signal rather than dying of it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;

use svkit_testkit::{poll, sandbox_or_skip, stdout, stdout_ok, Rootfs, Sandbox};

const CONFIG: &str = r#"{
  "user": "nobody",
  "slots": [
    { "name": "keep", "command": ["sleep", "1000"] },
    { "name": "stubborn", "command": ["sh", "-c", "trap 'echo term >>/tmp/stubborn.log' TERM; while :; do sleep 1; done"] }
  ]
}"#;

fn pid_of(sbx: &Sandbox, slot: &str) -> String {
    poll(&format!("{slot} up"), Duration::from_secs(10), || {
        let o = sbx.sh(&format!("s6-svstat -o up,pid /run/service/{slot}"));
        let out = stdout(&o);
        out.trim()
            .strip_prefix("true ")
            .map(str::to_string)
            .filter(|p| p != "-1")
    })
}

#[test]
fn a_deleted_slot_that_ignores_term_is_killed_before_its_dir_goes() {
    if !sandbox_or_skip("a_deleted_slot_that_ignores_term_is_killed_before_its_dir_goes") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let sbx = Sandbox::start(
        &["--rootfs", &rootfs.path().display().to_string()],
        &["sleep", "100000"],
    );
    let stubborn = pid_of(&sbx, "stubborn");
    let keep = pid_of(&sbx, "keep");
    let without = CONFIG.replace(
        r#",
    { "name": "stubborn", "command": ["sh", "-c", "trap 'echo term >>/tmp/stubborn.log' TERM; while :; do sleep 1; done"] }"#,
        "",
    );
    assert_ne!(without, CONFIG);
    let o = sbx.reconcile_with(&without);
    let out = stdout_ok(&o);
    assert!(
        out.contains("slot=stubborn action=delete state=down"),
        "{out}"
    );
    assert!(!sbx.root().join("run/service/stubborn").exists());
    // It got the down signal and lived on (its trap ran and logged it),
    // yet it is gone: killed, not left behind unsupervised.
    let log = stdout(&sbx.sh("cat /tmp/stubborn.log"));
    assert!(log.contains("term"), "the TERM never reached it: {log:?}");
    sbx.wait_gone(&stubborn, Duration::from_secs(5));
    assert_eq!(pid_of(&sbx, "keep"), keep, "another slot was touched");
    sbx.stop();
}
