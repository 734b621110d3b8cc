//! An essential oneshot on the real /init ends the container only when it
//! fails: its completion (`done`) is what its dependents wait for, so the
//! container goes on and they start.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{sandbox_or_skip, stdout, Rootfs, Sandbox};

const CONFIG: &str = r#"{ "slots": [
  { "name": "migrate", "type": "oneshot", "essential": true,
    "command": ["sh", "-c", "echo migrated > /tmp/migrated"] },
  { "name": "web", "depends_on": { "migrate": "completed" },
    "command": ["sh", "-c", "cat /tmp/migrated; exec sleep 100000"] }
] }"#;

#[test]
fn an_essential_oneshot_that_succeeds_leaves_the_container_running() {
    if !sandbox_or_skip("an_essential_oneshot_that_succeeds_leaves_the_container_running") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());
    let o = sbx.exec(&["svctl", "wait", "done", "migrate", "--timeout", "20000"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}\n{}", sbx.logs());
    let o = sbx.exec(&["svctl", "wait", "up", "web", "--timeout", "20000"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}\n{}", sbx.logs());
    // migrate's finish and web write to the same pipe (s6-overlay's
    // catch-all logger), finish before web starts: once web's line is
    // there, a stop of the container would have been said before it.
    let logs = sbx.wait_for_log("migrated\n", Duration::from_secs(10));
    assert!(
        !logs.contains("is essential: stopping the container"),
        "{logs}"
    );
    let o = sbx.exec(&["svctl", "status"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(sbx.stop(), 0);
}
