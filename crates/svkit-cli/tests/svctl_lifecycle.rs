//! What a slot's end means, on the real /init: a stop or restart asked for
//! is never the program's own clean exit, a clean exit kept down is done
//! (healthy), a permanent failure says why, readiness that gives up is
//! reported, and READY follows one rule.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;

use svctl_common::*;

/// `clean` exits 0 on SIGTERM (as the demo app does) and on SIGUSR1 (its
/// own decision), 78 on SIGUSR2; `on_clean_exit: stop` keeps it down
/// after a clean exit of its own.
const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "clean", "autostart": "always",
      "command": ["sh", "-c", "trap 'exit 0' TERM USR1; trap 'exit 78' USR2; : >/tmp/clean-trapped.$$; sleep 1000 & wait; wait"],
      "restart": { "on_clean_exit": "stop" } },
    { "name": "rem", "command": ["sleep", "1001"], "autostart": "remember" },
    { "name": "plain", "command": ["sleep", "1002"], "autostart": "always" },
    { "name": "slow", "command": ["sleep", "1003"], "autostart": "always",
      "readiness": { "check": { "command": ["false"], "interval_ms": 100, "timeout_ms": 1000 } } }
  ]
}"#;

const ALL: &[&str] = &["clean", "rem", "plain", "slow"];

fn pid(sbx: &Sandbox, slot: &str) -> String {
    svstat(sbx, slot, "pid")
}

/// Polls until the slot runs a process other than `old`.
fn wait_new_pid(sbx: &Sandbox, slot: &str, old: &str) -> String {
    poll(
        &format!("{slot} restarted (was pid {old})"),
        Duration::from_secs(10),
        || {
            let now = svstat(sbx, slot, "up,pid");
            let p = now.strip_prefix("true ")?;
            (p != old && p != "-1").then(|| p.to_string())
        },
    )
}

/// Sends `sig` to `clean`'s `pid` once its traps are set (it says so with
/// a file): a signal before that would kill it instead of being its exit.
fn signal_trapped(sbx: &Sandbox, pid: &str, sig: &str) {
    let mark = sbx.root().join(format!("tmp/clean-trapped.{pid}"));
    poll("clean's traps set", Duration::from_secs(10), || {
        mark.exists().then_some(())
    });
    sbx.sh(&format!("kill -{sig} {pid}"));
}

/// `svctl check` of one config file: it must refuse it (exit 1); its errors.
fn check_refuses(config: &str) -> String {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("10.json"), config).expect("write");
    let o = std::process::Command::new(svkit_testkit::tool("svctl"))
        .arg("check")
        .env("SVKIT_CONFIG_DIR", t.path())
        .output()
        .expect("svctl");
    expect_code(&o, 1);
    err(&o)
}

