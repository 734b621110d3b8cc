//! `svctl check --root DIR` looks for each slot's `command[0]` in the
//! image: a program that exists nowhere there is an error at its key.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

#[test]
fn a_program_missing_from_the_image_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::create_dir_all(root.join("usr/bin")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    fs::write(root.join("usr/bin/app"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(root.join("usr/bin/app"), fs::Permissions::from_mode(0o755)).unwrap();
    let cfg = t.path().join("cfg");
    fs::create_dir_all(&cfg).unwrap();
    let check = |config: &str| {
        fs::write(cfg.join("10.json"), config).unwrap();
        let o = Command::new(svkit_testkit::tool("svctl"))
            .args(["check", "--config-dir"])
            .arg(&cfg)
            .arg("--root")
            .arg(&root)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = check(
        r#"{"slots": [{"name": "ok", "command": ["app", "serve"]},
                      {"name": "abs", "command": ["/usr/bin/app"]}]}"#,
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = check(
        r#"{"slots": [{"name": "ok", "command": ["app"]},
                      {"name": "typo", "command": ["apq", "serve"]},
                      {"name": "abs", "command": ["/opt/app/bin/app"]}]}"#,
    );
    assert_eq!(code, Some(1), "{err}");
    let f = cfg.join("10.json").display().to_string();
    let r = root.display();
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [
            format!("svctl: fatal: invalid config in {}: 2 errors", cfg.display()),
            format!("{f}: slots[1].command[0]: slot typo: `apq` is not in any directory of PATH (assumed) under {r}: /command:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; it would exit 127 at every start"),
            format!("{f}: slots[2].command[0]: slot abs: `/opt/app/bin/app` does not exist under {r}; it would exit 127 at every start"),
        ],
    );
}

/// A job's `timezone` is read from the image's zoneinfo: one it lacks is
/// an error at its key, and one it has passes.
#[test]
fn a_timezone_missing_from_the_image_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::create_dir_all(root.join("usr/share/zoneinfo/Europe")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    fs::create_dir_all(root.join("bin")).unwrap();
    fs::write(root.join("bin/job"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(root.join("bin/job"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::copy(
        "/usr/share/zoneinfo/Europe/Berlin",
        root.join("usr/share/zoneinfo/Europe/Berlin"),
    )
    .unwrap();
    let cfg = t.path().join("cfg");
    fs::create_dir_all(&cfg).unwrap();
    let check = |zone: &str| {
        let job = format!(
            r#"{{"slots": [{{"name": "j", "type": "oneshot", "command": ["/bin/job"],
  "schedule": {{"cron": "0 3 * * *", "timezone": "{zone}"}}}}]}}"#
        );
        fs::write(cfg.join("10.json"), job).unwrap();
        let o = Command::new(svkit_testkit::tool("svctl"))
            .args(["check", "--config-dir"])
            .arg(&cfg)
            .arg("--root")
            .arg(&root)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = check("Europe/Berlin");
    assert_eq!(code, Some(0), "{err:?}");
    let (code, err) = check("Europe/Paris");
    assert_eq!(code, Some(1), "{err}");
    let f = cfg.join("10.json").display().to_string();
    assert_eq!(
        err.lines().nth(1).unwrap_or(""),
        format!(
            "{f}:2:37: slots[0].schedule.timezone: `Europe/Paris`: no such timezone in {}/usr/share/zoneinfo (an IANA name such as Europe/Berlin; the image needs its zoneinfo, e.g. the tzdata package) (job j)",
            root.display()
        )
    );
}
