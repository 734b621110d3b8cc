//! `env_file` and `secrets` on the real /init: the slot's program (run as
//! another user) gets the values, read by root at start; a secret's value
//! is in no file under the scandir and in no svctl output; a world-readable
//! secret, a symlink to one, and an env file with a bad line each keep
//! their slot from starting, permanently, with the file (and line) named
//! in the log and in `svctl status`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Rootfs, Sandbox};

const SECRET: &str = "s3cr3t-Value-7f1c9e";
const ENV_SECRET: &str = "envfile-Token-52ab0d";

const CONFIG: &str = r#"{ "slots": [
  { "name": "app", "user": "nobody", "cwd": "/tmp", "env": { "MODE": "from-config", "KEEP": "k" },
    "env_file": ["/etc/app/base.env", "/etc/app/override.env"],
    "secrets": { "DB_PASS": "/secrets/db" },
    "command": ["sh", "-c", "printf '%s' \"$DB_PASS\" | sha256sum; printf '%s' \"$TOKEN\" | sha256sum; echo \"who=$(id -un) cwd=$PWD mode=$MODE keep=$KEEP quoted=$QUOTED lit=$LIT\"; exec sleep 100000"],
    "log": { "dir": "/data/logs/app" } },
  { "name": "leaky", "command": ["sleep", "100000"], "secrets": { "PASS": "/secrets/open" },
    "log": { "dir": "/data/logs/leaky" } },
  { "name": "linked", "command": ["sh", "-c", "echo \"linked=$PASS\"; exec sleep 100000"],
    "secrets": { "PASS": "/secrets/link" }, "log": { "dir": "/data/logs/linked" } },
  { "name": "broken", "command": ["sleep", "100000"], "env_file": "/etc/app/bad.env",
    "log": { "dir": "/data/logs/broken" } }
] }"#;

fn sha256(s: &str) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(s.as_bytes())?;
            c.wait_with_output()
        })
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn chmod(root: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Every regular file under `dir`, recursively (FIFOs and sockets of
/// `supervise/` are never opened).
fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let t = e.file_type().expect("file type");
        if t.is_dir() {
            files_under(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}

fn status_json(sbx: &Sandbox, slot: &str) -> serde_json::Value {
    let o = sbx.exec(&["svctl", "status", "--json", slot]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("status --json ({e}): {}", stdout(&o)));
    v["slots"][0].clone()
}

#[test]
fn secrets_reach_the_program_and_nothing_else() {
    if !sandbox_or_skip("secrets_reach_the_program_and_nothing_else") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    rootfs
        .file(
            "etc/app/base.env",
            &format!(
                "# base\nMODE=from-base\nexport TOKEN=\"{ENV_SECRET}\"\nQUOTED='a \"b\" $c'\r\n"
            ),
        )
        .file("etc/app/override.env", "LIT=x#y # comment\n\n")
        .file("etc/app/bad.env", "OK=1\nthis line is wrong\n")
        .file("secrets/db", &format!("{SECRET}\n"))
        .file("secrets/open", "visible\n")
        .file("secrets/target", "via-link\n");
    chmod(rootfs.path(), "secrets/db", 0o400);
    chmod(rootfs.path(), "secrets/open", 0o644);
    chmod(rootfs.path(), "secrets/target", 0o600);
    std::os::unix::fs::symlink("target", rootfs.path().join("secrets/link")).expect("symlink");
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());

    // The program sees every value: the secret (read by root, the program
    // runs as nobody), the env files in order over `env`, quotes undone.
    let log = data.path().join("logs/app/current");
    let text = poll("the app's report", Duration::from_secs(20), || {
        let t = std::fs::read_to_string(&log).ok()?;
        t.contains("who=").then_some(t)
    });
    assert!(text.contains(&sha256(SECRET)), "DB_PASS: {text}");
    assert!(text.contains(&sha256(ENV_SECRET)), "TOKEN: {text}");
    assert!(
        text.contains("who=nobody cwd=/tmp mode=from-base keep=k quoted=a \"b\" $c lit=x#y\n"),
        "{text}"
    );
    // A symlink is followed: the permissions that count are its target's.
    poll("the linked slot", Duration::from_secs(10), || {
        let t = std::fs::read_to_string(data.path().join("logs/linked/current")).ok()?;
        t.contains("linked=via-link").then_some(())
    });

    // Refused: a world-readable secret, an env file with a bad line. Each
    // slot is failed for good, the reason in its log and its status.
    for (slot, why) in [
        (
            "leaky",
            "secret PASS: /secrets/open: readable by every user (mode 0644)",
        ),
        ("broken", "env_file /etc/app/bad.env:2: expected KEY=value"),
    ] {
        let st = poll(&format!("{slot} failed"), Duration::from_secs(10), || {
            let v = status_json(&sbx, slot);
            (v["failed"] == true).then_some(v)
        });
        let shown = st["why"].as_str().unwrap_or_default();
        assert!(shown.contains(why), "{slot}: status says {st}");
        let log = std::fs::read_to_string(data.path().join(format!("logs/{slot}/current")))
            .unwrap_or_default();
        assert!(log.contains(why), "{slot}'s log: {log}");
        assert!(
            !log.contains("visible") && !log.contains("this line"),
            "{log}"
        );
        let table = stdout(&sbx.exec(&["svctl", "status", slot]));
        assert!(table.contains("failed"), "{table}");
    }

    // The values are nowhere under the scandir, nor in anything svctl
    // prints or renders.
    let mut files = Vec::new();
    files_under(&sbx.root().join("run/service"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for v in [SECRET, ENV_SECRET] {
            assert!(!text.contains(v), "{v} in {}", f.display());
        }
    }
    let mut outputs = Vec::new();
    for argv in [
        &["svctl", "status"][..],
        &["svctl", "status", "--json"],
        &["svctl", "plan"],
        &["svctl", "check"],
        &["svctl", "render", "--to", "/tmp/rendered"],
        &["sh", "-c", "cat /tmp/rendered/*/run /tmp/rendered/*/finish"],
        &["svctl", "logs", "app"],
    ] {
        let o = sbx.exec(argv);
        outputs.push((argv.join(" "), [o.stdout, o.stderr].concat()));
    }
    for (what, out) in &outputs {
        let text = String::from_utf8_lossy(out);
        assert!(!text.contains(SECRET), "{what} printed the secret");
        assert!(
            !text.contains(ENV_SECRET),
            "{what} printed the env file's value"
        );
    }
    assert!(
        String::from_utf8_lossy(&outputs[5].1).contains("--secret DB_PASS=/secrets/db"),
        "render shows the secret's path"
    );
    sbx.stop();
}
