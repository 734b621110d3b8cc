//! Declared features that only rendered text proved before, run on
//! s6-overlay's real `/init`: several config layers booted together, a
//! `cwd` with spaces and quotes, a readiness check run in the slot's
//! `cwd`, the logger of a root slot, `exec` liveness (as the slot's user)
//! and `tcp` liveness, `depends_on: "up"` on a template, and
//! `permanent_exit_codes` other than the default (several, and none).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;
use svctl_common::*;

const BASE: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "cwdq", "cwd": "/data/it's a \"dir\" $HOME",
      "command": ["sh", "-c", "pwd > /tmp/cwdq.out; exec sleep 100000"] },
    { "name": "readycwd", "cwd": "/data/ready dir", "command": ["sleep", "100000"],
      "readiness": { "check": { "command": ["test", "-e", "marker"], "interval_ms": 100 } } },
    { "name": "rootlog", "user": "root",
      "command": ["sh", "-c", "echo \"rootline uid=$(id -u)\"; exec sleep 100000"],
      "log": { "dir": "/data/logs/rootlog", "stdout": false } },
    { "name": "probed", "command": ["sleep", "100000"],
      "liveness": { "exec": ["sh", "-c", "id -u > /tmp/liveness.uid"], "interval_ms": 200, "failures": 2 } },
    { "name": "served", "command": ["app", "dashboard", "--port", "18941"],
      "liveness": { "tcp": 18941, "interval_ms": 200, "timeout_ms": 150, "failures": 2 } },
    { "name": "deaf", "command": ["sleep", "100000"],
      "liveness": { "tcp": 18942, "interval_ms": 200, "timeout_ms": 150, "failures": 2 } }
  ]
}"#;

/// A second layer: slots of its own, depending on the first layer's.
const MORE: &str = r#"{
  "slots": [
    { "name": "worker-{instance}", "instances": { "names": ["a", "b"] },
      "command": ["sleep", "100000"], "autostart": "never" },
    { "name": "web", "command": ["sleep", "100000"],
      "depends_on": { "worker-{instance}": "up", "served": "up" } },
    { "name": "perm", "command": ["sh", "-c", "exit 5"],
      "restart": { "permanent_exit_codes": [3, 5] } },
    { "name": "noperm", "command": ["sh", "-c", "exit 78"],
      "restart": { "permanent_exit_codes": [], "max_deaths": 100 } }
  ]
}"#;

fn state(sbx: &Sandbox, slot: &str) -> String {
    let (_, v) = status_json(sbx, &[slot]);
    v["slots"][0]["state"].as_str().unwrap_or("").to_string()
}

fn deaths(sbx: &Sandbox, slot: &str) -> u64 {
    let (_, v) = status_json(sbx, &[slot]);
    v["slots"][0]["deaths"].as_u64().unwrap_or(0)
}

fn boot() -> (Fixture, Sandbox) {
    let fx = Fixture::new(BASE);
    fx.rootfs.file("etc/svkit/20-more.json", MORE);
    for d in ["it's a \"dir\" $HOME", "ready dir"] {
        fs::create_dir(fx.data.path().join(d)).expect("mkdir");
    }
    let sbx = fx.boot();
    (fx, sbx)
}

#[test]
fn layers_cwd_readiness_root_logger_and_liveness_on_the_real_init() {
    if !sandbox_or_skip("layers_cwd_readiness_root_logger_and_liveness_on_the_real_init") {
        return;
    }
    let (fx, sbx) = boot();
    // Both layers' slots were made and are supervised.
    wait_supervised(
        &sbx,
        &["cwdq", "readycwd", "rootlog", "probed", "web", "perm"],
    );

    // The cwd reaches the program byte for byte.
    let cwd = poll("cwdq wrote its cwd", Duration::from_secs(10), || {
        let o = stdout(&sbx.sh("cat /tmp/cwdq.out 2>/dev/null"));
        (!o.is_empty()).then_some(o)
    });
    assert_eq!(cwd.trim_end(), "/data/it's a \"dir\" $HOME");

    // The readiness check runs in the cwd: a relative `marker` there.
    wait_field(&sbx, "readycwd", "up", "true");
    assert_eq!(svstat(&sbx, "readycwd", "ready"), "false");
    fs::write(fx.data.path().join("ready dir/marker"), "").expect("marker");
    wait_field(&sbx, "readycwd", "ready", "true");

    // A root slot's logger writes its lines to its dir, owned by root.
    let logdir = fx.data.path().join("logs/rootlog");
    poll(
        "the root slot's line in its log",
        Duration::from_secs(10),
        || {
            fs::read_to_string(logdir.join("current"))
                .ok()
                .filter(|t| t.contains("rootline uid=0"))
        },
    );
    assert_eq!(fs::metadata(&logdir).expect("log dir").uid(), 0);

    // An exec liveness check runs as the slot's user, not as root.
    let uid = poll("the exec check ran", Duration::from_secs(10), || {
        let o = stdout(&sbx.sh("cat /tmp/liveness.uid 2>/dev/null"));
        (!o.trim().is_empty()).then_some(o)
    });
    assert_eq!(uid.trim(), NOBODY.to_string());

    // tcp liveness: a port that answers keeps the slot; one that refuses
    // gets it restarted.
    sbx.wait_for_log(
        "liveness check of deaf failed 2 times",
        Duration::from_secs(15),
    );
    assert!(
        !sbx.logs().contains("liveness check of served failed"),
        "{}",
        sbx.logs()
    );
    assert_eq!(deaths(&sbx, "served"), 0);
}

#[test]
fn template_dependencies_and_exit_code_policies_on_the_real_init() {
    if !sandbox_or_skip("template_dependencies_and_exit_code_policies_on_the_real_init") {
        return;
    }
    let (_fx, sbx) = boot();
    wait_supervised(&sbx, &["web", "worker-a", "worker-b", "perm", "noperm"]);

    // `up` of a template means every instance: web waits for both.
    poll("web waits", Duration::from_secs(10), || {
        (state(&sbx, "web") == "waiting").then_some(())
    });
    sbx.run(&["svctl", "start", "worker-a", "--wait"], 0);
    // Still waiting: only one instance is up (its run looks again on each
    // change; give it the time a change takes to be seen).
    sbx.run(&["svctl", "wait", "ready", "web", "--timeout", "1500"], 1);
    assert_eq!(state(&sbx, "web"), "waiting");
    sbx.run(&["svctl", "start", "worker-b", "--wait"], 0);
    sbx.run(&["svctl", "wait", "ready", "web", "--timeout", "10000"], 0);
    assert_eq!(state(&sbx, "web"), "up");

    // Any of several permanent exit codes fails the slot for good.
    poll("perm failed", Duration::from_secs(10), || {
        (state(&sbx, "perm") == "failed").then_some(())
    });
    let (_, v) = status_json(&sbx, &["perm"]);
    assert!(
        v["slots"][0]["why"].as_str().unwrap_or("").contains('5'),
        "{v}"
    );
    assert_eq!(deaths(&sbx, "perm"), 1);

    // None: 78 is restarted like any crash.
    poll("noperm restarted", Duration::from_secs(20), || {
        (deaths(&sbx, "noperm") >= 2).then_some(())
    });
    assert_ne!(state(&sbx, "noperm"), "failed");
}
