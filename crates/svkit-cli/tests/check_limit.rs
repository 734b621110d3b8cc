//! `svctl check` and s6-svscan's service limit with no running tree: an
//! image's root (`--root`) or a build host, where the default limit and
//! s6-overlay's own services are assumed, and said to be.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// A config of `n` slots with loggers in `dir`.
fn config(dir: &Path, n: usize) {
    let names: Vec<String> = (0..n).map(|i| format!("\"{i}\"")).collect();
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("10-test.json"),
        format!(
            r#"{{ "slots": [ {{ "name": "s-{{instance}}", "instances": {{ "names": [{}] }},
                "command": ["true"], "log": {{ "dir": "/logs/{{instance}}" }} }} ] }}"#,
            names.join(", ")
        ),
    )
    .unwrap();
}

fn check(args: &[&str]) -> Output {
    Command::new(svkit_testkit::tool("svctl"))
        .env_remove("SVKIT_CONFIG_DIR")
        .env_remove("S6_RUNTIME_PROFILE")
        .arg("check")
        .args(args)
        .output()
        .expect("run svctl")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn an_images_root_counts_its_services_d_and_assumes_the_rest() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    fs::create_dir_all(root.join("etc/services.d/legacy/log")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    // The slots' program, which `check --root` looks for too.
    fs::create_dir_all(root.join("bin")).unwrap();
    fs::write(root.join("bin/true"), "").unwrap();
    fs::set_permissions(
        root.join("bin/true"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let cfg = t.path().join("cfg");
    let r = root.display().to_string();
    let c = cfg.display().to_string();

    // 497 with loggers, 3 of s6-overlay's, 2 from services.d: 999.
    config(&cfg, 497);
    let o = check(&["--config-dir", &c, "--root", &r]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let want = format!(
        "svctl: 999 s6 services needed (497 slots, 497 loggers, 3 of s6-overlay's own, \
         assumed, 2 to come from {r}/etc/services.d); s6-svscan supervises at most 1,000 \
         (its default, assumed; the image at {r}, not a running one)\n"
    );
    assert!(text(&o.stdout).ends_with(&want), "{}", text(&o.stdout));

    // One more: 1,001.
    config(&cfg, 498);
    let o = check(&["--config-dir", &c, "--root", &r]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "svctl: fatal: the config needs 1,001 s6 services (498 slots, 498 loggers, \
             3 of s6-overlay's own, assumed, 2 to come from "
        ),
        "{err}"
    );
    assert!(
        err.contains("declare fewer slots, or fewer with `log`"),
        "{err}"
    );
    assert!(!text(&o.stdout).contains("config ok"));
}

#[test]
fn off_s6_overlay_the_default_and_its_own_are_assumed_and_said() {
    let comm = fs::read_to_string("/proc/1/comm").unwrap_or_default();
    if comm.trim() == "s6-svscan" {
        // Inside s6-overlay the running tree is counted instead (the
        // sandbox tests cover that).
        return;
    }
    let t = tempfile::tempdir().unwrap();
    config(t.path(), 499);
    let o = check(&["--config-dir", &t.path().display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains("(499 slots, 499 loggers, 3 of s6-overlay's own, assumed")
            && err.contains("at most 1,000 (its default, assumed; no s6-overlay here: PID 1 is"),
        "{err}"
    );
}
