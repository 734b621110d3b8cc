//! An image's `ENV SVKIT_CONFIG_DIR=...` reaches the boot hook although
//! `/init` strips the hook's environment: svkit reads s6-overlay's dump.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Rootfs, Sandbox};

#[test]
fn settings_come_from_the_container_environment() {
    if !sandbox_or_skip("settings_come_from_the_container_environment") {
        return;
    }
    let rootfs = Rootfs::new();
    rootfs.file(
        "opt/conf/10.json",
        r#"{ "slots": [ { "name": "moved", "command": ["sleep", "1000"] } ] }"#,
    );
    // The hook's own env is minimal, as under s6-overlay: no SVKIT_* here.
    rootfs.script(
        "etc/cont-init.d/50-svkit",
        "#!/bin/sh\nexec svkit-reconcile\n",
    );
    let rs = rootfs.arg();
    let sbx = Sandbox::start(
        &["--rootfs", &rs, "--env", "SVKIT_CONFIG_DIR=/opt/conf"],
        &["sleep", "100000"],
    );
    assert!(
        sbx.logs().contains("reconcile: slot=moved action=create"),
        "{}",
        sbx.logs()
    );
    poll("moved up", Duration::from_secs(10), || {
        let o = sbx.sh("s6-svstat -o up /run/service/moved");
        (stdout(&o).trim() == "true").then_some(())
    });
    sbx.stop();
}

/// The boot hook says once when the image leaves s6-overlay's 3000 ms
/// final grace in place, and is quiet when it is set smaller.
#[test]
fn the_boot_hook_notes_the_default_kill_grace() {
    if !sandbox_or_skip("the_boot_hook_notes_the_default_kill_grace") {
        return;
    }
    let rootfs =
        Rootfs::with_svkit(r#"{ "slots": [ { "name": "s", "command": ["sleep", "1000"] } ] }"#);
    let rs = rootfs.arg();
    for (grace, noted) in [("3000", true), ("100", false)] {
        let env = format!("S6_KILL_GRACETIME={grace}");
        let sbx = Sandbox::start(&["--rootfs", &rs, "--env", &env], &["sleep", "100000"]);
        let logs = sbx.wait_for_log("reconcile: slot=s action=create", Duration::from_secs(30));
        let lines = logs
            .lines()
            .filter(|l| {
                l.starts_with(
                    "svkit-reconcile: info: S6_KILL_GRACETIME is s6-overlay's default 3000 ms",
                )
            })
            .count();
        assert_eq!(lines, usize::from(noted), "{grace}: {logs}");
        if noted {
            assert!(
                logs.contains("set S6_KILL_GRACETIME=0 in the image's ENV"),
                "{logs}"
            );
        }
        sbx.stop();
    }
}
