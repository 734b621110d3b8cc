//! svctl's verbs: exit codes, usage errors, render target rules, good configs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn svctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_svctl"));
    c.env_remove("SVKIT_CONFIG_DIR");
    c
}

fn good() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/configs/good")
}

#[test]
fn good_configs_check_ok() {
    let out = svctl()
        .arg("check")
        .arg("--config-dir")
        .arg(good())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("config ok"));
}

#[test]
fn config_dir_from_env() {
    let out = svctl()
        .arg("check")
        .env("SVKIT_CONFIG_DIR", good())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn missing_config_dir_is_a_system_error() {
    let out = svctl()
        .args(["check", "--config-dir", "/nonexistent/svkit"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(111));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("svctl: fatal: unable to read config /nonexistent/svkit: "),
        "{err}"
    );
}

#[test]
fn bad_usage_exits_100() {
    for args in [
        &["frobnicate"][..],
        &["render"][..],
        &["check", "--bogus"][..],
        &[][..],
    ] {
        let out = svctl().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(100), "{args:?}");
    }
}

#[test]
fn help_has_examples() {
    for args in [
        &["--help"][..],
        &["check", "--help"][..],
        &["render", "--help"][..],
    ] {
        let out = svctl().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(0));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Examples:"),
            "{args:?}"
        );
    }
}

#[test]
fn render_writes_slots_with_modes() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().expect("tempdir");
    let to = tmp.path().join("out");
    let out = svctl()
        .arg("render")
        .arg("--to")
        .arg(&to)
        .arg("--config-dir")
        .arg(good())
        .env_remove("APP_DASHBOARD")
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = to.join("gateway-default/run");
    let text = std::fs::read_to_string(&run).expect("run file");
    assert!(text.contains("gateway run --replace"), "{text}");
    let mode = std::fs::metadata(&run).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    assert!(to.join("gateway-default/log/run").is_file());
    assert!(to.join("gateway-default/.svkit").is_file());
    // `remember` with no remembered state and an unset if_env: both down.
    assert!(to.join("gateway-default/down").is_file());
    assert!(to.join("dashboard/down").is_file());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("render: slot=gateway-default"), "{stdout}");
}

#[test]
fn render_refuses_non_empty_and_live_dirs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let full = tmp.path().join("full");
    std::fs::create_dir_all(full.join("something")).expect("mkdir");
    let live = tmp.path().join("live");
    std::fs::create_dir_all(live.join(".s6-svscan")).expect("mkdir");
    let supervised = tmp.path().join("supervised");
    std::fs::create_dir_all(supervised.join("web/supervise")).expect("mkdir");
    for (dir, why) in [
        (&full, "not empty"),
        (&live, "live scandir"),
        (&supervised, "supervised slots"),
    ] {
        let out = svctl()
            .arg("render")
            .arg("--to")
            .arg(dir)
            .arg("--config-dir")
            .arg(good())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(100), "{}", dir.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("svctl: fatal: refusing to render into "),
            "{err}"
        );
        assert!(err.contains(why), "{err}");
    }
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").expect("write");
    let out = svctl()
        .arg("render")
        .arg("--to")
        .arg(&file)
        .arg("--config-dir")
        .arg(good())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(100));
}

#[test]
fn render_into_existing_empty_dir() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = svctl()
        .arg("render")
        .arg("--to")
        .arg(tmp.path())
        .arg("--config-dir")
        .arg(good())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tmp.path().join("dashboard/run").is_file());
}
