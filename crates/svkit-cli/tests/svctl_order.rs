//! The order of the bulk verbs on the real /init: `restart --all` restarts
//! what is up, a dependency before its dependents, and leaves stopped slots
//! stopped; `stop --all --wait` stops dependents before what they depend on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

/// A program that takes a second to stop: what is restarted or stopped
/// after it shows in the up/down stamps. Its trap is set once
/// `/tmp/trapped-NAME` exists: s6 says a slot is up as soon as its run
/// script starts, which may still be waiting on a dependency, and a TERM
/// before the trap ends it at once.
fn slow_stop(name: &str) -> String {
    format!(
        r#"["sh", "-c", "trap 'sleep 1; exit 0' TERM; : > /tmp/trapped-$0; while :; do sleep 0.1; done", "{name}"]"#
    )
}

/// Waits until `slow_stop(name)` has set its trap.
fn wait_trapped(sbx: &Sandbox, name: &str) {
    let marker = sbx.root().join(format!("tmp/trapped-{name}"));
    poll(&format!("{name}'s trap"), Duration::from_secs(10), || {
        marker.exists().then_some(())
    });
}

/// s6's up/down stamp of `slot` (a TAI64N label: in time order as text).
fn stamp(sbx: &Sandbox, slot: &str) -> String {
    svstat(sbx, slot, "updownsince")
}

#[test]
fn restart_all_restarts_what_is_up_dependencies_first() {
    if !sandbox_or_skip("restart_all_restarts_what_is_up_dependencies_first") {
        return;
    }
    let config = format!(
        r#"{{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    {{ "name": "app", "command": ["sleep", "1000"], "depends_on": {{ "redis": "up" }} }},
    {{ "name": "manual", "command": ["sleep", "1001"] }},
    {{ "name": "redis", "command": {redis} }},
    {{ "name": "rem", "command": ["sleep", "1002"], "autostart": "remember" }}
  ]
}}"#,
        redis = slow_stop("redis")
    );
    let fx = Fixture::new(&config);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["app", "manual", "redis", "rem"]);
    for s in ["app", "manual", "redis"] {
        wait_field(&sbx, s, "up", "true");
    }
    wait_trapped(&sbx, "redis");
    // rem is remembered off (its default); manual is stopped by hand.
    sbx.run(
        &["svctl", "stop", "--wait", "--timeout", "10000", "manual"],
        0,
    );
    let pids: Vec<String> = ["app", "redis"]
        .iter()
        .map(|s| svstat(&sbx, s, "pid"))
        .collect();
    sbx.run(
        &["svctl", "restart", "--all", "--wait", "--timeout", "10000"],
        0,
    );
    for s in ["manual", "rem"] {
        assert_eq!(svstat(&sbx, s, "up,wantedup"), "false false", "{s}");
    }
    for (s, old) in ["app", "redis"].iter().zip(&pids) {
        assert_eq!(svstat(&sbx, s, "up"), "true", "{s}");
        assert_ne!(&svstat(&sbx, s, "pid"), old, "{s} was not restarted");
    }
    // redis's new process was up before app was restarted.
    let (redis, app) = (stamp(&sbx, "redis"), stamp(&sbx, "app"));
    assert!(redis < app, "redis up at {redis}, app at {app}");
    sbx.stop();
}

#[test]
fn stop_all_stops_dependents_and_independents_first() {
    if !sandbox_or_skip("stop_all_stops_dependents_and_independents_first") {
        return;
    }
    let config = format!(
        r#"{{
  "slots": [
    {{ "name": "base", "command": ["sleep", "1000"] }},
    {{ "name": "dep", "command": {dep}, "depends_on": {{ "base": "up" }} }},
    {{ "name": "worker", "command": ["sleep", "1001"] }}
  ]
}}"#,
        dep = slow_stop("dep")
    );
    let fx = Fixture::new(&config);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["base", "dep", "worker"]);
    for s in ["base", "dep", "worker"] {
        wait_field(&sbx, s, "up", "true");
    }
    wait_trapped(&sbx, "dep");
    sbx.run(
        &["svctl", "stop", "--all", "--wait", "--timeout", "10000"],
        0,
    );
    let (base, dep, worker) = (
        stamp(&sbx, "base"),
        stamp(&sbx, "dep"),
        stamp(&sbx, "worker"),
    );
    // Nothing depends on worker nor on dep: both in the first layer, so
    // worker is down while dep takes its second; base only after dep.
    assert!(worker < dep, "worker down at {worker}, dep at {dep}");
    assert!(dep < base, "dep down at {dep}, base at {base}");
    sbx.stop();
}
