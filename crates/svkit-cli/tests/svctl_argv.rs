//! Bad argv is a usage error (exit 100) before anything is touched; every
//! verb's help has examples.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::process::Command;

fn svctl(args: &[&str]) -> std::process::Output {
    Command::new(svkit_testkit::tool("svctl"))
        .args(args)
        .env("SVKIT_SCANDIR", "/nonexistent/scandir")
        .env("SVKIT_CONFIG_DIR", "/nonexistent/config")
        .output()
        .expect("run svctl")
}

#[test]
fn bad_argv_exits_100() {
    let cases: &[&[&str]] = &[
        &["frobnicate"],
        &[],
        &["signal", "BOGUS", "x"],
        &["signal", "SIGNOPE", "x"],
        &["signal", "99", "x"],
        &["signal", "TERM"],
        &["start", "--wait", "--timeout", "soon", "x"],
        &["start", "--wait", "--timeout", "-5", "x"],
        &["wait", "up", "--timeout", "1.5", "x"],
        &["wait", "up", "--timeout", "2h", "x"],
        &["wait", "up", "--timeout", "25h", "x"],
        &["apply", "--lock-timeout", "soon"],
        &["wait", "sideways", "x"],
        &["wait", "up"],
        &["start"],
        &["start", "--all", "x"],
        &["stop", "--timeout", "100", "x"],
        &["logs"],
        &["logs", "-n", "many", "x"],
        &["status", "--bogus"],
        &["register"],
    ];
    for argv in cases {
        let o = svctl(argv);
        assert_eq!(
            o.status.code(),
            Some(100),
            "{argv:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{argv:?}");
    }
}

#[test]
fn every_verb_has_examples() {
    for verb in svkit_testkit::SVCTL_VERBS {
        let o = svctl(&[verb, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{verb}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("Examples:\n  svctl "), "{verb}: {text}");
        assert!(text.contains("Exit codes"), "{verb}: {text}");
    }
}

#[test]
fn missing_scandir_and_unknown_slots() {
    let o = svctl(&["status"]);
    assert_eq!(o.status.code(), Some(111));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.starts_with("svctl: fatal: unable to read scandir /nonexistent/scandir: "),
        "{e}"
    );
    // plan names the scandir once, with strerror's text only. (Its config
    // has no user: plan looks users up first, and `app` of the good config
    // is not on this host.)
    let cfg = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        cfg.path().join("10.json"),
        r#"{"slots": [{"name": "a", "command": ["x"]}]}"#,
    )
    .expect("write");
    let cfg = cfg.path().to_str().expect("utf-8 path");
    let o = svctl(&["plan", "--config-dir", cfg]);
    assert_eq!(o.status.code(), Some(111));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "svctl: fatal: unable to read scandir /nonexistent/scandir: No such file or directory\n"
    );
    let o = svctl(&["status", "x"]);
    assert_eq!(o.status.code(), Some(4));
    let o = svctl(&["stop", "x"]);
    assert_eq!(o.status.code(), Some(4));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e, "svctl: fatal: unknown slot x: not in the scandir\n");
    let o = svctl(&["wait", "up", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn not_supervised_reads_like_s6() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(t.path().join("gateway-a/supervise")).expect("mkdir");
    let o = Command::new(svkit_testkit::tool("svctl"))
        .args(["start", "gateway-a"])
        .env("SVKIT_SCANDIR", t.path())
        .env("SVKIT_CONFIG_DIR", "/nonexistent/config")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(111));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "svctl: fatal: unable to control gateway-a: supervisor not running\n"
    );
    // status: a row without a supervisor, exit 3.
    let o = Command::new(svkit_testkit::tool("svctl"))
        .args(["status", "--all", "--json"])
        .env("SVKIT_SCANDIR", t.path())
        .env("SVKIT_CONFIG_DIR", "/nonexistent/config")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["slots"][0]["state"], "unsupervised");
}

/// One duration syntax: `500ms`, `3s`, `2m`, and the bare milliseconds the
/// option always took. Past argv parsing, the wait fails for its own
/// reason (no such slot here), never as bad usage.
#[test]
fn durations_take_units_and_bare_milliseconds() {
    for t in ["2s", "500ms", "1m", "0.5s", "2000"] {
        for argv in [
            &["wait", "up", "--timeout", t, "x"][..],
            &["start", "--wait", "--timeout", t, "x"][..],
        ] {
            let o = svctl(argv);
            assert_ne!(o.status.code(), Some(100), "{argv:?}: {o:?}");
        }
    }
}
