//! Reconcile at boot and at runtime, in the sandbox under real s6.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use svkit_testkit::{
    poll, sandbox_or_skip, stdout, stdout_ok, svstat, Fixture, Sandbox, TEST_CONFIG,
};

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}",
      "instances": { "names": ["default"], "from_dir": { "path": "/data/profiles", "require_file": "SOUL.md" } },
      "command": ["sleep", "1000"],
      "autostart": "always",
      "log": { "dir": "/data/logs/{instance}", "stdout": false, "keep": 3, "max_bytes": 10000 } },
    { "name": "never", "command": ["sleep", "1000"], "autostart": "never" },
    { "name": "remember", "command": ["sleep", "1001"], "autostart": "remember" },
    { "name": "dash", "command": ["sleep", "1002"], "autostart": { "if_env": "APP_DASHBOARD" } },
    { "name": "nodash", "command": ["sleep", "1003"], "autostart": { "if_env": "APP_NODASH" } }
  ]
}"#;

/// A rootfs with the hook and the config, and three profiles (one without
/// its SOUL.md, so not an instance) on a data volume.
fn fixture(config: &str) -> Fixture {
    let fx = Fixture::bare(config);
    for p in ["alice", "bob", "carol", "nosoul"] {
        fs::create_dir_all(fx.data.path().join("profiles").join(p)).expect("mkdir");
        if p != "nosoul" {
            fs::write(fx.data.path().join("profiles").join(p).join("SOUL.md"), "").expect("write");
        }
    }
    fx
}

/// `s6-svstat -o` once the slot is supervised: `s6-svscanctl -a` is
/// asynchronous, so right after boot the supervisor may not be there yet.
fn svstat_supervised(sbx: &Sandbox, slot: &str, fields: &str) -> String {
    poll(
        &format!("{slot} supervised"),
        Duration::from_secs(10),
        || {
            let out = svstat(sbx, slot, fields);
            (!out.is_empty()).then_some(out)
        },
    )
}

/// (path → inode, mtime, size) of every file svkit manages in the scandir:
/// everything but s6's own supervise/ and event/ dirs.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, i64, i64, u64)> {
    let mut out = BTreeMap::new();
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, (u64, i64, i64, u64)>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            if name == "supervise" || name == "event" || name == ".svkit" && e.path().is_dir() {
                continue;
            }
            let p = e.path();
            let m = fs::symlink_metadata(&p).expect("lstat");
            out.insert(
                p.strip_prefix(base).expect("prefix").to_path_buf(),
                (m.ino(), m.mtime(), m.mtime_nsec(), m.size()),
            );
            if m.is_dir() {
                walk(&p, base, out);
            }
        }
    }
    let scandir = root.join("run/service");
    walk(&scandir, &scandir, &mut out);
    out
}

fn pids(sbx: &Sandbox, slots: &[&str]) -> BTreeMap<String, String> {
    slots
        .iter()
        .map(|s| (s.to_string(), svstat(sbx, s, "pid")))
        .collect()
}

const ALL: &[&str] = &[
    "gw-default",
    "gw-alice",
    "gw-bob",
    "gw-carol",
    "never",
    "remember",
    "dash",
    "nodash",
];

fn wait_up(sbx: &Sandbox, slot: &str) {
    poll(&format!("{slot} up"), Duration::from_secs(10), || {
        (svstat(sbx, slot, "up") == "true").then_some(())
    });
}

