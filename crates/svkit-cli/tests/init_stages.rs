//! `svkit-init` in its own mode, on the real /init's sandbox: run as the
//! CMD, it is not PID 1 (s6-overlay's s6-svscan is), so it supervises by
//! itself, with s6-overlay's s6 (`/command`), in `/tmp/svkit` (the
//! sandbox's `/run/service` belongs to the s6-svscan of PID 1, never
//! wiped). The hooks below run under both inits: each says which by
//! `SVKIT_INIT_PID`, which only svkit-init sets. The runtimes
//! (`docker run --init`, a shared pid namespace, no s6-overlay) are
//! `tests/docker/run.sh`'s `init_*` and `plain_s6` scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{sandbox_or_skip, Rootfs, Sandbox};

const HOOK: &str = "#!/bin/sh\n[ -n \"$SVKIT_INIT_PID\" ] && echo \"hook NAME under svkit-init, cmd=${SVKIT_CMD_PID:-none}\"\nexit CODE\n";

fn hook(name: &str, code: u8) -> String {
    HOOK.replace("NAME", name)
        .replace("CODE", &code.to_string())
}

fn hooks_rootfs() -> Rootfs {
    let r = Rootfs::new();
    r.script("etc/cont-init.d/10-a", &hook("init-a", 0));
    r.script("etc/cont-init.d/20-fail", &hook("init-fail", 3));
    r.script("etc/cont-init.d/30-b", &hook("init-b", 0));
    r.script("etc/cont-finish.d/10-z", &hook("finish-z", 0));
    r
}

fn line_of(logs: &str, needle: &str) -> usize {
    logs.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{logs}"))
}

#[test]
fn hooks_run_in_order_and_the_cmds_code_is_the_containers() {
    if !sandbox_or_skip("hooks_run_in_order_and_the_cmds_code_is_the_containers") {
        return;
    }
    let r = hooks_rootfs();
    let sbx = Sandbox::start(
        &["--rootfs", &r.arg()],
        &["svkit-init", "--", "sh", "-c", "echo cmd ran; exit 7"],
    );
    let logs = sbx.wait_for_log("hook finish-z under svkit-init", Duration::from_secs(30));
    assert!(
        logs.contains("svkit-init: info: not PID 1 (PID 1 is s6-svscan): supervising with s6-svscan under svkit-init"),
        "{logs}"
    );
    let a = line_of(&logs, "hook init-a under svkit-init");
    let fail = line_of(&logs, "hook init-fail under svkit-init");
    let b = line_of(&logs, "hook init-b under svkit-init");
    let cmd = line_of(&logs, "cmd ran");
    let z = line_of(&logs, "hook finish-z under svkit-init");
    assert!(a < fail && fail < b && b < cmd && cmd < z, "{logs}");
    // The CMD had ended when the finish hook ran: no pid to name.
    assert!(
        logs.contains("hook finish-z under svkit-init, cmd=none"),
        "{logs}"
    );
    // S6_BEHAVIOUR_IF_STAGE2_FAILS unset (0): a failed hook is not fatal.
    assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 7, "{logs}");
}

#[test]
fn a_failed_hook_stops_the_container_when_stage2_failures_are_fatal() {
    if !sandbox_or_skip("a_failed_hook_stops_the_container_when_stage2_failures_are_fatal") {
        return;
    }
    let r = hooks_rootfs();
    let sbx = Sandbox::start(
        &["--rootfs", &r.arg()],
        &[
            "env",
            "S6_BEHAVIOUR_IF_STAGE2_FAILS=2",
            "svkit-init",
            "--",
            "sh",
            "-c",
            "echo cmd ran",
        ],
    );
    let logs = sbx.wait_for_log("hook finish-z under svkit-init", Duration::from_secs(30));
    assert!(
        logs.contains("svkit-init: warning: cont-init: /etc/cont-init.d/20-fail exited 3"),
        "{logs}"
    );
    assert!(
        logs.contains("svkit-init: fatal: a cont-init hook failed and S6_BEHAVIOUR_IF_STAGE2_FAILS=2: stopping the container"),
        "{logs}"
    );
    assert!(
        !logs.contains("cmd ran"),
        "the CMD ran after a fatal hook:\n{logs}"
    );
    assert!(
        logs.contains("hook init-b under svkit-init"),
        "every hook runs:\n{logs}"
    );
    assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 1, "{logs}");
}

#[test]
fn s6_rc_user_services_are_refused_by_name_never_skipped() {
    if !sandbox_or_skip("s6_rc_user_services_are_refused_by_name_never_skipped") {
        return;
    }
    let r = Rootfs::new();
    // A valid oneshot, so that s6-overlay's own stage 2 (PID 1 here) runs it.
    r.file("etc/s6-overlay/s6-rc.d/hello/type", "oneshot\n");
    r.file("etc/s6-overlay/s6-rc.d/hello/up", "echo hello\n");
    r.file("etc/s6-overlay/s6-rc.d/user/contents.d/hello", "");
    let sbx = Sandbox::start(
        &["--rootfs", &r.arg()],
        &["svkit-init", "--", "sh", "-c", "echo cmd ran"],
    );
    let logs = sbx.wait_for_log("s6-rc services cannot run", Duration::from_secs(30));
    assert!(
        logs.contains("svkit-init: fatal: s6-rc services cannot run without s6-overlay's /init (hello in /etc/s6-overlay/s6-rc.d)"),
        "{logs}"
    );
    assert!(!logs.contains("cmd ran"), "{logs}");
    assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 1, "{logs}");
}

#[test]
fn a_bad_mode_is_a_usage_error_and_starts_nothing() {
    let out = std::process::Command::new(svkit_testkit::tool("svkit-init"))
        .args(["--", "sh", "-c", "echo cmd ran"])
        .env("SVKIT_INIT", "tini")
        .output()
        .expect("run svkit-init");
    assert_eq!(out.status.code(), Some(100), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "svkit-init: fatal: SVKIT_INIT must be s6 or overlay (or unset, to choose by itself), not 'tini'\n"
    );
}
