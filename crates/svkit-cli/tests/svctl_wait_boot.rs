//! `svctl wait` run before the boot hook has made the slots, on the real
//! /init: a declared slot not made yet is "not yet", not "no such slot".
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

const CONFIG: &str = r#"{
  "slots": [
    { "name": "api", "readiness": { "notification_fd": 3 },
      "command": ["sh", "-c", "sleep 0.5; echo >&3; exec sleep 1000"] }
  ]
}"#;

/// Runs before the boot hook (`50-svkit`) and holds the boot until
/// something is written to `/tmp/go`.
const HOLD: &str = "#!/bin/sh\nmkfifo /tmp/go && read -r _ < /tmp/go\n";

#[test]
fn wait_waits_for_the_boot_to_make_a_declared_slot() {
    if !sandbox_or_skip("wait_waits_for_the_boot_to_make_a_declared_slot") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    fx.rootfs.script("etc/cont-init.d/40-hold", HOLD);
    // No CMD: `run --detach` returns once /init is up, not after cont-init
    // (which the hold keeps from ending), as `docker run -d` does.
    let r = fx.rootfs.arg();
    let v = format!("{}:/data", fx.data.path().display());
    let sbx = Sandbox::start(&["--rootfs", &r, "--volume", &v], &[]);
    poll("the boot held", Duration::from_secs(10), || {
        sbx.root().join("tmp/go").exists().then_some(())
    });
    assert!(!sbx.root().join("run/service/api").exists());
    // Declared, not made yet: a timeout (1), not "no such slot" (2).
    let o = sbx.run(&["svctl", "wait", "ready", "api", "--timeout", "300"], 1);
    assert!(
        err(&o).contains("waiting for api to be ready"),
        "{}",
        err(&o)
    );
    // Neither declared nor there: no such slot, at once.
    let o = sbx.run(&["svctl", "wait", "ready", "nope", "--timeout", "20000"], 2);
    assert!(err(&o).contains("no such slot"), "{}", err(&o));
    // Started while the boot is held, it returns once api is ready.
    let o = sbx.sh("svctl wait ready api --timeout 20000 & w=$!; \
         [ -e /run/service/api ] && echo made-too-early; \
         echo go > /tmp/go; wait $w; rc=$?; \
         echo ready=$(s6-svstat -o ready /run/service/api); exit $rc");
    expect_code(&o, 0);
    assert_eq!(stdout(&o), "ready=true\n");
    sbx.stop();
}
