//! `svctl register` / `unregister` in the sandbox under real s6.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"] },
      "command": ["sleep", "1000"], "autostart": "always",
      "log": { "dir": "/data/logs/{instance}", "stdout": false } },
    { "name": "plain", "command": ["sleep", "1001"], "autostart": "never" }
  ]
}"#;

const TWO_TEMPLATES: &str = r#"{
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": [] }, "command": ["sleep", "1000"] },
    { "name": "wk-{instance}", "instances": { "names": [] }, "command": ["sleep", "1000"] }
  ]
}"#;

/// s6-supervise processes running for `slot` (their argv is the slot name).
fn supervisors(sbx: &Sandbox, slot: &str) -> usize {
    let o = sbx.sh(&format!(
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^s6-supervise {slot} $'"
    ));
    stdout(&o).trim().parse().unwrap_or(0)
}

/// `svctl register ARGS...`, then at once, in the same shell, `s6-svok`
/// on `slot`: register returns only once the slot is supervised, so no
/// wait is needed. Its stdout ends with `svok=CODE`; it exits with
/// register's code.
fn register_then_svok(sbx: &Sandbox, args: &[&str], slot: &str) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    sbx.sh(&format!(
        "svctl register {}; rc=$?; s6-svok /run/service/{slot}; echo svok=$?; exit $rc",
        args.join(" ")
    ))
}

#[test]
fn register_then_unregister_an_instance() {
    if !sandbox_or_skip("register_then_unregister_an_instance") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["gw-default", "plain"]);
    let o = register_then_svok(&sbx, &["eve"], "gw-eve");
    expect_code(&o, 0);
    assert!(
        stdout(&o).contains("reconcile: slot=gw-eve action=create state=up"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).ends_with("svok=0\n"),
        "register returned before gw-eve was supervised: {}",
        stdout(&o)
    );
    wait_field(&sbx, "gw-eve", "up", "true");
    // The registration is state: it survives a restart.
    assert!(fx
        .data
        .path()
        .join(".svkit/instances/gw-{instance}/eve")
        .is_file());
    // Twice is fine; a name the config declares is not registrable.
    sbx.run(&["svctl", "register", "eve"], 0);
    sbx.run(&["svctl", "register", "default"], 1);
    sbx.run(&["svctl", "register", "Bad/Name"], 1);
    sbx.run(
        &["svctl", "register", "--slot", "nope-{instance}", "x"],
        100,
    );
    let (_, doc) = status_json(&sbx, &["gw-eve"]);
    assert_eq!(doc["slots"][0]["log_dir"], "/data/logs/eve");
    // check and render see the same slots as apply and status.
    let o = sbx.run(&["svctl", "check"], 0);
    assert!(stdout(&o).contains("config ok: 3 slots"), "{}", stdout(&o));
    let o = sbx.run(&["svctl", "render", "--to", "/tmp/rendered"], 0);
    assert!(
        stdout(&o).contains("render: slot=gw-eve "),
        "{}",
        stdout(&o)
    );
    sbx.stop();

    let sbx = fx.boot();
    wait_supervised(&sbx, &["gw-eve"]);
    wait_field(&sbx, "gw-eve", "up", "true");
    let o = sbx.run(&["svctl", "unregister", "eve"], 0);
    assert!(
        stdout(&o).contains("reconcile: slot=gw-eve action=delete"),
        "{}",
        stdout(&o)
    );
    assert!(!sbx.root().join("run/service/gw-eve").exists());
    poll("gw-eve supervisor gone", Duration::from_secs(10), || {
        (supervisors(&sbx, "gw-eve") == 0).then_some(())
    });
    assert_eq!(
        supervisors(&sbx, "gw-default"),
        1,
        "the check sees supervisors"
    );
    let o = sbx.run(&["svctl", "unregister", "eve"], 1);
    assert!(err(&o).contains("not a registered instance"), "{}", err(&o));
    let o = sbx.run(&["svctl", "unregister", "default"], 1);
    assert!(err(&o).contains("declared by the config"), "{}", err(&o));
    assert!(supervised(&sbx, "gw-default"));
    sbx.stop();
}

#[test]
fn several_templates_need_slot() {
    if !sandbox_or_skip("several_templates_need_slot") {
        return;
    }
    let fx = Fixture::new(TWO_TEMPLATES);
    let sbx = fx.boot();
    let o = sbx.run(&["svctl", "register", "x"], 100);
    assert!(err(&o).contains("--slot"), "{}", err(&o));
    let o = register_then_svok(&sbx, &["--slot", "wk-{instance}", "x"], "wk-x");
    expect_code(&o, 0);
    assert!(
        stdout(&o).ends_with("svok=0\n"),
        "register returned before wk-x was supervised: {}",
        stdout(&o)
    );
    assert!(!sbx.root().join("run/service/gw-x").exists());
    sbx.stop();
}

/// A `from_dir` holding a directory that cannot be an instance: each
/// verb says so once (register and unregister load the config twice).
#[test]
fn from_dir_warnings_are_printed_once() {
    if !sandbox_or_skip("from_dir_warnings_are_printed_once") {
        return;
    }
    let fx = Fixture::new(
        r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"], "from_dir": { "path": "/data/profiles" } },
      "command": ["sleep", "1000"], "autostart": "always" }
  ]
}"#,
    );
    std::fs::create_dir_all(fx.data.path().join("profiles/Not A Name")).expect("mkdir");
    let sbx = fx.boot();
    wait_supervised(&sbx, &["gw-default"]);
    let warning = "skipping discovered instance \"Not A Name\"";
    for argv in [
        &["svctl", "register", "eve"][..],
        &["svctl", "unregister", "eve"][..],
        &["svctl", "plan"][..],
        &["svctl", "check"][..],
    ] {
        let o = sbx.exec(argv);
        assert_eq!(err(&o).matches(warning).count(), 1, "{argv:?}: {}", err(&o));
    }
    sbx.stop();
}
