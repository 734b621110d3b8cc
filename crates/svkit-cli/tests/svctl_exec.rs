//! `svctl exec SLOT -- CMD...` on the real /init: a one-off command gets
//! what the slot's program gets (user, cwd, env, env files, secrets; not
//! the sentinel: it is not supervised), in the foreground, its exit code
//! passed through; an undeclared slot is exit 4 and a refused secret 78,
//! nothing run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use svkit_testkit::{sandbox_or_skip, stdout, Rootfs, Sandbox};

const CONFIG: &str = r#"{ "sentinel_env": "T_SUPERVISED", "slots": [
  { "name": "api", "user": "nobody", "cwd": "/tmp", "env": { "MODE": "from-config" },
    "env_file": ["/etc/api/api.env"], "secrets": { "API_TOKEN": "/secrets/token" },
    "command": ["sleep", "100000"] },
  { "name": "leaky", "autostart": "never", "secrets": { "T": "/secrets/open" },
    "command": ["sleep", "100000"] }
] }"#;

#[test]
fn exec_runs_a_one_off_as_the_slot() {
    if !sandbox_or_skip("exec_runs_a_one_off_as_the_slot") {
        return;
    }
    let r = Rootfs::with_svkit(CONFIG);
    r.file("etc/api/api.env", "FROM_FILE=envfile\n")
        .file("secrets/token", "tok-93c2\n")
        .file("secrets/open", "visible\n");
    std::fs::set_permissions(
        r.path().join("secrets/token"),
        std::fs::Permissions::from_mode(0o400),
    )
    .expect("chmod");
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(r.path(), data.path());
    let script = "echo \"who=$(id -un) cwd=$PWD mode=$MODE file=$FROM_FILE token=$API_TOKEN sup=$T_SUPERVISED args=$*\"; exit 9";
    let o = sbx.exec(&[
        "svctl", "exec", "api", "--", "sh", "-c", script, "x", "-n", "1",
    ]);
    assert_eq!(
        stdout(&o),
        "who=nobody cwd=/tmp mode=from-config file=envfile token=tok-93c2 sup= args=-n 1\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(9));

    let o = sbx.exec(&["svctl", "exec", "nope", "--", "true"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("svctl: fatal: unknown slot nope"),
        "{o:?}"
    );
    let o = sbx.exec(&["svctl", "exec", "leaky", "--", "sh", "-c", "echo ran"]);
    assert_eq!(o.status.code(), Some(78), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("readable by every user"), "{err}");
    assert!(!err.contains("visible") && stdout(&o).is_empty(), "{o:?}");
    let o = sbx.exec(&["svctl", "exec", "api", "--", "/no/such"]);
    assert_eq!(o.status.code(), Some(127), "{o:?}");
}
