//! s6-svscan's service limit (1,000 under s6-overlay; a slot with a logger
//! is two services, s6-overlay's own take 3), in the sandbox under real s6:
//! a config past it is refused whole, before any write, by the boot hook,
//! `check`, `plan`, `apply` and `register`; one that fits boots, all up.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::fs;
use std::time::{Duration, Instant};
use svctl_common::*;

/// `n` instances of `s-{instance}`, each with a logger, up at boot; and
/// two templates with no instance yet: `more-{instance}` (with a
/// logger, one instance a dir of /data/more) and `one-{instance}`
/// (without, registered at runtime).
fn config(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("\"{i}\"")).collect();
    format!(
        r#"{{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    {{ "name": "s-{{instance}}", "instances": {{ "names": [{}] }},
      "command": ["sleep", "100000"], "autostart": "always",
      "log": {{ "dir": "/data/logs/{{instance}}", "stdout": false }} }},
    {{ "name": "more-{{instance}}", "instances": {{ "from_dir": {{ "path": "/data/more" }} }},
      "command": ["sleep", "100001"], "autostart": "never",
      "log": {{ "dir": "/data/logs/more-{{instance}}", "stdout": false }} }},
    {{ "name": "one-{{instance}}", "instances": {{ "names": [] }},
      "command": ["sleep", "100002"], "autostart": "never" }}
  ]
}}"#,
        names.join(", ")
    )
}