#[test]
fn boot_makes_every_slot_with_its_autostart() {
    if !sandbox_or_skip("boot_makes_every_slot_with_its_autostart") {
        return;
    }
    let fx = fixture(CONFIG);
    let sbx = fx.boot_env(&["APP_DASHBOARD=yes"]);
    let logs = sbx.logs();
    for slot in ALL {
        assert!(
            logs.contains(&format!("reconcile: slot={slot} action=create")),
            "{slot}: {logs}"
        );
        let want = matches!(*slot, "never" | "remember" | "nodash");
        poll(
            &format!("{slot} supervised"),
            Duration::from_secs(10),
            || {
                sbx.sh(&format!("s6-svok /run/service/{slot}"))
                    .status
                    .success()
                    .then_some(())
            },
        );
        assert_eq!(
            svstat(&sbx, slot, "wantedup"),
            if want { "false" } else { "true" },
            "{slot}"
        );
    }
    assert!(
        !logs.contains("gw-nosoul"),
        "a profile without SOUL.md is not an instance"
    );
    // The log dir exists, owned by the slot's user, before the logger runs.
    let o = sbx.sh("stat -c %U /data/logs/alice");
    assert_eq!(stdout(&o).trim(), "nobody");
    // The slot's user controls its slot natively (supervise/ prepared).
    wait_up(&sbx, "gw-alice");
    let o = sbx.exec_as("nobody", &["s6-svc", "-d", "/run/service/gw-alice"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    poll("gw-alice down", Duration::from_secs(10), || {
        (svstat(&sbx, "gw-alice", "up") == "false").then_some(())
    });
    sbx.stop();
}

#[test]
fn second_apply_writes_nothing_and_restarts_nothing() {
    if !sandbox_or_skip("second_apply_writes_nothing_and_restarts_nothing") {
        return;
    }
    let fx = fixture(CONFIG);
    let sbx = fx.boot_env(&["APP_DASHBOARD=1"]);
    for s in ["gw-default", "gw-alice", "gw-bob", "gw-carol", "dash"] {
        wait_up(&sbx, s);
    }
    let before = snapshot(&sbx.root());
    let pids_before = pids(&sbx, ALL);
    let o = sbx.exec(&["svkit-reconcile"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        stdout(&o).matches("action=unchanged").count(),
        ALL.len(),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        snapshot(&sbx.root()),
        before,
        "a second apply wrote something"
    );
    assert_eq!(
        pids(&sbx, ALL),
        pids_before,
        "a second apply restarted something"
    );

    // Change one slot's command: only its files change, only it restarts.
    let edited = CONFIG.replace(r#"["sleep", "1002"]"#, r#"["sleep", "2002"]"#);
    let o = sbx.reconcile_with(&edited);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("slot=dash action=update state=up files=run restart=yes"),
        "{out}"
    );
    assert_eq!(
        out.matches("action=unchanged").count(),
        ALL.len() - 1,
        "{out}"
    );
    let after = snapshot(&sbx.root());
    let changed: Vec<_> = after
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    // The slot dir's own mtime moves with the rename of its new `run`.
    assert_eq!(
        changed,
        vec![PathBuf::from("dash"), PathBuf::from("dash/run")],
        "only dash/run may change"
    );
    let new_pid = poll("dash restarted", Duration::from_secs(10), || {
        let p = svstat(&sbx, "dash", "pid");
        (p != pids_before["dash"] && p != "-1").then_some(p)
    });
    // The pid is the run script's until it execs the program (after the
    // chown of its log pipe, a fork of its own).
    poll("dash runs the new command", Duration::from_secs(10), || {
        let cmdline = stdout(&sbx.sh(&format!("cat /proc/{new_pid}/cmdline")));
        cmdline.contains("2002").then_some(())
    });
    let mut others = pids(&sbx, ALL);
    others.remove("dash");
    let mut expect = pids_before.clone();
    expect.remove("dash");
    assert_eq!(others, expect, "other slots restarted");
    sbx.stop();
}

#[test]
fn removed_slot_is_deleted_and_foreign_slot_untouched() {
    if !sandbox_or_skip("removed_slot_is_deleted_and_foreign_slot_untouched") {
        return;
    }
    let fx = fixture(CONFIG);
    let sbx = fx.boot_env(&["APP_DASHBOARD=1"]);
    let o = sbx.sh("mkdir /run/service/foreign && printf '#!/bin/sh\\nexec sleep 999\\n' > /run/service/foreign/run && chmod 755 /run/service/foreign/run && s6-svscanctl -a /run/service");
    assert!(o.status.success());
    wait_up(&sbx, "foreign");
    wait_up(&sbx, "dash");
    let foreign_pid = svstat(&sbx, "foreign", "pid");
    let dash_pid = svstat(&sbx, "dash", "pid");
    let edited = CONFIG.replace(
        r#"    { "name": "dash", "command": ["sleep", "1002"], "autostart": { "if_env": "APP_DASHBOARD" } },
"#,
        "",
    );
    assert_ne!(edited, CONFIG);
    let o = sbx.reconcile_with(&edited);
    let out = stdout_ok(&o);
    assert!(out.contains("slot=dash action=delete state=down"), "{out}");
    assert!(!out.contains("foreign"));
    assert!(!sbx.root().join("run/service/dash").exists());
    sbx.wait_gone(&dash_pid, Duration::from_secs(10));
    assert_eq!(
        svstat(&sbx, "foreign", "pid"),
        foreign_pid,
        "foreign slot touched"
    );
    sbx.stop();
}

#[test]
fn invalid_config_changes_nothing() {
    if !sandbox_or_skip("invalid_config_changes_nothing") {
        return;
    }
    let fx = fixture(CONFIG);
    let sbx = fx.boot();
    for s in ["gw-default", "gw-alice", "gw-bob", "gw-carol"] {
        wait_up(&sbx, s);
    }
    let before = snapshot(&sbx.root());
    let pids_before = pids(&sbx, ALL);
    let bad = CONFIG
        .replace(r#""name": "never""#, r#""name": "Never/..""#)
        .replace(r#""remember", "command""#, r#""remember", "comand""#);
    let o = sbx.reconcile_with(&bad);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("10-test.json"), "{err}");
    assert!(err.lines().count() >= 3, "every error listed: {err}");
    assert_eq!(snapshot(&sbx.root()), before);
    assert_eq!(pids(&sbx, ALL), pids_before);
    sbx.stop();

    // At boot: the hook fails loudly and makes no slot.
    let fx = fixture("{ \"slots\": [ { \"name\": \"a\" } ] }");
    let sbx = fx.boot();
    let logs = sbx.logs();
    assert!(logs.contains("50-svkit exited 1"), "{logs}");
    // s6-overlay's own services (s6rc-*, s6-linux-init-*) and the log
    // watcher the image ships in services.d are not slots.
    let o = sbx.sh("ls -A /run/service | grep -v '^\\.s6-svscan$' | grep -v '^\\.svkit$' | grep -v '^s6' | grep -vx 'svkit-log-watch' || true");
    assert_eq!(stdout(&o), "", "slots made from an invalid config");
    sbx.stop();
}

#[test]
fn remembered_state_survives_a_restart_and_corrupt_state_warns() {
    if !sandbox_or_skip("remembered_state_survives_a_restart_and_corrupt_state_warns") {
        return;
    }
    let fx = fixture(CONFIG);
    fs::create_dir_all(fx.data.path().join(".svkit/desired")).expect("mkdir");
    fs::write(fx.data.path().join(".svkit/desired/remember"), "up\n").expect("write");
    let sbx = fx.boot();
    assert_eq!(svstat_supervised(&sbx, "remember", "wantedup"), "true");
    assert_eq!(sbx.stop(), 0);
    fs::write(fx.data.path().join(".svkit/desired/remember"), "down\n").expect("write");
    let sbx = fx.boot();
    assert_eq!(svstat_supervised(&sbx, "remember", "wantedup"), "false");
    assert_eq!(sbx.stop(), 0);
    fs::write(
        fx.data.path().join(".svkit/desired/remember"),
        "\u{0}garbage",
    )
    .expect("write");
    let sbx = fx.boot();
    let logs = sbx.logs();
    assert!(
        logs.contains("warning: slot remember") && logs.contains("treating it as never set"),
        "{logs}"
    );
    assert_eq!(svstat_supervised(&sbx, "remember", "wantedup"), "false");
    sbx.stop();
}

/// The lock file of the scandir, inside the sandbox.
const LOCK: &str = "/run/service/.svkit/lock";

/// What `/tmp/NAME.{pid,rc}` (written by [`start_reconcile`]) say of one
/// background reconcile: "done" once its exit code is written, "waiting"
/// while it holds the scandir lock file open, else "starting".
fn progress(sbx: &Sandbox, names: &[&str]) -> Vec<String> {
    let script = names
        .iter()
        .map(|n| {
            format!(
                "if [ -e /tmp/{n}.rc ]; then echo done; \
                 elif ls -l /proc/$(cat /tmp/{n}.pid 2>/dev/null || echo none)/fd 2>/dev/null | grep -q ' -> {LOCK}$'; then echo waiting; \
                 else echo starting; fi"
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    stdout(&sbx.sh(&script))
        .lines()
        .map(str::to_string)
        .collect()
}

/// Starts `svkit-reconcile` in the background inside, pausing `pause_ms`
/// under the lock before it renames anything (a hook of debug builds, which
/// the sandbox runs): its pid goes to
/// `/tmp/NAME.pid`, its output to `/tmp/NAME.out`, its exit code (once it
/// ends) to `/tmp/NAME.rc`.
fn start_reconcile(sbx: &Sandbox, name: &str, pause_ms: u64) {
    let o = sbx.sh(&format!(
        "SVKIT_TEST_PAUSE_BEFORE_RENAME_MS={pause_ms} \
         sh -c 'svkit-reconcile > /tmp/{name}.out 2>&1 & echo $! > /tmp/{name}.pid.tmp; \
         mv /tmp/{name}.pid.tmp /tmp/{name}.pid; wait $!; echo $? > /tmp/{name}.rc.tmp; \
         mv /tmp/{name}.rc.tmp /tmp/{name}.rc' </dev/null >/dev/null 2>&1 &"
    ));
    assert_eq!(o.status.code(), Some(0), "starting reconcile {name}");
}

#[test]
fn killed_apply_converges_and_concurrent_applies_serialize() {
    if !sandbox_or_skip("killed_apply_converges_and_concurrent_applies_serialize") {
        return;
    }
    let fx = fixture(r#"{ "slots": [] }"#);
    let sbx = fx.boot();
    fs::write(sbx.root().join(TEST_CONFIG), CONFIG).expect("write");
    // Pause between building a slot and renaming it (far longer than the
    // test: it is killed there), then kill -9 once a temp dir shows.
    let o = sbx
        .sh("SVKIT_TEST_PAUSE_BEFORE_RENAME_MS=600000 svkit-reconcile >/dev/null 2>&1 & echo $!");
    let pid = stdout(&o).trim().to_string();
    assert!(
        !pid.is_empty(),
        "no pid: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let scandir = sbx.root().join("run/service");
    let temp_dirs = || -> Vec<String> {
        fs::read_dir(&scandir)
            .expect("scandir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".svkit-tmp-"))
            .collect()
    };
    poll(
        "a temp dir of the paused apply",
        Duration::from_secs(30),
        || {
            assert!(
                sbx.sh(&format!("kill -0 {pid}")).status.success(),
                "the paused apply ended before building anything"
            );
            (!temp_dirs().is_empty()).then_some(())
        },
    );
    expect_ok(&sbx.sh(&format!("kill -9 {pid}")));
    sbx.wait_gone(&pid, Duration::from_secs(10));
    assert!(
        !temp_dirs().is_empty(),
        "the temp dirs vanished with the kill"
    );
    let o = sbx.exec(&["svkit-reconcile"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("swept .svkit-tmp-"));
    let o = sbx.sh("ls -A /run/service | grep '^\\.svkit-' || true");
    assert_eq!(stdout(&o), "");

    // Two at once, with something to do (a new profile): both wait for the
    // lock while this test holds it, then run one after the other.
    fs::create_dir_all(fx.data.path().join("profiles/dave")).expect("mkdir");
    fs::write(fx.data.path().join("profiles/dave/SOUL.md"), "").expect("write");
    expect_ok(&sbx.sh(&format!(
        "mkfifo /tmp/release && \
         flock {LOCK} sh -c 'touch /tmp/held; read x < /tmp/release' </dev/null >/dev/null 2>&1 &"
    )));
    poll("the test holds the lock", Duration::from_secs(10), || {
        sbx.root().join("tmp/held").exists().then_some(())
    });
    // Each apply, once it has the lock, holds it a while mid-way: one that
    // did not wait for the other would run in that window.
    start_reconcile(&sbx, "a", 500);
    start_reconcile(&sbx, "b", 500);
    poll(
        "both applies waiting on the lock",
        Duration::from_secs(30),
        || {
            let p = progress(&sbx, &["a", "b"]);
            assert!(
                !p.iter().any(|s| s == "done"),
                "an apply ended while the lock was held: {p:?}"
            );
            (p == ["waiting", "waiting"]).then_some(())
        },
    );
    // Both are in flight at once and neither has touched the scandir.
    assert_eq!(temp_dirs(), Vec::<String>::new());
    assert!(
        !scandir.join("gw-dave").exists(),
        "applied under a held lock"
    );
    expect_ok(&sbx.sh("echo go > /tmp/release"));
    poll("both applies done", Duration::from_secs(60), || {
        (progress(&sbx, &["a", "b"]) == ["done", "done"]).then_some(())
    });
    let file = |f: &str| fs::read_to_string(sbx.root().join("tmp").join(f)).expect(f);
    let (a, b) = (file("a.out"), file("b.out"));
    assert_eq!(file("a.rc").trim(), "0", "apply a:\n{a}");
    assert_eq!(file("b.rc").trim(), "0", "apply b:\n{b}");
    // One after the other: exactly one made gw-dave; the other ran after it
    // had finished, so found every slot as it wanted it.
    let made = |out: &str| out.contains("reconcile: slot=gw-dave action=create");
    let unchanged = |out: &str| out.matches("action=unchanged").count() == ALL.len() + 1;
    assert!(
        made(&a) && unchanged(&b) || made(&b) && unchanged(&a),
        "not one after the other:\n--- a:\n{a}--- b:\n{b}"
    );
    let o = sbx.exec(&["svkit-reconcile"]);
    assert_eq!(
        stdout(&o).matches("action=unchanged").count(),
        ALL.len() + 1
    );
    assert_eq!(temp_dirs(), Vec::<String>::new());
    // A lock held too long: the second fails clearly.
    let o = sbx.sh(
        "exec 9>/run/service/.svkit/lock; flock 9; svkit-reconcile --lock-timeout 200; echo rc=$?",
    );
    let text = format!("{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("another reconcile holds") && text.contains("rc=111"),
        "{text}"
    );
    sbx.stop();
}

#[track_caller]
fn expect_ok(o: &std::process::Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn log_dirs_root_owned_or_planted_symlink() {
    if !sandbox_or_skip("log_dirs_root_owned_or_planted_symlink") {
        return;
    }
    let fx = fixture(CONFIG);
    // A root-owned log dir from an earlier image: handed to the user.
    fs::create_dir_all(fx.data.path().join("logs/alice")).expect("mkdir");
    let sbx = fx.boot();
    assert_eq!(
        stdout(&sbx.sh("stat -c %U /data/logs/alice")).trim(),
        "nobody"
    );
    poll("alice logger up", Duration::from_secs(10), || {
        (svstat(&sbx, "gw-alice/log", "up") == "true").then_some(())
    });
    let deaths = svstat(&sbx, "gw-alice/log", "pid");
    assert_ne!(deaths, "-1");
    // The user plants a symlink where a new profile's log dir goes.
    let o = sbx.sh(
        "mkdir -p /data/profiles/eve && touch /data/profiles/eve/SOUL.md && mkdir -p /tmp/elsewhere && \
         chown nobody /data/logs && s6-setuidgid nobody ln -s /tmp/elsewhere /data/logs/eve && \
         svkit-reconcile; echo rc=$?",
    );
    let text = format!("{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    // The hook makes every slot it can and says which it could not: the
    // container runs degraded, and status counts the slot missing.
    assert!(
        text.contains("refusing /data/logs/eve: it is a symlink") && text.contains("rc=0"),
        "{text}"
    );
    assert!(!sbx.root().join("run/service/gw-eve").exists());
    let o = sbx.sh("svctl status gw-eve; echo rc=$?");
    let text = stdout(&o);
    assert!(text.contains("missing") && text.contains("rc=3"), "{text}");
    sbx.stop();
}

/// Processes inside whose whole command line is `line` (NULs as spaces).
fn count_cmdline(sbx: &Sandbox, line: &str) -> usize {
    let o = sbx.exec(&[
        "sh",
        "-c",
        "n=0; for p in /proc/[0-9]*; do [ \"$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\" = \"$1 \" ] && n=$((n+1)); done; echo $n",
        "sh",
        line,
    ]);
    stdout(&o).trim().parse().unwrap_or(usize::MAX)
}

/// A slot dir deleted by hand under its running supervisor, then made
/// again by apply: one supervisor and one service remain. s6-svscan tells
/// slots apart by inode, so without a prune the orphaned supervisor and
/// its service would run on beside the new ones.
#[test]
fn a_slot_deleted_by_hand_comes_back_with_one_supervisor() {
    if !sandbox_or_skip("a_slot_deleted_by_hand_comes_back_with_one_supervisor") {
        return;
    }
    let fx = fixture(CONFIG);
    let sbx = fx.boot_env(&["APP_DASHBOARD=1"]);
    wait_up(&sbx, "dash");
    assert_eq!(count_cmdline(&sbx, "s6-supervise dash"), 1);
    assert_eq!(count_cmdline(&sbx, "sleep 1002"), 1);
    let o = sbx.sh("rm -rf /run/service/dash && svctl apply");
    let out = stdout_ok(&o);
    assert!(out.contains("slot=dash action=create"), "{out}");
    wait_up(&sbx, "dash");
    poll(
        "one supervisor and one service of dash",
        Duration::from_secs(20),
        || {
            (count_cmdline(&sbx, "s6-supervise dash") == 1
                && count_cmdline(&sbx, "sleep 1002") == 1)
                .then_some(())
        },
    );
    sbx.stop();
}
