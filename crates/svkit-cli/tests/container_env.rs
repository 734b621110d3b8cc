//! An image's `ENV SVKIT_CONFIG_DIR=...` reaches the boot hook although
//! `/init` strips the hook's environment: svkit reads s6-overlay's dump.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, svstat, Fixture, Rootfs, Sandbox};

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

/// The slots under `/run/service` whose names start with `prefix`, sorted.
fn slots_named(sbx: &Sandbox, prefix: &str) -> Vec<String> {
    let o = sbx.sh(&format!("ls /run/service | grep '^{prefix}' || true"));
    stdout(&o).lines().map(str::to_string).collect()
}

const WORKERS: &str = r#"{ "slots": [
  { "name": "w-{instance}", "instances": { "count": "${WORKERS:-4}" },
    "command": ["sleep", "1000"], "user": "${WWWUSER:-root}" } ] }"#;

/// `${WORKERS:-4}` and `${WWWUSER}` read the container's environment at
/// boot, and again at `svctl apply` from a `docker exec` that lacks them.
#[test]
fn a_count_and_a_user_come_from_the_container_environment() {
    if !sandbox_or_skip("a_count_and_a_user_come_from_the_container_environment") {
        return;
    }
    let fx = Fixture::bare(WORKERS);
    let sbx = fx.boot_env(&["WORKERS=3", "WWWUSER=nobody"]);
    sbx.wait_for_log("reconcile: slot=w-2 action=create", Duration::from_secs(30));
    assert_eq!(
        slots_named(&sbx, "w-"),
        ["w-0", "w-1", "w-2"],
        "{}",
        sbx.logs()
    );
    let uid = poll("w-1 up", Duration::from_secs(10), || {
        let pid = svstat(&sbx, "w-1", "pid");
        let o = sbx.sh(&format!("awk '/^Uid:/ {{print $2}}' /proc/{pid}/status"));
        (pid != "-1" && !pid.is_empty()).then(|| stdout(&o).trim().to_string())
    });
    assert_eq!(uid, "65534", "w-1 runs as WWWUSER");
    let o = sbx.exec(&["svctl", "apply"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        slots_named(&sbx, "w-"),
        ["w-0", "w-1", "w-2"],
        "apply read the container's"
    );
    sbx.stop();

    // Unset: the defaults.
    let sbx = fx.boot();
    sbx.wait_for_log("reconcile: slot=w-3 action=create", Duration::from_secs(30));
    assert_eq!(slots_named(&sbx, "w-"), ["w-0", "w-1", "w-2", "w-3"]);
    sbx.stop();
}

/// Unset without a default: a located error that changes nothing, at
/// boot and at apply; `svctl check` (maybe on a build host) warns.
#[test]
fn an_unset_variable_without_a_default_changes_nothing() {
    if !sandbox_or_skip("an_unset_variable_without_a_default_changes_nothing") {
        return;
    }
    let strict = WORKERS.replace("${WORKERS:-4}", "${WORKERS}");
    let located = "/etc/svkit/10-test.json:2:44: slots[0].instances.count: `${WORKERS}`: WORKERS is not set in the container's environment and has no default";
    let fx = Fixture::bare(&strict);
    let sbx = fx.boot();
    let logs = sbx.wait_for_log("50-svkit exited 1", Duration::from_secs(30));
    assert!(logs.contains(located), "{logs}");
    assert_eq!(slots_named(&sbx, "w-"), Vec::<String>::new());
    sbx.stop();

    let fx = Fixture::bare(WORKERS);
    let sbx = fx.boot_env(&["WORKERS=2"]);
    sbx.wait_for_log("reconcile: slot=w-1 action=create", Duration::from_secs(30));
    let pids = |sbx: &Sandbox| {
        poll("both up", Duration::from_secs(10), || {
            let p: Vec<String> = ["w-0", "w-1"]
                .iter()
                .map(|s| svstat(sbx, s, "pid"))
                .collect();
            p.iter().all(|p| p != "-1" && !p.is_empty()).then_some(p)
        })
    };
    let before = pids(&sbx);
    let strict = strict.replace("${WORKERS}", "${NOT_SET}");
    std::fs::write(sbx.root().join(svkit_testkit::TEST_CONFIG), &strict).expect("write");
    let o = sbx.exec(&["svctl", "apply"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("/etc/svkit/10-test.json:2:44: slots[0].instances.count: `${NOT_SET}`: NOT_SET is not set in the container's environment"), "{err}");
    assert!(err.contains("nothing changed"), "{err}");
    assert_eq!(slots_named(&sbx, "w-"), ["w-0", "w-1"]);
    assert_eq!(pids(&sbx), before);
    let o = sbx.exec(&["svctl", "check"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("NOT_SET is not set here and has no default"),
        "{err}"
    );
    sbx.stop();
}