/// Slot dirs svkit made in the sandbox's scandir.
fn rendered(sbx: &Sandbox) -> Vec<String> {
    let scandir = sbx.root().join("run/service");
    let mut out: Vec<String> = fs::read_dir(&scandir)
        .expect("scandir")
        .flatten()
        .filter(|e| e.path().join(".svkit").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// How many slots `svctl status --json` shows up.
fn up_count(sbx: &Sandbox) -> usize {
    let (_, doc) = status_json(sbx, &[]);
    doc["slots"]
        .as_array()
        .map(|a| a.iter().filter(|s| s["up"] == true).count())
        .unwrap_or(0)
}

/// s6-overlay 3.2.3.0's own services in `/run/service` (seen on it:
/// s6-linux-init-shutdownd, s6rc-fdholder, s6rc-oneshot-runner).
const OVERLAY_OWN: u32 = 3;

/// The services the fixture image's `services.d` adds once s6-overlay has
/// linked it in (each entry, and its `log/`): whatever the common layer
/// ships, the counts below follow.
fn services_d(fx: &Fixture) -> (u32, Vec<String>) {
    let dir = fx.rootfs.path().join("etc/services.d");
    let mut n = 0;
    let mut names = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.path().is_dir() {
            continue;
        }
        n += 1 + u32::from(e.path().join("log").is_dir());
        names.push(name);
    }
    (n, names)
}

/// What the boot hook counts besides the slots: s6-overlay's own in the
/// scandir, and the `services.d` to come.
fn others_at_boot(legacy: u32) -> String {
    let mut s = format!("{OVERLAY_OWN} others in /run/service");
    if legacy > 0 {
        s.push_str(&format!(", {legacy} to come from /etc/services.d"));
    }
    s
}

fn thousands(n: u32) -> String {
    svkit::capacity::thousands(n)
}

/// `svctl status` exits 0: every slot supervised and in its wanted state.
fn wait_all_in_state(sbx: &Sandbox, what: &str) {
    poll(what, Duration::from_secs(30), || {
        (code(&sbx.exec(&["svctl", "status"])) == Some(0)).then_some(())
    });
}

#[test]
fn past_the_limit_the_boot_hook_renders_nothing_and_every_verb_refuses() {
    if !sandbox_or_skip("past_the_limit_the_boot_hook_renders_nothing_and_every_verb_refuses") {
        return;
    }
    // 499 slots with loggers and s6-overlay's 3: 1,001 of 1,000 (more with
    // the image's services.d), and s6-svscan would then start none of them.
    let fx = Fixture::new(&config(499));
    let (legacy, names) = services_d(&fx);
    let sbx = fx.boot();
    let logs = sbx.wait_for_log("50-svkit exited", Duration::from_secs(30));
    let refused = |others: &str, total: u32| {
        format!(
            "the config needs {} s6 services (499 slots, 499 loggers, {others}); \
             s6-svscan here supervises at most 1,000 (its default: no -C in /proc/1/cmdline)",
            thousands(total)
        )
    };
    let at_boot = refused(&others_at_boot(legacy), 998 + OVERLAY_OWN + legacy);
    assert!(
        logs.contains(&format!("svkit-reconcile: fatal: {at_boot}")),
        "{logs}"
    );
    assert!(logs.contains("50-svkit exited 1"), "{logs}");
    assert!(!logs.contains("reconcile: slot="), "{logs}");
    assert_eq!(rendered(&sbx), Vec::<String>::new());
    assert!(
        !fx.data.path().join("logs").exists(),
        "no log dir made either"
    );

    // Later, what services.d brought is in the scandir, counted once.
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    wait_supervised(&sbx, &names);
    let others = format!("{} others in /run/service", OVERLAY_OWN + legacy);
    let now = refused(&others, 998 + OVERLAY_OWN + legacy);
    for verb in ["check", "plan", "apply"] {
        let o = sbx.run(&["svctl", verb], 1);
        assert!(
            err(&o).contains(&format!("svctl: fatal: {now}")),
            "svctl {verb}: {}",
            err(&o)
        );
        assert!(!stdout(&o).contains("reconcile: slot="), "{}", stdout(&o));
    }
    assert_eq!(rendered(&sbx), Vec::<String>::new());
}

#[test]
fn at_boot_the_services_d_still_to_come_count_and_later_once() {
    if !sandbox_or_skip("at_boot_the_services_d_still_to_come_count_and_later_once") {
        return;
    }
    // 498 slots with loggers (996) and s6-overlay's 3 would fit; the
    // image's services.d entry with its logger, linked in by s6-overlay
    // only after the cont-init hooks, makes 1,001.
    let fx = Fixture::new(&config(498));
    fx.rootfs
        .script(
            "etc/services.d/legacy/run",
            "#!/bin/sh\nexec sleep 100003\n",
        )
        .script(
            "etc/services.d/legacy/log/run",
            "#!/bin/sh\nexec cat >/dev/null\n",
        );
    let (legacy, names) = services_d(&fx);
    let total = thousands(996 + OVERLAY_OWN + legacy);
    let sbx = fx.boot();
    let logs = sbx.wait_for_log("50-svkit exited", Duration::from_secs(30));
    assert!(
        logs.contains(&format!(
            "svkit-reconcile: fatal: the config needs {total} s6 services (498 slots, \
             498 loggers, {});",
            others_at_boot(legacy)
        )),
        "{logs}"
    );
    assert_eq!(rendered(&sbx), Vec::<String>::new());
    // Once linked, it is one of the others in the scandir, counted once.
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    wait_supervised(&sbx, &names);
    let o = sbx.run(&["svctl", "check"], 1);
    assert!(
        err(&o).contains(&format!(
            "the config needs {total} s6 services (498 slots, 498 loggers, \
             {} others in /run/service);",
            OVERLAY_OWN + legacy
        )),
        "{}",
        err(&o)
    );
}

#[test]
fn four_hundred_boot_all_up_and_one_registration_past_the_limit_is_refused() {
    if !sandbox_or_skip("four_hundred_boot_all_up_and_one_registration_past_the_limit_is_refused") {
        return;
    }
    let fx = Fixture::new(&config(400));
    let (legacy, names) = services_d(&fx);
    let t0 = Instant::now();
    let sbx = fx.boot();
    poll("400 slots up", Duration::from_secs(60), || {
        (up_count(&sbx) == 400).then_some(())
    });
    eprintln!(
        "measured: boot to 400 slots with loggers up: {:?}",
        t0.elapsed()
    );
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    wait_supervised(&sbx, &names);
    let others = OVERLAY_OWN + legacy;
    let o = sbx.run(&["svctl", "check"], 0);
    assert!(
        stdout(&o).contains(&format!(
            "svctl: {} s6 services needed (400 slots, 400 loggers, {others} others in \
             /run/service); s6-svscan supervises at most 1,000 (its default: no -C in \
             /proc/1/cmdline)",
            800 + others
        )),
        "{}",
        stdout(&o)
    );

    // Up to exactly 1,000, which s6-svscan still takes: instances with
    // loggers (2 each) found in /data/more, then, if one is left, a
    // registered slot without a logger.
    let free = 1000 - 800 - others;
    let (more, odd) = (free / 2, free % 2);
    for i in 0..more {
        fs::create_dir_all(fx.data.path().join(format!("more/m{i}"))).expect("mkdir");
    }
    let t1 = Instant::now();
    sbx.run(&["svctl", "apply"], 0);
    wait_all_in_state(&sbx, "every slot supervised after apply");
    eprintln!(
        "measured: apply of {more} more, to {} services: {:?}",
        1000 - odd,
        t1.elapsed()
    );
    if odd == 1 {
        sbx.run(&["svctl", "register", "--slot", "one-{instance}", "a"], 0);
        assert!(supervised(&sbx, "one-a"));
    }
    wait_all_in_state(&sbx, "every slot supervised at 1,000");

    // One more is past it: refused, named, nothing registered or made.
    let o = sbx.run(&["svctl", "register", "--slot", "one-{instance}", "b"], 1);
    assert!(
        err(&o).contains(&format!(
            "svctl: fatal: the config needs 1,001 s6 services ({} slots, {} loggers, \
             {others} others in /run/service); s6-svscan here supervises at most 1,000",
            400 + more + odd + 1,
            400 + more
        )),
        "{}",
        err(&o)
    );
    assert!(!fx
        .data
        .path()
        .join(".svkit/instances/one-{instance}/b")
        .exists());
    assert!(!sbx.root().join("run/service/one-b").exists());
    // What was there runs on, untouched.
    assert_eq!(up_count(&sbx), 400);
    wait_all_in_state(&sbx, "every slot still in its wanted state");
}

/// A name s6-svscan cannot stat (a dangling symlink) stops its scan: no
/// slot added after it would start. `register` and `apply` refuse with
/// the entry named, change nothing, and work once it is gone.
#[test]
fn a_dangling_symlink_in_the_scandir_is_named_and_nothing_is_added() {
    if !sandbox_or_skip("a_dangling_symlink_in_the_scandir_is_named_and_nothing_is_added") {
        return;
    }
    let fx = Fixture::new(&config(1));
    let sbx = fx.boot();
    wait_all_in_state(&sbx, "up");
    expect_code(&sbx.sh("ln -s /nonexistent/gone /run/service/gone"), 0);
    let o = sbx.run(&["svctl", "register", "--slot", "one-{instance}", "x"], 111);
    let e = err(&o);
    assert!(
        e.contains(
            "svctl: fatal: unable to reconcile /run/service: s6-svscan cannot stat \
             /run/service/gone (No such file or directory): its scan stops there and starts \
             no new service until it is gone (a dangling symlink?); remove it, then try \
             again; nothing changed\n"
        ),
        "{e}"
    );
    assert!(e.contains("nothing changed"), "{e}");
    assert!(!rendered(&sbx).contains(&"one-x".to_string()));
    expect_code(&sbx.sh("rm /run/service/gone"), 0);
    sbx.run(&["svctl", "register", "--slot", "one-{instance}", "x"], 0);
    sbx.run(&["svctl", "start", "one-x", "--wait"], 0);
}