#[test]
fn asked_for_ends_are_not_clean_exits_and_a_clean_exit_is_done() {
    if !sandbox_or_skip("asked_for_ends_are_not_clean_exits_and_a_clean_exit_is_done") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    wait_field(&sbx, "clean", "up", "true");

    // A restart: the program exits 0 on SIGTERM, yet it is restarted.
    let old = pid(&sbx, "clean");
    sbx.run(
        &["svctl", "restart", "--wait", "--timeout", "10000", "clean"],
        0,
    );
    let old = wait_new_pid(&sbx, "clean", &old);
    // An operator's SIGTERM: the same.
    sbx.run(&["svctl", "signal", "TERM", "clean"], 0);
    let old = wait_new_pid(&sbx, "clean", &old);
    let (rc, doc) = status_json(&sbx, &["clean"]);
    assert_eq!(rc, Some(0), "{doc}");
    assert_eq!(slot_json(&doc, "clean")["state"], "up");

    // A start right on the heels of a stop, while `finish` may still be
    // deciding: the stop is never taken for a clean exit of its own.
    for _ in 0..3 {
        sbx.run(&["svctl", "stop", "clean"], 0);
        sbx.run(
            &["svctl", "start", "--wait", "--timeout", "10000", "clean"],
            0,
        );
    }
    let old = wait_new_pid(&sbx, "clean", &old);

    // A plain stop: down as wanted, never failed.
    sbx.run(
        &["svctl", "stop", "--wait", "--timeout", "10000", "clean"],
        0,
    );
    let (rc, doc) = status_json(&sbx, &["clean"]);
    let c = slot_json(&doc, "clean");
    assert_eq!(
        (rc, &c["state"], &c["failed"]),
        (Some(0), &"down".into(), &false.into()),
        "{doc}"
    );
    assert!(!sbx.root().join("run/service/clean/.svkit-end").exists());

    // Its own clean exit: done, healthy, kept down.
    sbx.run(
        &["svctl", "start", "--wait", "--timeout", "10000", "clean"],
        0,
    );
    let old = wait_new_pid(&sbx, "clean", &old);
    signal_trapped(&sbx, &old, "USR1");
    wait_field(&sbx, "clean", "wantedup", "false");
    let (rc, doc) = poll("clean done", Duration::from_secs(10), || {
        let (rc, doc) = status_json(&sbx, &["clean"]);
        (slot_json(&doc, "clean")["state"] == "done").then_some((rc, doc))
    });
    let c = slot_json(&doc, "clean");
    assert_eq!(
        (rc, &c["failed"], &c["done"]),
        (Some(0), &false.into(), &true.into()),
        "{doc}"
    );
    let table = stdout(&sbx.exec(&["svctl", "status", "clean"]));
    assert!(table.contains("done"), "{table}");

    // A permanent exit code: failed, and status says why.
    sbx.run(
        &["svctl", "start", "--wait", "--timeout", "10000", "clean"],
        0,
    );
    let old = wait_new_pid(&sbx, "clean", &old);
    signal_trapped(&sbx, &old, "USR2");
    let (rc, doc) = poll("clean failed", Duration::from_secs(10), || {
        let (rc, doc) = status_json(&sbx, &["clean"]);
        (slot_json(&doc, "clean")["state"] == "failed").then_some((rc, doc))
    });
    assert_eq!(rc, Some(3), "{doc}");
    let why = slot_json(&doc, "clean")["why"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(why.contains("exited 78"), "{doc}");
    let o = sbx.run(&["svctl", "wait", "up", "--timeout", "10000", "clean"], 2);
    assert!(
        err(&o).contains("failed permanently (exited 78"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_restart_remembers_up_and_ready_has_one_rule() {
    if !sandbox_or_skip("a_restart_remembers_up_and_ready_has_one_rule") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);

    // A restart of a stopped `remember` slot starts it, and remembers up.
    let desired = fx.data.path().join(".svkit/desired/rem");
    assert!(!desired.exists());
    sbx.run(
        &["svctl", "restart", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    let text = std::fs::read_to_string(&desired).expect("desired state of rem");
    assert_eq!(text.trim(), "up");

    // No readiness: ready once up, in the table, the JSON and `wait ready`.
    wait_field(&sbx, "plain", "up", "true");
    sbx.run(&["svctl", "wait", "ready", "--timeout", "5000", "plain"], 0);
    let (_, doc) = status_json(&sbx, &["plain"]);
    assert_eq!(slot_json(&doc, "plain")["ready"], true, "{doc}");
    let table = stdout(&sbx.exec(&["svctl", "status", "plain"]));
    let row = table.lines().find(|l| l.starts_with("plain")).unwrap_or("");
    assert!(row.contains(" yes "), "{table}");

    // A readiness check that gives up: reported, unhealthy, and `wait ready`
    // ends at once instead of running out its time.
    let (rc, doc) = poll("slow overdue", Duration::from_secs(10), || {
        let (rc, doc) = status_json(&sbx, &["slow"]);
        (slot_json(&doc, "slow")["ready_overdue"] == true).then_some((rc, doc))
    });
    assert_eq!(rc, Some(3), "{doc}");
    assert_eq!(slot_json(&doc, "slow")["ready"], false);
    let table = stdout(&sbx.exec(&["svctl", "status", "slow"]));
    assert!(table.contains("timeout"), "{table}");
    let o = sbx.run(&["svctl", "wait", "ready", "--timeout", "60000", "slow"], 2);
    assert!(err(&o).contains("readiness check gave up"), "{}", err(&o));
}

#[test]
fn every_wait_is_bounded_by_default() {
    let o = std::process::Command::new(svkit_testkit::tool("svctl"))
        .args(["wait", "--help"])
        .output()
        .expect("svctl");
    let help = stdout(&o);
    assert!(help.contains("[default: 60s]"), "{help}");
    let o = std::process::Command::new(svkit_testkit::tool("svctl"))
        .args(["start", "--help"])
        .output()
        .expect("svctl");
    assert!(stdout(&o).contains("[default: 60s]"));
}

/// A oneshot runs to completion at boot: done, healthy; `start --wait` and
/// `restart --wait` run it again and return when it is done; a failing one
/// follows its restart policy, then is failed.
#[test]
fn a_oneshot_runs_to_completion_and_is_done() {
    if !sandbox_or_skip("a_oneshot_runs_to_completion_and_is_done") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "migrate", "type": "oneshot",
        "command": ["sh", "-c", "echo run >> /data/migrations"] },
      { "name": "broken", "type": "oneshot", "command": ["sh", "-c", "exit 3"],
        "restart": { "max_deaths": 2, "within_s": 60 } }
    ] }"#,
    );
    std::fs::write(fx.data.path().join("migrations"), "").expect("write");
    std::os::unix::fs::chown(fx.data.path().join("migrations"), Some(NOBODY), None).expect("chown");
    let sbx = fx.boot();
    wait_supervised(&sbx, &["migrate", "broken"]);
    sbx.run(
        &["svctl", "wait", "done", "--timeout", "10000", "migrate"],
        0,
    );
    let (_, doc) = status_json(&sbx, &["migrate"]);
    assert_eq!(slot_json(&doc, "migrate")["state"], "done", "{doc}");
    let runs = || {
        std::fs::read_to_string(fx.data.path().join("migrations"))
            .expect("read")
            .lines()
            .count()
    };
    assert_eq!(runs(), 1, "once per boot");
    sbx.run(
        &[
            "svctl",
            "restart",
            "--wait",
            "--timeout",
            "10000",
            "migrate",
        ],
        0,
    );
    assert_eq!(runs(), 2, "again on restart, done when --wait returns");
    sbx.run(
        &["svctl", "wait", "done", "--timeout", "10000", "broken"],
        2,
    );
    let (rc, doc) = status_json(&sbx, &["migrate", "broken"]);
    let b = slot_json(&doc, "broken");
    assert_eq!((rc, &b["state"]), (Some(3), &"failed".into()), "{doc}");
    assert!(
        b["why"].as_str().unwrap_or("").contains("died 2 times"),
        "{doc}"
    );
}

#[test]
fn a_oneshot_that_asks_to_restart_is_a_config_error() {
    let e = check_refuses(
        "{\"slots\": [{\"name\": \"m\", \"type\": \"oneshot\", \"command\": [\"true\"],\n  \"restart\": {\"on_clean_exit\": \"restart\"}},\n {\"name\": \"x\", \"type\": \"daemon\", \"command\": [\"true\"]}]}",
    );
    assert!(
        e.contains("restart.on_clean_exit") && e.contains("oneshot"),
        "{e}"
    );
    assert!(e.contains("type") && e.contains("`daemon`"), "{e}");
}

/// `depends_on`: `db` (ready when /tmp/dbready exists), a `migrate` oneshot
/// after `db: ready`, `web` after `migrate: completed` start in that order,
/// say what they wait for, and `stop --all --wait` stops them in reverse.
#[test]
fn dependencies_start_in_order_and_stop_in_reverse() {
    if !sandbox_or_skip("dependencies_start_in_order_and_stop_in_reverse") {
        return;
    }
    // Each program appends `start NAME` / `stop NAME` to /data/order.
    let prog = |name: &str| {
        format!(
            "[\"sh\", \"-c\", \"echo start {name} >> /data/order; trap 'echo stop {name} >> /data/order; exit 0' TERM; sleep 1000 & wait\"]"
        )
    };
    let fx = Fixture::new(&format!(
        r#"{{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      {{ "name": "web", "command": {web}, "depends_on": {{ "migrate": "completed" }} }},
      {{ "name": "migrate", "type": "oneshot", "depends_on": {{ "db": "ready" }},
        "command": ["sh", "-c", "echo start migrate >> /data/order"] }},
      {{ "name": "db", "command": {db},
        "readiness": {{ "check": {{ "command": ["test", "-e", "/tmp/dbready"], "interval_ms": 50 }} }} }}
    ] }}"#,
        web = prog("web"),
        db = prog("db"),
    ));
    let order = fx.data.path().join("order");
    std::fs::write(&order, "").expect("write");
    std::os::unix::fs::chown(&order, Some(NOBODY), None).expect("chown");
    let sbx = fx.boot();
    wait_supervised(&sbx, &["web", "migrate", "db"]);
    // db runs but is not ready: migrate and web wait, and say so.
    let (rc, doc) = poll("web waiting", Duration::from_secs(10), || {
        let (rc, doc) = status_json(&sbx, &["web", "migrate"]);
        (slot_json(&doc, "web")["state"] == "waiting"
            && slot_json(&doc, "migrate")["state"] == "waiting")
            .then_some((rc, doc))
    });
    assert_eq!(rc, Some(3), "waiting is not healthy: {doc}");
    assert_eq!(
        slot_json(&doc, "web")["waiting_for"],
        "migrate (completed)",
        "{doc}"
    );
    let table = stdout(&sbx.exec(&["svctl", "status", "migrate"]));
    assert!(table.contains("waiting for db (ready)"), "{table}");
    assert!(sbx
        .logs()
        .contains("svkit: slot web waits for migrate (completed)"));
    let lines = || std::fs::read_to_string(&order).expect("read");
    assert_eq!(lines(), "start db\n", "nothing started before db is ready");
    let plan = stdout(&sbx.exec(&["svctl", "plan"]));
    assert!(
        plan.contains("order: 1. db\norder: 2. migrate after db (ready)\norder: 3. web after migrate (completed)\n"),
        "{plan}"
    );
    sbx.run(&["svctl", "wait", "up", "--timeout", "300", "web"], 1);

    sbx.sh("touch /tmp/dbready");
    sbx.run(&["svctl", "wait", "up", "--timeout", "10000", "web"], 0);
    poll("web started", Duration::from_secs(10), || {
        lines().contains("start web").then_some(())
    });
    assert_eq!(lines(), "start db\nstart migrate\nstart web\n");
    let (rc, doc) = status_json(&sbx, &[]);
    assert_eq!(rc, Some(0), "{doc}");

    sbx.run(
        &["svctl", "stop", "--all", "--wait", "--timeout", "10000"],
        0,
    );
    assert_eq!(
        lines(),
        "start db\nstart migrate\nstart web\nstop web\nstop db\n"
    );
}

