//! Two containers sharing a volume: the second one's logger finds the log
//! dir locked by the first's s6-log. It must say so and keep running
//! (stdout only), not crash-loop every second.

use std::fs;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Sandbox};

const CONFIG: &str = r#"{ "slots": [ { "name": "talker",
  "command": ["sh", "-c", "while :; do echo tick; sleep 0.2; done"],
  "log": { "dir": "/data/logs/talker", "stdout": true } } ] }"#;

fn boot(rootfs: &std::path::Path, data: &std::path::Path) -> Sandbox {
    let r = rootfs.display().to_string();
    let v = format!("{}:/data", data.display());
    Sandbox::start(&["--rootfs", &r, "--volume", &v], &["sleep", "100000"])
}

fn log_field(sbx: &Sandbox, field: &str) -> String {
    stdout(&sbx.sh(&format!("s6-svstat -o {field} /run/service/talker/log")))
        .trim()
        .to_string()
}

#[test]
fn second_container_on_the_same_volume_reports_the_log_lock() {
    if !sandbox_or_skip("second_container_on_the_same_volume_reports_the_log_lock") {
        return;
    }
    let rootfs = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(rootfs.path().join("etc/svkit")).expect("mkdir");
    fs::create_dir_all(rootfs.path().join("etc/cont-init.d")).expect("mkdir");
    fs::write(rootfs.path().join("etc/svkit/10.json"), CONFIG).expect("write");
    let hook = rootfs.path().join("etc/cont-init.d/50-svkit");
    fs::write(&hook, "#!/bin/sh\nexec svkit-reconcile\n").expect("write");
    fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let data = tempfile::tempdir().expect("tempdir");

    let first = boot(rootfs.path(), data.path());
    poll("first logger writing", Duration::from_secs(10), || {
        let cur = fs::read_to_string(data.path().join("logs/talker/current")).ok()?;
        cur.contains("tick").then_some(())
    });
    let second = boot(rootfs.path(), data.path());
    let logs = second.wait_for_log("unable to lock", Duration::from_secs(10));
    assert!(
        logs.contains("svkit: slot talker: unable to lock /data/logs/talker"),
        "{logs}"
    );
    // Lines still reach docker logs, and the logger stays up: its pid does
    // not change while many ticks go by (no respawn every second).
    let pid = log_field(&second, "pid");
    assert_ne!(pid, "-1");
    let ticks = |s: &Sandbox| s.logs().matches("tick").count();
    let start = ticks(&second);
    poll("ticks in docker logs", Duration::from_secs(10), || {
        (ticks(&second) >= start + 10).then_some(())
    });
    assert_eq!(log_field(&second, "pid"), pid, "the logger respawned");
    assert_eq!(
        second.logs().matches("unable to lock").count(),
        1,
        "reported once"
    );
    second.stop();
    first.stop();
}
