//! The nastiest argv/env values through a real `s6-supervise` (Debian's s6):
//! the rendered `run` started by the supervisor hands them over exactly, and
//! `finish` turns a permanent exit code into "stay down".
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use svkit::config::{load_layers, FixedInstances};
use svkit::render::{render_slot, RenderEnv};

/// Polls `f` until it gives a value, up to 20 s.
fn poll<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    svkit_testkit::poll(what, Duration::from_secs(20), f)
}

#[test]
fn nasty_values_under_s6_supervise() {
    if Command::new("s6-supervise")
        .stdin(Stdio::null())
        .output()
        .is_err()
    {
        svkit_testkit::skip(
            "nasty_values_under_s6_supervise",
            "s6-supervise not installed (apt-get install s6)",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("dump");
    let args = [
        "", "'", "$(id)", "`id`", "\\", "a\nb", "-e", "ünï☃", "'\"'\"'",
    ];
    // Dump argv and env NUL-separated, then exit 78 (a permanent failure).
    let dump = format!(
        "{{ printf '%s\\0' \"$#\" \"$@\"; env -0; }} > {}.tmp && mv {0}.tmp {0}; exit 78",
        out.display()
    );
    let mut command = vec!["/bin/sh".to_string(), "-c".into(), dump, "dump".into()];
    command.extend(args.iter().map(|s| s.to_string()));
    let env: serde_json::Map<String, serde_json::Value> = args
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("T_{i}"), serde_json::Value::from(*v)))
        .collect();
    let cfg = serde_json::json!({ "slots": [{ "name": "nasty", "command": command, "env": env }] });
    let files = vec![(
        Path::new("/etc/svkit/10.json").to_path_buf(),
        serde_json::to_vec(&cfg).expect("json"),
    )];
    let v = load_layers(&files, &FixedInstances::default()).expect("valid");
    let renv = RenderEnv {
        with_contenv: None,
        s6_bin: None,
        as_root: false,
    };
    let slot = render_slot(&v.model, &v.model.slots[0], &renv, true);
    let dir = tmp.path().join("nasty");
    std::fs::create_dir(&dir).expect("mkdir");
    for f in &slot.files {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join(&f.path);
        std::fs::write(&p, &f.contents).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(f.mode)).expect("chmod");
    }
    // `finish` ends in `svkit slot-end`: the workspace's `svkit` (built by
    // `cargo build`) first on PATH.
    let svkit = svkit_testkit::bin("svkit");
    assert!(
        svkit.exists(),
        "{} missing: cargo build first",
        svkit.display()
    );
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(svkit_testkit::bin_dir()).chain(std::env::split_paths(&path));
    let sup = Command::new("s6-supervise")
        .arg(&dir)
        .env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn s6-supervise");
    // Ended however the test ends.
    struct Supervisor(std::process::Child);
    impl Drop for Supervisor {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _sup = Supervisor(sup);

    let bytes = poll("the dump", || std::fs::read(&out).ok());
    let mut fields = bytes.split(|&b| b == 0);
    let n: usize = std::str::from_utf8(fields.next().expect("count"))
        .expect("utf-8")
        .parse()
        .expect("number");
    let got: Vec<String> = fields
        .by_ref()
        .take(n)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    assert_eq!(got, args);
    let envs: Vec<String> = fields
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    for (i, v) in args.iter().enumerate() {
        assert!(
            envs.contains(&format!("T_{i}={v}")),
            "T_{i} missing: {envs:?}"
        );
    }
    assert!(envs.contains(&"SVKIT_SLOT=nasty".to_string()));

    // finish exits 125 on 78: s6-supervise stops wanting it up (flags byte
    // 34 of supervise/status, bit 4 = want up) and does not respawn it.
    poll("want-up cleared by finish", || {
        let st = std::fs::read(dir.join("supervise/status")).ok()?;
        (st.len() >= 35 && st[34] & 4 == 0 && st[34] & 2 == 0).then_some(())
    });
    let _ = Command::new("s6-svc").arg("-x").arg(&dir).status();
}
