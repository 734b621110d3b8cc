//! A slot whose program exists nowhere in the image, on the real /init:
//! the boot hook says so in one line naming the slot and its key, and
//! makes every slot all the same (the slot's own failure, exit 127 at each
//! start, is what status shows).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Rootfs, Sandbox};

const CONFIG: &str = r#"{ "slots": [
  { "name": "ok", "command": ["sleep", "100000"] },
  { "name": "typo", "command": ["sleeep", "100000"] },
  { "name": "gone", "command": ["/opt/gone/bin/app"] }
] }"#;

#[test]
fn the_boot_hook_names_a_missing_program_once() {
    if !sandbox_or_skip("the_boot_hook_names_a_missing_program_once") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let r = rootfs.path().display().to_string();
    let sbx = Sandbox::start(&["--rootfs", &r], &["sleep", "100000"]);
    let logs = sbx.wait_for_log("slot gone:", Duration::from_secs(20));
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.starts_with("svkit-reconcile: warning: ") && l.contains("command[0]"))
        .collect();
    assert_eq!(lines.len(), 2, "{logs}");
    assert!(
        lines[0].contains("10-test.json: slots[1].command[0]: slot typo: `sleeep` is not in any directory of PATH under /: /")
            && lines[0].ends_with("; it would exit 127 at every start"),
        "{logs}"
    );
    assert!(
        lines[1]
            .contains("slot gone: `/opt/gone/bin/app` does not exist under /; it would exit 127"),
        "{logs}"
    );
    // Every slot is made all the same: the others run.
    poll("ok up", Duration::from_secs(10), || {
        let up = stdout(&sbx.sh("s6-svstat -o up /run/service/ok"));
        (up.trim() == "true").then_some(())
    });
    for s in ["typo", "gone"] {
        let o = sbx.sh(&format!("test -d /run/service/{s}"));
        assert_eq!(o.status.code(), Some(0), "{s} made");
    }
}
