//! svctl's verbs: exit codes, usage errors, render target rules, good configs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

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

/// `svctl VERB | head -0`: a reader that went away ends svctl quietly, with
/// the verb's own exit code (the answer of `plan` and `status` is the code).
#[test]
fn a_closed_stdout_ends_quietly() {
    use svkit_testkit::{assert_quiet_on_closed_stdout, output_with_closed_stdout};
    let tmp = tempfile::tempdir().expect("tempdir");
    let scandir = tmp.path().join("scandir");
    std::fs::create_dir(&scandir).expect("mkdir");
    std::fs::create_dir(scandir.join("foreign")).expect("mkdir");
    let (good, sd) = (good(), scandir.display().to_string());
    let to = tmp.path().join("rendered").display().to_string();
    let good = good.to_str().expect("utf-8 path");
    let cases: &[(&[&str], i32)] = &[
        (&["--help"], 0),
        (&["--version"], 0),
        (&["plan", "--help"], 0),
        // Both slots of the good config would be created: exit 2.
        (&["plan", "--config-dir", good, "--scandir", &sd], 2),
        (
            &["plan", "--json", "--config-dir", good, "--scandir", &sd],
            2,
        ),
        (&["check", "--config-dir", good], 0),
        (&["render", "--to", &to, "--config-dir", good], 0),
        // A slot without a supervisor: exit 3, the table still written.
        (
            &["status", "--all", "--config-dir", good, "--scandir", &sd],
            3,
        ),
        (
            &[
                "status",
                "--all",
                "--json",
                "--config-dir",
                good,
                "--scandir",
                &sd,
            ],
            3,
        ),
    ];
    for (argv, code) in cases {
        let o = output_with_closed_stdout(svctl().args(*argv).env_remove("APP_DASHBOARD"));
        assert_quiet_on_closed_stdout(&format!("{argv:?}"), &o, *code);
    }
    // render wrote every slot although nobody read its lines.
    assert!(tmp.path().join("rendered/dashboard/run").is_file());
}

#[test]
fn bad_usage_is_one_line() {
    let o = svctl().args(["check", "--bogus"]).output().expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(100), "{err}");
    assert_eq!(
        err,
        "svctl: fatal: usage: unexpected argument '--bogus' found; see --help\n"
    );
    let o = svctl().output().expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(100), "{err}");
    assert!(
        err.starts_with("svctl: fatal: usage: ") && err.lines().count() == 1,
        "{err}"
    );
}

/// `svctl logs -f SLOT | true`: the reader is gone before the first lines
/// are written, so there is nothing to follow for.
#[test]
fn logs_follow_stops_when_stdout_is_closed() {
    use svkit_testkit::{assert_quiet_on_closed_stdout, output_with_closed_stdout};
    let tmp = tempfile::tempdir().expect("tempdir");
    let (cfg, logs, sd) = (
        tmp.path().join("cfg"),
        tmp.path().join("logs"),
        tmp.path().join("scandir"),
    );
    for d in [&cfg, &logs, &sd] {
        std::fs::create_dir(d).expect("mkdir");
    }
    let config = format!(
        r#"{{"slots": [{{"name": "a", "command": ["sleep", "1"], "log": {{"dir": "{}"}}}}]}}"#,
        logs.display()
    );
    std::fs::write(cfg.join("10.json"), config).expect("write");
    std::fs::write(logs.join("current"), "one\ntwo\n").expect("write");
    // `timeout` ends a follower that never looks at its stdout again (124).
    let o = output_with_closed_stdout(
        Command::new("timeout")
            .arg("10")
            .arg(env!("CARGO_BIN_EXE_svctl"))
            .args(["logs", "-f", "a", "--config-dir"])
            .arg(&cfg)
            .arg("--scandir")
            .arg(&sd),
    );
    assert_quiet_on_closed_stdout("logs -f", &o, 0);
}

/// An environment variable whose name or value is not UTF-8 is no reason
/// to panic: it plays no part in a render, which goes on.
#[test]
fn render_with_an_env_that_is_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = svctl()
        .arg("render")
        .arg("--to")
        .arg(tmp.path().join("out"))
        .arg("--config-dir")
        .arg(good())
        .env("SVKIT_BAD_VALUE", OsStr::from_bytes(b"\xff\xfe"))
        .env(OsStr::from_bytes(b"SVKIT_BAD_\xff"), "x")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(tmp.path().join("out/gateway-default/run").is_file());
}

/// `svctl status` of a slot that does not exist: a warning naming it and
/// exit 4, without an empty table.
#[test]
fn status_of_an_unknown_slot_prints_no_empty_table() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = svctl()
        .args(["status", "--scandir"])
        .arg(tmp.path())
        .arg("nosuch")
        .env("SVKIT_CONFIG_DIR", tmp.path())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "no empty table");
    assert!(err.contains("unknown slot nosuch"), "{err}");
}