#[test]
fn unknown_dependencies_and_cycles_are_config_errors_with_a_location() {
    let e = check_refuses(
        r#"{"slots": [
  {"name": "a", "command": ["true"], "depends_on": {"b": "up"}},
  {"name": "b", "command": ["true"], "depends_on": {"a": "ready"}},
  {"name": "c", "command": ["true"], "depends_on": {"nope": "up", "a": "soon", "b": "completed"}}
]}"#,
    );
    for want in [
        "10.json:2:",
        "dependency cycle: a -> b -> a",
        "undeclared slot `nope`",
        "`soon`: expected",
        "`b` never completes",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
}

/// `liveness`: a hung program (SIGSTOP) fails its HTTP check and is
/// restarted after `failures` checks in a row; status shows the count; one
/// watcher per run, never more.
#[test]
fn a_hung_slot_is_restarted_by_its_liveness_check() {
    if !sandbox_or_skip("a_hung_slot_is_restarted_by_its_liveness_check") {
        return;
    }
    let fx = Fixture::new(
        r#"{ "user": "nobody", "state_dir": "/data/.svkit", "slots": [
      { "name": "web", "command": ["app", "dashboard", "--port", "18931"],
        "restart": { "on_clean_exit": "stop" },
        "liveness": { "http": "http://127.0.0.1:18931/", "interval_ms": 200,
                      "timeout_ms": 150, "failures": 3 } }
    ] }"#,
    );
    let sbx = fx.boot();
    wait_supervised(&sbx, &["web"]);
    wait_field(&sbx, "web", "up", "true");
    let watchers = || {
        stdout(&sbx.sh(
            "for p in /proc/[0-9]*; do [ \"$(cat $p/comm 2>/dev/null)\" = svkit ] && grep -q liveness $p/cmdline 2>/dev/null && echo $p; done | wc -l",
        ))
        .trim()
        .parse::<usize>()
        .unwrap_or(99)
    };
    poll("a passing check", Duration::from_secs(10), || {
        let (_, doc) = status_json(&sbx, &["web"]);
        (slot_json(&doc, "web")["liveness"]["failing"] == 0).then_some(())
    });
    assert_eq!(watchers(), 1);
    let old = pid(&sbx, "web");
    sbx.sh(&format!("kill -STOP {old}"));
    let new = wait_new_pid(&sbx, "web", &old);
    let logs = sbx.wait_for_log(
        "liveness check of web failed 3 times",
        Duration::from_secs(10),
    );
    assert!(logs.contains("restarting it"), "{logs}");
    // Asked for: a restart, never `done` although the app exits 0 on TERM.
    poll(
        "one watcher, passing again",
        Duration::from_secs(10),
        || {
            let (rc, doc) = status_json(&sbx, &["web"]);
            let w = slot_json(&doc, "web");
            (rc == Some(0)
                && w["state"] == "up"
                && w["liveness"]["failing"] == 0
                && watchers() == 1)
                .then_some(())
        },
    );
    assert_eq!(pid(&sbx, "web"), new);
}

#[test]
fn bad_liveness_checks_are_config_errors_with_a_location() {
    let e = check_refuses(
        r#"{"slots": [
  {"name": "a", "command": ["true"], "liveness": {"tcp": 8080, "http": "http://127.0.0.1/"}},
  {"name": "b", "command": ["true"], "liveness": {"tcp": 70000}},
  {"name": "c", "command": ["true"], "liveness": {"http": "https://example.com/"}},
  {"name": "d", "command": ["true"], "liveness": {"exec": ["true"], "interval_ms": 50}},
  {"name": "e", "command": ["true"], "liveness": {"exec": ["true"], "interval_ms": 1000, "timeout_ms": 2000}},
  {"name": "f", "command": ["true"], "liveness": {"exec": [], "failures": 0}}
]}"#,
    );
    for want in [
        "10.json:2:",
        "exactly one of `exec`, `tcp` or `http`",
        "10.json:3:",
        "70000: expected a port",
        "10.json:4:",
        "https://example.com/",
        "10.json:5:",
        "50 is outside 100..3600000",
        "10.json:6:",
        "2000 is outside 1..1000",
        "10.json:7:",
        "0 is outside 1..100",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
}
