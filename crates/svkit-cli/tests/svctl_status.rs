//! `svctl status` in the sandbox under real s6: every JSON field against
//! `s6-svstat -o` on the same slots in several states, LSB exit codes, and
//! what the slots' non-root user may do.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use serde_json::Value;
use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"] },
      "command": ["sleep", "1000"], "autostart": "always",
      "log": { "dir": "/data/logs/{instance}", "stdout": false, "keep": 3, "max_bytes": 10000 } },
    { "name": "rem", "command": ["sleep", "1001"], "autostart": "remember" },
    { "name": "never", "command": ["sleep", "1002"], "autostart": "never" },
    { "name": "bad", "command": ["sh", "-c", "exit 78"], "autostart": "always" },
    { "name": "once", "command": ["sh", "-c", "exit 3"], "autostart": "never" },
    { "name": "stopped", "command": ["sleep", "1003"], "autostart": "always" },
    { "name": "paused", "command": ["sleep", "1004"], "autostart": "always" }
  ]
}"#;

const FIELDS: &str =
    "up,wantedup,normallyup,ready,paused,pid,exitcode,signal,updownsince,readysince";

fn slot<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["slots"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("{name} not in {doc}"))
}

/// Every s6-svstat field against the JSON of the same slot.
fn compare(sbx: &Sandbox, name: &str) {
    let sv = svstat(sbx, name, FIELDS);
    let f: Vec<&str> = sv.split(' ').collect();
    assert_eq!(f.len(), 10, "{name}: {sv}");
    let (_, doc) = status_json(sbx, &[name]);
    let j = slot(&doc, name);
    let ctx = format!("{name}: svstat {sv}; json {j}");
    let updown = |b: &str| if b == "true" { "up" } else { "down" };
    assert_eq!(
        j["up"].as_bool().map(|b| b.to_string()).as_deref(),
        Some(f[0]),
        "{ctx}"
    );
    assert_eq!(j["want"], updown(f[1]), "{ctx}");
    assert_eq!(j["normally"], updown(f[2]), "{ctx}");
    assert_eq!(j["notified"].to_string(), f[3], "{ctx}");
    // svkit's one rule: ready = up and, when the slot notifies, notified.
    let notifies = sbx
        .root()
        .join(format!("run/service/{name}/notification-fd"))
        .exists();
    let ready = f[0] == "true" && (f[3] == "true" || !notifies);
    assert_eq!(j["ready"], ready, "{ctx}");
    assert_eq!(j["paused"].to_string(), f[4], "{ctx}");
    match f[5] {
        "-1" => assert!(j["pid"].is_null(), "{ctx}"),
        pid => assert_eq!(j["pid"].to_string(), pid, "{ctx}"),
    }
    let le = &j["last_exit"];
    if j["never_started"] == true {
        // s6 before 2.13.2 prints the initial wait status, 0.
        assert!(le.is_null() && matches!(f[6], "0" | "-1"), "{ctx}");
    } else if le.is_null() {
        assert_eq!((f[6], f[7]), ("-1", "NA"), "{ctx}");
    } else if let Some(c) = le.get("code") {
        assert_eq!((c.to_string().as_str(), f[7]), (f[6], "NA"), "{ctx}");
    } else {
        assert_eq!((f[6], le["signal"].as_str()), ("-1", Some(f[7])), "{ctx}");
    }
    assert_eq!(j["since_tai64n"], f[8], "{ctx}");
    assert_eq!(j["ready_since_tai64n"], f[9], "{ctx}");
    let dt = stdout(&sbx.sh(&format!("s6-svdt /run/service/{name} | wc -l")));
    assert_eq!(j["deaths"].to_string(), dt.trim(), "{ctx}");
}

