//! Deleting a slot whose process ignores its down signal, under real s6 in
//! the sandbox: apply waits its bounded stop time, then SIGKILLs the process
//! (as s6's own timeout-kill would) before the slot's dir goes, so nothing
//! is left running unsupervised.
//!
//! The slot sets no `stop_timeout_ms`, so s6-supervise never kills it by
//! itself: only svkit's own fallback can. That takes apply's 10 s stop bound.
//! The process logs each TERM it shrugs off, which shows it outlived the
//! down signal rather than dying of it.

use std::fs;
use std::time::Duration;

use svkit_testkit::{poll, sandbox_or_skip, stdout, Rootfs, Sandbox};

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
    fs::write(sbx.root().join("etc/svkit/10-test.json"), without).expect("write");
    let o = sbx.exec(&["svkit-reconcile"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout(&o).contains("slot=stubborn action=delete state=down"),
        "{}",
        stdout(&o)
    );
    assert!(!sbx.root().join("run/service/stubborn").exists());
    // It got the down signal and lived on (its trap ran and logged it),
    // yet it is gone: killed, not left behind unsupervised.
    let log = stdout(&sbx.sh("cat /tmp/stubborn.log"));
    assert!(log.contains("term"), "the TERM never reached it: {log:?}");
    poll("stubborn's process gone", Duration::from_secs(5), || {
        (!sbx.sh(&format!("kill -0 {stubborn}")).status.success()).then_some(())
    });
    assert_eq!(pid_of(&sbx, "keep"), keep, "another slot was touched");
    sbx.stop();
}
