//! A slot's `user` on the real `/init`: an unknown one is named at boot
//! with its file, line, column and slots, and those slots are not made
//! (the others are, and run: the container runs degraded, `svctl status`
//! exits 3); `plan`, `apply` and `check` (inside the container) refuse it
//! as a config error, writing nothing; a numeric `uid:gid` with no passwd
//! entry runs as those ids.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

const UNKNOWN: &str = r#"{
  "user": "nosuch",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "a", "command": ["sleep", "1000"], "autostart": "always",
      "log": { "dir": "/data/logs/a", "stdout": false } },
    { "name": "b", "command": ["sleep", "1001"], "autostart": "always", "user": "root" }
  ]
}"#;

const LOCATED: &str =
    "/etc/svkit/10-test.json:2:3: user: unknown user `nosuch` (slot a): not in this system's passwd database";

#[test]
fn unknown_user_is_a_located_config_error_and_nothing_is_written() {
    if !sandbox_or_skip("unknown_user_is_a_located_config_error_and_nothing_is_written") {
        return;
    }
    let fx = Fixture::new(UNKNOWN);
    let sbx = fx.boot();
    let logs = sbx.wait_for_log("50-svkit exited", Duration::from_secs(10));
    assert!(
        logs.contains(&format!("svkit-reconcile: warning: {LOCATED}")),
        "{logs}"
    );
    assert!(
        logs.contains("slot a not applied: unknown user nosuch"),
        "{logs}"
    );
    assert!(logs.contains("50-svkit exited 0"), "{logs}");
    // The slot whose user is fine is made and runs; a is missing.
    poll("b up", Duration::from_secs(10), || {
        (stdout(&sbx.sh("s6-svstat -o up /run/service/b")).trim() == "true").then_some(())
    });
    let o = sbx.sh("ls -A /run/service; ls -A /data");
    let listed = stdout(&o);
    assert!(!listed.lines().any(|l| l == "a" || l == "logs"), "{listed}");
    sbx.run(&["svctl", "status"], 3);
    for (who, argv) in [
        ("root", &["svctl", "plan"][..]),
        ("nobody", &["svctl", "plan"][..]),
        ("root", &["svctl", "apply"][..]),
        // Inside the running container this machine is the image.
        ("root", &["svctl", "check"][..]),
    ] {
        let o = sbx.run_as(who, argv, 1);
        assert!(err(&o).contains(LOCATED), "{who} {argv:?}: {}", err(&o));
    }
    let o = sbx.sh("ls -A /run/service; ls -A /data");
    assert_eq!(stdout(&o), listed, "plan, apply and check wrote nothing");
    sbx.stop();
}

#[test]
fn numeric_user_without_passwd_entry_runs_as_its_ids() {
    if !sandbox_or_skip("numeric_user_without_passwd_entry_runs_as_its_ids") {
        return;
    }
    let fx = Fixture::new(
        r#"{
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "n", "command": ["sleep", "1000"], "autostart": "always", "user": "4242:4243",
      "log": { "dir": "/data/logs/n", "stdout": false } }
  ]
}"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["n"]);
    wait_field(&sbx, "n", "up", "true");
    let pid = svstat(&sbx, "n", "pid");
    // The pid is the run script's (root's) until it execs the program.
    poll("n runs sleep", Duration::from_secs(10), || {
        let comm = stdout(&sbx.sh(&format!("cat /proc/{pid}/comm")));
        (comm.trim() == "sleep").then_some(())
    });
    let o = sbx.sh(&format!(
        "grep -E '^(Uid|Gid):' /proc/{pid}/status | awk '{{print $2}}'; stat -c %u:%g /data/logs/n"
    ));
    assert_eq!(stdout(&o), "4242\n4243\n4242:4243\n");
    sbx.run(&["svctl", "plan"], 0);
    sbx.run(&["svctl", "check"], 0);
    sbx.stop();
}