#[test]
fn status_matches_s6_svstat_and_exit_codes() {
    if !sandbox_or_skip("status_matches_s6_svstat_and_exit_codes") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    let all = [
        "gw-default",
        "rem",
        "never",
        "bad",
        "once",
        "stopped",
        "paused",
    ];
    wait_supervised(&sbx, &all);
    wait_field(&sbx, "gw-default", "up", "true");
    wait_field(&sbx, "paused", "up", "true");
    wait_field(&sbx, "stopped", "up", "true");
    // bad: exit 78, finish exits 125: down and no longer wanted up.
    wait_field(&sbx, "bad", "wantedup", "false");
    let o = sbx.sh("s6-svc -o /run/service/once && s6-svc -d /run/service/stopped && s6-svc -p /run/service/paused");
    expect_code(&o, 0);
    wait_field(&sbx, "once", "exitcode", "3");
    wait_field(&sbx, "stopped", "signal", "SIGTERM");
    wait_field(&sbx, "paused", "paused", "true");
    for s in all {
        compare(&sbx, s);
    }

    let (rc, doc) = status_json(&sbx, &[]);
    // bad failed permanently: not in its wanted state.
    assert_eq!(rc, Some(3), "{doc}");
    let names: Vec<&str> = doc["slots"]
        .as_array()
        .expect("slots")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    let mut sorted = all.to_vec();
    sorted.sort();
    assert_eq!(names, sorted);
    let bad = slot(&doc, "bad");
    assert_eq!(
        (bad["state"].as_str(), bad["failed"].as_bool()),
        (Some("failed"), Some(true))
    );
    assert_eq!(bad["last_exit"]["code"], 78);
    let st = slot(&doc, "stopped");
    assert_eq!(
        (st["state"].as_str(), st["failed"].as_bool()),
        (Some("down"), Some(false))
    );
    assert_eq!(slot(&doc, "gw-default")["log_dir"], "/data/logs/default");
    assert!(slot(&doc, "never")["log_dir"].is_null());

    let (rc, _) = status_json(&sbx, &["gw-default", "never", "rem", "stopped", "once"]);
    assert_eq!(rc, Some(0));
    let (rc, doc) = status_json(&sbx, &["gw-default", "nope"]);
    assert_eq!(rc, Some(4));
    assert_eq!(doc["unknown"][0], "nope");
    // The table: same exit codes, a header, one line per slot.
    let o = sbx.run(&["svctl", "status"], 3);
    let t = stdout(&o);
    assert!(t.starts_with("NAME "), "{t}");
    assert_eq!(t.lines().count(), all.len() + 1, "{t}");
    assert!(!t.contains('\x1b'), "no colour off a tty: {t}");
    // A foreign slot shows only with --all.
    let o = sbx.sh("mkdir /run/service/foreign && printf '#!/bin/sh\\nexec sleep 1000\\n' > /run/service/foreign/run && chmod +x /run/service/foreign/run && s6-svscanctl -a /run/service");
    expect_code(&o, 0);
    wait_supervised(&sbx, &["foreign"]);
    wait_field(&sbx, "foreign", "up", "true");
    let (_, doc) = status_json(&sbx, &[]);
    assert!(!doc.to_string().contains("foreign"));
    let o = sbx.exec(&["svctl", "status", "--json", "--all"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(slot(&doc, "foreign")["svkit"], false);
    compare(&sbx, "foreign");
    sbx.stop();
}

#[test]
fn slot_user_controls_its_slots_but_cannot_apply() {
    if !sandbox_or_skip("slot_user_controls_its_slots_but_cannot_apply") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["gw-default", "rem"]);
    wait_field(&sbx, "gw-default", "up", "true");
    sbx.run_as("nobody", &["svctl", "status", "--json", "gw-default"], 0);
    sbx.run_as(
        "nobody",
        &[
            "svctl",
            "stop",
            "--wait",
            "--timeout",
            "10000",
            "gw-default",
        ],
        0,
    );
    assert_eq!(svstat(&sbx, "gw-default", "up"), "false");
    sbx.run_as(
        "nobody",
        &[
            "svctl",
            "start",
            "--wait",
            "--timeout",
            "10000",
            "gw-default",
        ],
        0,
    );
    assert_eq!(svstat(&sbx, "gw-default", "up"), "true");
    // A remember slot: the user's choice is persisted, owned by the user.
    sbx.run_as(
        "nobody",
        &["svctl", "start", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    let o = sbx.sh("cat /data/.svkit/desired/rem; stat -c %U /data/.svkit/desired/rem");
    assert_eq!(stdout(&o), "up\nnobody\n");
    sbx.run_as(
        "nobody",
        &["svctl", "restart", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    let o = sbx.run_as("nobody", &["svctl", "apply"], 111);
    assert!(
        err(&o).contains("svctl: fatal: unable to apply: permission denied"),
        "{}",
        err(&o)
    );
    let o = sbx.run_as("nobody", &["svctl", "register", "eve"], 111);
    assert!(err(&o).contains("needs root"), "{}", err(&o));
    sbx.stop();
}

const MIXED: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "mine", "command": ["sleep", "1000"], "autostart": "always",
      "log": { "dir": "/data/logs/mine", "stdout": false } },
    { "name": "theirs", "command": ["sleep", "1001"], "autostart": "always", "user": "root" }
  ]
}"#;

/// As the slots' user, with a root slot beside them: status shows what it
/// can read and marks the rest unreadable, exiting by the readable ones
/// (it used to fail with `Permission denied` (111), then exit 4 whatever
/// its own slots did); a named unreadable slot is unknown (4). `plan` and `render` say
/// what root's apply does, where they used to plan every slot as an
/// update without `s6-setuidgid`.
#[test]
fn slot_user_sees_others_slots_as_unreadable_and_plans_as_root_would() {
    if !sandbox_or_skip("slot_user_sees_others_slots_as_unreadable_and_plans_as_root_would") {
        return;
    }
    let fx = Fixture::new(MIXED);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["mine", "theirs"]);
    wait_field(&sbx, "mine", "up", "true");
    wait_field(&sbx, "theirs", "up", "true");

    let o = sbx.run_as("nobody", &["svctl", "status"], 0);
    let t = stdout(&o);
    let row = |name: &str| {
        t.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("no {name} row: {t}"))
    };
    assert_eq!(row("mine")[1], "up", "{t}");
    assert_eq!(
        row("theirs")[..9],
        [
            "theirs",
            "unreadable",
            "?",
            "?",
            "?",
            "?",
            "permission",
            "denied",
            "?"
        ],
        "{t}"
    );
    assert!(
        err(&o).contains("svctl: warning: status of theirs unreadable as uid 65534"),
        "{}",
        err(&o)
    );
    let o = sbx.run_as("nobody", &["svctl", "status", "--json"], 0);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("json");
    let theirs = slot(&doc, "theirs");
    assert_eq!(theirs["state"], "unreadable", "{doc}");
    assert!(
        theirs["unreadable"]
            .as_str()
            .is_some_and(|s| s.contains("Permission denied")),
        "{doc}"
    );
    assert!(theirs["up"].is_null() && theirs["supervised"].is_null());
    let mine = slot(&doc, "mine");
    assert_eq!(
        (mine["state"].as_str(), mine["up"].as_bool()),
        (Some("up"), Some(true))
    );
    assert!(mine["unreadable"].is_null(), "{doc}");
    // Naming only one's own slots: the usual answer.
    sbx.run_as("nobody", &["svctl", "status", "mine"], 0);
    sbx.run_as("nobody", &["svctl", "status", "theirs"], 4);
    // Root still sees everything.
    let (rc, doc) = status_json(&sbx, &[]);
    assert_eq!(rc, Some(0), "{doc}");

    // plan as the user: what root's apply would do, i.e. nothing.
    let o = sbx.run_as("nobody", &["svctl", "plan"], 0);
    let plan = stdout(&o);
    assert_eq!(plan.lines().count(), 2, "{plan}");
    assert!(
        plan.lines().all(|l| l.contains("action=unchanged")),
        "{plan}"
    );
    // render as the user and as root: the same files, dropping to nobody.
    sbx.run_as("nobody", &["svctl", "render", "--to", "/tmp/as-nobody"], 0);
    sbx.run(&["svctl", "render", "--to", "/tmp/as-root"], 0);
    let o = sbx.sh("diff -r /tmp/as-root /tmp/as-nobody && grep -c 's6-setuidgid nobody' /tmp/as-nobody/mine/run");
    expect_code(&o, 0);
    assert_eq!(stdout(&o).trim(), "1");
    sbx.stop();
}

/// The slot user's own slot failed for good beside another user's slot:
/// 3, by its own slots, not 4 for the one it cannot read.
#[test]
fn slot_user_status_exits_by_its_own_slots() {
    if !sandbox_or_skip("slot_user_status_exits_by_its_own_slots") {
        return;
    }
    let fx = Fixture::new(
        r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "mine", "command": ["sh", "-c", "exit 78"] },
    { "name": "theirs", "command": ["sleep", "1001"], "user": "root" }
  ]
}"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["mine", "theirs"]);
    poll("mine failed", std::time::Duration::from_secs(10), || {
        let (_, doc) = status_json(&sbx, &["mine"]);
        (doc["slots"][0]["state"] == "failed").then_some(())
    });
    let o = sbx.run_as("nobody", &["svctl", "status"], 3);
    assert!(stdout(&o).contains("unreadable"), "{}", stdout(&o));
    sbx.stop();
}
