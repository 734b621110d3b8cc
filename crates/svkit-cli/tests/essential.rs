//! `essential` said explicitly, on the real /init with the demo image's
//! rootfs: `true` on a slot no redirect names ends the container with its
//! code when it fails for good; `false` on a redirect's slot (essential by
//! default) keeps the container running, unhealthy, after it failed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout};

mod demo_image;
use demo_image::workspace;

/// The demo config with `"essential": VALUE` added to the slot `slot`,
/// as a rootfs dir that replaces the image's file.
fn config_with(slot: &str, value: bool) -> tempfile::TempDir {
    let text =
        fs::read_to_string(workspace().join("rootfs/etc/svkit/10-app.json")).expect("demo config");
    let mut doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let slots = doc["slots"].as_array_mut().expect("slots");
    let s = slots
        .iter_mut()
        .find(|s| s["name"] == slot)
        .expect("slot in the demo config");
    s["essential"] = serde_json::Value::Bool(value);
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("etc/svkit")).expect("mkdir");
    fs::write(dir.path().join("etc/svkit/10-app.json"), doc.to_string()).expect("write");
    dir
}

#[test]
fn essential_true_on_any_slot_ends_the_container_with_its_code() {
    if !sandbox_or_skip("essential_true_on_any_slot_ends_the_container_with_its_code") {
        return;
    }
    let cfg = config_with("dashboard", true);
    let data = tempfile::tempdir().expect("tempdir");
    // A foreground CMD; the dashboard (no redirect names it) exits 78.
    let sbx = demo_image::start(
        data.path(),
        &["APP_DASHBOARD=1", "APP_CONFIG_BAD=1"],
        &["sleep", "100000"],
        &[cfg.path()],
    );
    let logs = sbx.wait_for_log(
        "dashboard is essential: stopping the container with exit code 78",
        Duration::from_secs(30),
    );
    assert_eq!(sbx.wait_exit(Duration::from_secs(30)), 78, "{logs}");
}

#[test]
fn essential_false_on_a_redirects_slot_keeps_the_container_running() {
    if !sandbox_or_skip("essential_false_on_a_redirects_slot_keeps_the_container_running") {
        return;
    }
    let cfg = config_with("gateway-{instance}", false);
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = demo_image::start(
        data.path(),
        &["APP_CONFIG_BAD=1"],
        &["gateway", "run"],
        &[cfg.path()],
    );
    sbx.wait_for_log("s6 supervision", Duration::from_secs(30));
    poll("gateway-default failed", Duration::from_secs(30), || {
        let o = sbx.exec(&["svctl", "status", "--json", "gateway-default"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
        (v["slots"][0]["state"] == "failed" && o.status.code() == Some(3)).then_some(())
    });
    // Failed for good, and the container goes on: it answers, unhealthy.
    let o = sbx.exec(&["svctl", "status"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        !sbx.logs().contains("is essential: stopping the container"),
        "{}",
        sbx.logs()
    );
    assert_eq!(sbx.stop(), 0);
}
