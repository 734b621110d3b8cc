//! A redirect says what it meets on its way (here an unusable remembered
//! state of the slot it starts), as the boot hook does: warnings are not
//! dropped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::time::Duration;
use svkit_testkit::sandbox_or_skip;

mod demo_image;

#[test]
fn a_redirect_prints_the_warnings_it_gathers() {
    if !sandbox_or_skip("a_redirect_prints_the_warnings_it_gathers") {
        return;
    }
    let data = tempfile::tempdir().expect("tempdir");
    let desired = data.path().join(".svkit/desired");
    fs::create_dir_all(&desired).expect("mkdir");
    fs::write(desired.join("gateway-default"), "sideways\n").expect("write");
    let sbx = demo_image::start(
        data.path(),
        &["APP_HEARTBEAT_MS=500"],
        &["gateway", "run"],
        &[],
    );
    // The breadcrumb comes after the redirect's warnings.
    let logs = sbx.wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(
        logs.lines().any(
            |l| l.starts_with("svkit-wrap: warning: slot gateway-default: ")
                && l.ends_with("treating it as never set")
        ),
        "{logs}"
    );
    sbx.stop();
}
