//! Shared helpers of svctl's sandbox tests, over the test kit's fixture (a
//! rootfs with a config and the reconcile hook, and a data volume that
//! survives restarts).

#![allow(dead_code, unused_imports)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::Duration;

pub use svkit_testkit::{
    expect_code, poll, sandbox_or_skip, stdout, svstat, Fixture, Rootfs, Sandbox, NOBODY,
};

pub fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn supervised(sbx: &Sandbox, slot: &str) -> bool {
    sbx.sh(&format!("s6-svok /run/service/{slot}"))
        .status
        .success()
}

pub fn wait_supervised(sbx: &Sandbox, slots: &[&str]) {
    for s in slots {
        poll(&format!("{s} supervised"), Duration::from_secs(10), || {
            supervised(sbx, s).then_some(())
        });
    }
}

/// Polls s6-svstat until `field` reads `want`.
pub fn wait_field(sbx: &Sandbox, slot: &str, field: &str, want: &str) {
    poll(
        &format!("{slot} {field}={want}"),
        Duration::from_secs(10),
        || (svstat(sbx, slot, field) == want).then_some(()),
    );
}

/// `svctl status --json SLOT...`, parsed.
pub fn status_json(sbx: &Sandbox, slots: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut argv = vec!["svctl", "status", "--json"];
    argv.extend_from_slice(slots);
    let o = sbx.exec(&argv);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("status --json: {e}: {}\n{}", stdout(&o), err(&o)));
    (code(&o), v)
}

/// The slots `svctl events` and `svctl metrics` are tested on: `crash`
/// runs until killed; `job` exits 0 once /tmp/go is written (kept down:
/// done); `bad` exits 78 once /tmp/bad is written (failed); then `extra`
/// slot objects (JSON, each followed by a comma) if any.
pub fn crash_job_bad_config(extra: &str) -> String {
    format!(
        r#"{{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    {extra}
    {{ "name": "crash", "command": ["sleep", "1000"], "autostart": "always" }},
    {{ "name": "job", "autostart": "always", "restart": {{ "on_clean_exit": "stop" }},
      "command": ["sh", "-c", "mkfifo /tmp/go 2>/dev/null; read x < /tmp/go; exit 0"] }},
    {{ "name": "bad", "autostart": "always",
      "command": ["sh", "-c", "mkfifo /tmp/bad 2>/dev/null; read x < /tmp/bad; exit 78"] }}
  ]
}}"#
    )
}

/// The object of `slot` in a `svctl status --json` document.
pub fn slot_json<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["slots"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("{name} not in {doc}"))
}
