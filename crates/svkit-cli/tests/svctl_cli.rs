//! svctl's verbs: exit codes, usage errors, render target rules, good configs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;
use svkit_testkit::svctl;

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
    // plan resolves the slots' user here: the good config's, with one
    // this host has.
    let cfg = tmp.path().join("cfg");
    std::fs::create_dir(&cfg).expect("mkdir");
    let text = std::fs::read_to_string(good().join("spec-example.json")).expect("read");
    std::fs::write(
        cfg.join("spec-example.json"),
        text.replace(r#""user": "app""#, r#""user": "nobody""#),
    )
    .expect("write");
    let (good, sd) = (cfg, scandir.display().to_string());
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
            .arg(svkit_testkit::tool("svctl"))
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

/// A config dir holding `json` as `10.json`.
fn config_dir(json: &[u8]) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("10.json"), json).expect("write");
    t
}

/// An image root whose /etc/passwd knows `users`.
fn image_root(users: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(t.path().join("etc")).expect("mkdir");
    let mut text = String::from("root:x:0:0:root:/root:/bin/sh\n");
    for (i, u) in users.iter().enumerate() {
        text.push_str(&format!(
            "{u}:x:{}:{}::/home/{u}:/bin/sh\n",
            1000 + i,
            1000 + i
        ));
    }
    std::fs::write(t.path().join("etc/passwd"), text).expect("write");
    // The good config's program, which `check --root` looks for too.
    let bin = t.path().join("usr/local/bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::write(bin.join("app"), "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(
        bin.join("app"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    t
}

/// The good config's user `app` does not exist on this build host: check
/// and render warn, naming the `user` key's place; against an image root
/// that lacks it, both fail and render writes nothing; against one that
/// has it, not a word.
#[test]
fn unknown_user_warns_on_a_build_host_and_fails_against_an_image_root() {
    assert!(
        std::process::Command::new("getent")
            .args(["passwd", "app"])
            .output()
            .is_ok_and(|o| !o.status.success()),
        "this test needs a host without a user `app`"
    );
    let located = "spec-example.json:2:3: user: unknown user `app` (slots ";
    let o = svctl()
        .args(["check", "--config-dir"])
        .arg(good())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("svctl: warning: ") && err.contains(located),
        "{err}"
    );
    assert!(err.contains("--root DIR"), "{err}");

    let without = image_root(&["other"]);
    let with = image_root(&["app"]);
    let out = tempfile::tempdir().expect("tempdir");
    let to = out.path().join("slots");
    let o = svctl()
        .args(["check", "--config-dir"])
        .arg(good())
        .arg("--root")
        .arg(without.path())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("svctl: fatal: invalid config in "), "{err}");
    assert!(err.contains(located), "{err}");
    assert!(
        err.contains(&format!("not in {}/etc/passwd", without.path().display())),
        "{err}"
    );
    let o = svctl()
        .args(["render", "--config-dir"])
        .arg(good())
        .arg("--root")
        .arg(without.path())
        .arg("--to")
        .arg(&to)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    assert!(!to.exists(), "nothing written");
    for verb in ["check", "render"] {
        let mut c = svctl();
        c.args([verb, "--config-dir"])
            .arg(good())
            .arg("--root")
            .arg(with.path());
        if verb == "render" {
            c.arg("--to").arg(&to);
        }
        let o = c.output().expect("run");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{verb}: {err}");
        assert!(!err.contains("unknown user"), "{verb}: {err}");
    }
    // Whoever runs it, render shows what the root-run tree supervises.
    let run = std::fs::read_to_string(to.join("gateway-default/run")).expect("run");
    assert!(run.contains("s6-setuidgid app "), "{run}");
}

/// Users that are not what s6-setuidgid takes: each an error at its `user`
/// key. An empty one would be worst: s6-setuidgid runs the program as root.
/// A numeric `uid:gid` needs no passwd entry (s6-setuidgid uses the ids).
#[test]
fn hostile_users_are_located_errors() {
    let root = image_root(&[]);
    let cases: &[(&[u8], &str)] = &[
        (b"\"\"", "``: a user name must match"),
        (br#""app\nroot""#, "a user name must match"),
        (
            br#""ap:p""#,
            "a user is a login name or a numeric `uid:gid`",
        ),
        (
            br#""app:""#,
            "a user is a login name or a numeric `uid:gid`",
        ),
        (br#""4242""#, "a user name must match"),
        (br#""\u00ffapp""#, "a user name must match"),
        (b"\"app\xff\"", "invalid UTF-8"),
    ];
    for (user, why) in cases {
        let mut json =
            b"{\"slots\": [{\"name\": \"a\", \"command\": [\"x\"],\n  \"user\": ".to_vec();
        json.extend_from_slice(user);
        json.extend_from_slice(b"}]}");
        let cfg = config_dir(&json);
        let o = svctl()
            .args(["check", "--config-dir"])
            .arg(cfg.path())
            .arg("--root")
            .arg(root.path())
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&o.stderr);
        let shown = String::from_utf8_lossy(user);
        assert_eq!(o.status.code(), Some(1), "{shown}: {err}");
        let at = format!("{}:2:", cfg.path().join("10.json").display());
        assert!(err.contains(&at), "{shown}: not located: {err}");
        assert!(err.contains(why), "{shown}: {err}");
    }
    let cfg = config_dir(br#"{"slots": [{"name": "a", "command": ["app"], "user": "4242:4242"}]}"#);
    let o = svctl()
        .args(["check", "--config-dir"])
        .arg(cfg.path())
        .arg("--root")
        .arg(root.path())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

/// `svctl logs` with an invalid config (exactly when one debugs): a
/// warning naming the config, and the log dir from the live slot's
/// `log/run`; without one there is no log dir to read (exit 1).
#[test]
fn logs_with_an_invalid_config() {
    let cfg = config_dir(br#"{"slots": [{"name": "a", "command": [], "log": {"dir": "/tmp/x"}}]}"#);
    let sd = tempfile::tempdir().expect("tempdir");
    let logs = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(sd.path().join("a")).expect("mkdir");
    let logs_of = || {
        svctl()
            .args(["logs", "a", "--config-dir"])
            .arg(cfg.path())
            .arg("--scandir")
            .arg(sd.path())
            .output()
            .expect("run")
    };
    let o = logs_of();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("config {} not used", cfg.path().display())),
        "{err}"
    );
    assert!(err.contains("no log dir"), "{err}");

    std::fs::create_dir(sd.path().join("a/log")).expect("mkdir");
    let run = format!("#!/bin/sh\nslot=a\ndir='{}'\n", logs.path().display());
    std::fs::write(sd.path().join("a/log/run"), run).expect("write");
    std::fs::write(logs.path().join("current"), "one\ntwo\n").expect("write");
    let o = logs_of();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "one\ntwo\n");
    assert!(err.contains("not used"), "{err}");
}

/// docs/svctl.md says which verbs take `--scandir`: exactly those whose
/// --help offers it; the others refuse it as bad usage.
#[test]
fn scandir_option_is_where_the_docs_say() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/svctl.md"))
            .expect("docs/svctl.md");
    assert!(
        doc.contains(
            "every verb but `check`, `render`, `exec` and `import`\ntakes `--scandir DIR`"
        ),
        "docs/svctl.md no longer says which verbs take --scandir"
    );
    let verbs = svkit_testkit::SVCTL_VERBS;
    let help =
        String::from_utf8(svctl().arg("--help").output().expect("run").stdout).expect("utf-8");
    for v in verbs {
        assert!(
            help.contains(&format!("  {v} ")),
            "{v} not in --help: {help}"
        );
        let h = svctl().args([v, "--help"]).output().expect("run");
        let takes = String::from_utf8_lossy(&h.stdout).contains("--scandir");
        assert_eq!(
            takes,
            !matches!(v, "check" | "render" | "exec" | "import"),
            "{v}"
        );
        assert_eq!(
            String::from_utf8_lossy(&h.stdout).contains("--config-dir"),
            v != "import",
            "{v}"
        );
    }
    for v in ["check", "render", "exec", "import"] {
        let o = svctl()
            .args([v, "--scandir", "/run/service"])
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(100), "{v}");
    }
}

/// A slot declared earlier in the file must not change the `run` of the
/// slots after it: a changed `run` restarts a running slot.
#[test]
fn inserting_a_slot_leaves_the_others_run_alone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let render = |config: &str, out: &str| -> String {
        let dir = tmp.path().join(format!("{out}-config"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("10.json"), config).expect("write");
        let to = tmp.path().join(out);
        let o = svctl()
            .arg("render")
            .arg("--to")
            .arg(&to)
            .arg("--config-dir")
            .arg(&dir)
            .output()
            .expect("run");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_to_string(to.join("b/run")).expect("b/run")
    };
    let before = render(r#"{"slots": [{"name": "b", "command": ["b"]}]}"#, "one");
    let after = render(
        r#"{"slots": [{"name": "a", "command": ["a"]}, {"name": "b", "command": ["b"]}]}"#,
        "two",
    );
    assert_eq!(
        before.replace("one-config", "X"),
        after.replace("two-config", "X")
    );
}
