//! Records left in `state_dir` by names a new config no longer declares (a
//! renamed `remember` slot, a renamed template with registered instances),
//! on the real /init: the boot hook says so once, `svctl status` and
//! `svctl plan` note them without changing their exit codes, and `svctl
//! forget` removes exactly them, refusing a name the config still declares.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use serde_json::Value;
use svctl_common::*;

const V1: &str = r#"{
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "rem", "command": ["sleep", "1000"], "autostart": "remember" },
    { "name": "gw-{instance}", "instances": { "names": [] }, "command": ["sleep", "1001"] }
  ]
}"#;

/// Version 2: both renamed.
const V2: &str = r#"{
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "keep", "command": ["sleep", "1002"], "autostart": "remember" },
    { "name": "gate-{instance}", "instances": { "names": [] }, "command": ["sleep", "1003"] }
  ]
}"#;

const OLD_DESIRED: &str = "data/.svkit/desired/rem";
const OLD_INSTANCE: &str = "data/.svkit/instances/gw-{instance}/eve";
const KEPT_DESIRED: &str = "data/.svkit/desired/keep";

/// The names in a JSON doc's `orphans`.
fn orphan_names(doc: &Value) -> Vec<String> {
    let list = doc["orphans"]
        .as_array()
        .unwrap_or_else(|| panic!("no orphans: {doc}"));
    list.iter()
        .map(|o| o["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn renamed_slots_records_are_noted_then_forgotten() {
    if !sandbox_or_skip("renamed_slots_records_are_noted_then_forgotten") {
        return;
    }
    let fx = Fixture::new(V1);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["rem"]);
    sbx.run(&["svctl", "start", "--wait", "--timeout", "10s", "rem"], 0);
    let o = sbx.exec(&["svctl", "register", "eve"]);
    expect_code(&o, 0);
    let root = sbx.root();
    assert!(root.join(OLD_DESIRED).is_file());
    assert!(root.join(OLD_INSTANCE).is_file());

    let o = sbx.reconcile_with(V2);
    expect_code(&o, 0);
    let boot = err(&o);
    let lines: Vec<&str> = boot
        .lines()
        .filter(|l| l.contains("svctl forget"))
        .collect();
    assert_eq!(lines.len(), 1, "one line at boot: {boot}");
    for want in ["rem", "gw-{instance}", "eve", "svkit-reconcile: warning:"] {
        assert!(lines[0].contains(want), "{want} in {}", lines[0]);
    }
    wait_supervised(&sbx, &["keep"]);
    // A declared slot's remembered state is not an orphan.
    sbx.run(&["svctl", "start", "--wait", "--timeout", "10s", "keep"], 0);

    let o = sbx.exec(&["svctl", "status"]);
    expect_code(&o, 0);
    assert!(
        err(&o).contains("rem")
            && err(&o).contains("gw-{instance}")
            && err(&o).contains("svctl forget"),
        "status note: {}",
        err(&o)
    );
    let o = sbx.exec(&["svctl", "status", "--json"]);
    expect_code(&o, 0);
    assert_eq!(orphan_names(&json_of(&o)), ["rem", "gw-{instance}"]);
    let o = sbx.exec(&["svctl", "plan"]);
    expect_code(&o, 0);
    assert!(
        err(&o).contains("rem") && err(&o).contains("gw-{instance}"),
        "plan note: {}",
        err(&o)
    );
    let o = sbx.exec(&["svctl", "plan", "--json"]);
    expect_code(&o, 0);
    assert_eq!(orphan_names(&json_of(&o)), ["rem", "gw-{instance}"]);

    // Refused, all or nothing: a declared name, a name with nothing to
    // forget, and an orphan given beside either.
    for (args, why) in [
        (&["keep"][..], "declares"),
        (&["gate-{instance}"][..], "declares"),
        (&["nothing-here"][..], "nothing to forget"),
        (&["rem", "keep"][..], "declares"),
        (&["gw-{instance}", "nothing-here"][..], "nothing to forget"),
    ] {
        let mut argv = vec!["svctl", "forget"];
        argv.extend_from_slice(args);
        let o = sbx.exec(&argv);
        expect_code(&o, 1);
        assert!(
            err(&o).starts_with("svctl: fatal: unable to forget") && err(&o).contains(why),
            "{args:?}: {}",
            err(&o)
        );
        for f in [OLD_DESIRED, OLD_INSTANCE, KEPT_DESIRED] {
            assert!(root.join(f).is_file(), "{args:?} removed {f}");
        }
    }

    let o = sbx.exec(&["svctl", "forget", "--all"]);
    expect_code(&o, 0);
    assert!(!root.join(OLD_DESIRED).exists());
    assert!(!root.join("data/.svkit/instances/gw-{instance}").exists());
    assert!(
        root.join(KEPT_DESIRED).is_file(),
        "a declared slot's state was forgotten"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(KEPT_DESIRED)).unwrap(),
        "up\n"
    );

    for argv in [&["svctl", "status"][..], &["svctl", "plan"][..]] {
        let o = sbx.exec(argv);
        expect_code(&o, 0);
        assert!(!err(&o).contains("svctl forget"), "{argv:?}: {}", err(&o));
    }
    for argv in [
        &["svctl", "status", "--json"][..],
        &["svctl", "plan", "--json"][..],
    ] {
        let o = sbx.exec(argv);
        expect_code(&o, 0);
        assert!(orphan_names(&json_of(&o)).is_empty(), "{argv:?}");
    }
    let o = sbx.reconcile_with(V2);
    expect_code(&o, 0);
    assert!(!err(&o).contains("svctl forget"), "boot: {}", err(&o));
    // Nothing left: a name is refused, --all has nothing to do.
    expect_code(&sbx.exec(&["svctl", "forget", "rem"]), 1);
    expect_code(&sbx.exec(&["svctl", "forget", "--all"]), 0);
    sbx.stop();
}
