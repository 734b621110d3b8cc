//! `rootfs/etc/cont-finish.d/50-svkit-stop`: stops every slot with
//! `svctl stop --all --wait --timeout MS`, and never holds up a shutdown:
//! bounded, exit 0 whatever svctl does. Run against a stand-in svctl.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use svkit_image_tests::repo_root;

fn hook() -> std::path::PathBuf {
    repo_root().join("rootfs/etc/cont-finish.d/50-svkit-stop")
}

/// A stand-in `svctl` in `dir` running `body` (sh), which may read the
/// arguments file `$0.args` the stand-in writes first.
fn fake_svctl(dir: &Path, body: &str) {
    let p = dir.join("svctl");
    std::fs::write(
        &p,
        format!("#!/bin/sh\nprintf '%s\\n' \"$*\" > \"$0.args\"\n{body}\n"),
    )
    .expect("write svctl");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn run_hook(dir: &Path, timeout_ms: Option<&str>) -> (Output, Duration) {
    let mut cmd = Command::new(hook());
    cmd.env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", dir.display()));
    if let Some(t) = timeout_ms {
        cmd.env("SVKIT_STOP_TIMEOUT_MS", t);
    }
    let t0 = Instant::now();
    let out = cmd.output().expect("run the hook");
    (out, t0.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn args_seen(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("svctl.args"))
        .expect("svctl was called")
        .trim()
        .to_string()
}

#[test]
fn stops_every_slot_with_the_default_timeout() {
    let t = tempfile::tempdir().expect("tempdir");
    fake_svctl(t.path(), "exit 0");
    let (out, _) = run_hook(t.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(args_seen(t.path()), "stop --all --wait --timeout 5000");
    assert!(String::from_utf8_lossy(&out.stdout).contains("every svkit slot is down"));
}

#[test]
fn the_timeout_can_be_set_and_a_bad_value_is_ignored() {
    let t = tempfile::tempdir().expect("tempdir");
    fake_svctl(t.path(), "exit 0");
    let (out, _) = run_hook(t.path(), Some("0250"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(args_seen(t.path()), "stop --all --wait --timeout 250");
    for bad in ["5s", "-1", "123456789", "1 2"] {
        let (out, _) = run_hook(t.path(), Some(bad));
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            args_seen(t.path()),
            "stop --all --wait --timeout 5000",
            "{bad:?}"
        );
        assert!(
            stderr(&out).contains("ignoring SVKIT_STOP_TIMEOUT_MS"),
            "{bad:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_failing_svctl_is_reported_and_does_not_fail_the_shutdown() {
    let t = tempfile::tempdir().expect("tempdir");
    fake_svctl(
        t.path(),
        "echo 'svctl: fatal: unable to control gateway-a: supervisor not running' >&2; exit 111",
    );
    let (out, _) = run_hook(t.path(), None);
    assert_eq!(out.status.code(), Some(0));
    let e = stderr(&out);
    assert!(
        e.contains("supervisor not running"),
        "svctl's own message is kept: {e}"
    );
    assert!(e.contains("exited 111"), "{e}");
}

#[test]
fn a_hanging_svctl_is_cut_off() {
    let t = tempfile::tempdir().expect("tempdir");
    fake_svctl(t.path(), "exec sleep 60");
    let (out, took) = run_hook(t.path(), Some("300"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // 300 ms + 1 s, rounded up to whole seconds by timeout(1).
    assert!(took < Duration::from_secs(10), "the hook took {took:?}");
    assert!(stderr(&out).contains("warning"), "{}", stderr(&out));
}

#[test]
fn without_svctl_it_says_so_and_exits_0() {
    let t = tempfile::tempdir().expect("tempdir");
    let (out, _) = run_hook(t.path(), None);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("svctl not found"), "{}", stderr(&out));
}
