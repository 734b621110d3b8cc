//! A redirect's opt-out on the real /init runs the command as its slot
//! would: the slot's user, cwd, env, env files and secrets, once its
//! `depends_on` hold (a dependency that cannot come ends it at once, said
//! why). A redirect with words after its `match` is refused, not run
//! without them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use svkit_testkit::{sandbox_or_skip, Rootfs, Sandbox};

const CONFIG: &str = r#"{ "sentinel_env": "T_SUPERVISED", "slots": [
  { "name": "db", "type": "oneshot",
    "command": ["sh", "-c", "sleep 2; echo made > /tmp/db-done"] },
  { "name": "api", "user": "nobody", "cwd": "/tmp", "env": { "MODE": "from-config" },
    "env_file": ["/etc/api/api.env"], "secrets": { "API_TOKEN": "/secrets/token" },
    "depends_on": { "db": "completed" }, "command": ["/opt/api", "serve"] },
  { "name": "off", "autostart": "never", "command": ["sleep", "100000"] },
  { "name": "needs-off", "depends_on": { "off": "up" }, "command": ["/opt/api", "other"] },
  { "name": "bad", "type": "oneshot", "command": ["sh", "-c", "exit 78"] },
  { "name": "needs-bad", "depends_on": { "bad": "completed" }, "command": ["/opt/api", "third"] }
], "redirects": [
  { "match": ["/opt/api", "serve"], "slot": "api",
    "opt_out_flag": "--no-supervise", "opt_out_env": "API_NO_SUPERVISE" },
  { "match": ["/opt/api", "other"], "slot": "needs-off", "opt_out_flag": "--no-supervise" },
  { "match": ["/opt/api", "third"], "slot": "needs-bad", "opt_out_flag": "--no-supervise" }
] }"#;

const API: &str = "#!/bin/sh\necho \"api: who=$(id -un) cwd=$PWD mode=$MODE file=$FROM_FILE token=$API_TOKEN db=$(cat /tmp/db-done 2>/dev/null) sup=$T_SUPERVISED args=$*\"\nexit 7\n";

fn rootfs() -> Rootfs {
    let r = Rootfs::with_svkit(CONFIG);
    r.script("opt/api", API)
        .file("etc/api/api.env", "FROM_FILE=envfile\nMODE=from-file\n")
        .file("secrets/token", "tok-5e1f\n");
    std::fs::set_permissions(
        r.path().join("secrets/token"),
        std::fs::Permissions::from_mode(0o400),
    )
    .expect("chmod");
    r
}

fn run(r: &Rootfs, env: &[&str], cmd: &[&str]) -> Sandbox {
    let arg = r.arg();
    let mut args = vec!["--rootfs", arg.as_str()];
    for e in env {
        args.extend(["--env", e]);
    }
    let mut full = vec!["svkit-wrap", "--"];
    full.extend_from_slice(cmd);
    Sandbox::start(&args, &full)
}

#[test]
fn an_opt_out_runs_as_its_slot_after_its_dependencies() {
    if !sandbox_or_skip("an_opt_out_runs_as_its_slot_after_its_dependencies") {
        return;
    }
    let r = rootfs();
    for (env, cmd) in [
        (vec![], vec!["/opt/api", "serve", "--no-supervise"]),
        (vec!["API_NO_SUPERVISE=1"], vec!["/opt/api", "serve"]),
    ] {
        let sbx = run(&r, &env, &cmd);
        let logs = sbx.wait_for_log("api: who=", Duration::from_secs(30));
        assert!(
            logs.contains(
                "api: who=nobody cwd=/tmp mode=from-file file=envfile token=tok-5e1f db=made sup= args=serve\n"
            ),
            "{env:?} {cmd:?}: {logs}"
        );
        assert!(!logs.contains("s6 supervision"), "{logs}");
        // The foreground's exit code is the container's.
        assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 7, "{logs}");
    }
}

#[test]
fn an_opt_out_whose_dependency_cannot_come_ends_at_once() {
    if !sandbox_or_skip("an_opt_out_whose_dependency_cannot_come_ends_at_once") {
        return;
    }
    let r = rootfs();
    for (cmd, why) in [
        (
            "other",
            "it depends on off (up), which is down and whose autostart does not hold",
        ),
        (
            "third",
            "it depends on bad (completed), which failed for good",
        ),
    ] {
        let sbx = run(&r, &[], &["/opt/api", cmd, "--no-supervise"]);
        let logs = sbx.wait_for_log(why, Duration::from_secs(30));
        assert!(!logs.contains("api: who="), "it ran anyway: {logs}");
        assert_eq!(sbx.wait_exit(Duration::from_secs(10)), 1, "{logs}");
    }
}

#[test]
fn a_redirect_with_extra_words_is_refused_not_dropped() {
    if !sandbox_or_skip("a_redirect_with_extra_words_is_refused_not_dropped") {
        return;
    }
    let sbx = run(&rootfs(), &[], &["/opt/api", "serve", "--port", "9999"]);
    let logs = sbx.wait_for_log("would be dropped", Duration::from_secs(30));
    assert!(logs.contains("`--port 9999` would be dropped"), "{logs}");
    assert!(logs.contains("add --no-supervise"), "{logs}");
    assert!(!logs.contains("s6 supervision"), "{logs}");
    assert_eq!(sbx.wait_exit(Duration::from_secs(10)), 100, "{logs}");
}
