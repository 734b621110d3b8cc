//! Instances registered at runtime (`svctl register`) as an instance source:
//! the config, loaded once, asks `state::LiveInstances` for them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::Path;

use svkit::config::{self, Validated};
use svkit::state::{is_registered, register, unregister, LiveInstances, INSTANCES_DIR};

const CFG: &str = r#"{
  "state_dir": "STATE",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"] }, "command": ["x"] },
    { "name": "bare-{instance}", "instances": { }, "command": ["x"] },
    { "name": "plain", "command": ["x"] }
  ]
}"#;

/// A config dir (CFG, `plain` renamed to `last`) and its state dir.
fn setup(t: &Path, last: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (state, cfg) = (t.join("state"), t.join("cfg"));
    fs::create_dir(&cfg).expect("mkdir");
    let body = CFG
        .replace("STATE", &state.display().to_string())
        .replace("\"plain\"", &format!("\"{last}\""));
    fs::write(cfg.join("10.json"), body).expect("write");
    (state, cfg)
}

fn load(cfg: &Path) -> Validated {
    config::load(cfg, &LiveInstances).expect("load")
}

fn names(v: &Validated) -> Vec<String> {
    v.model.slots.iter().map(|s| s.name.clone()).collect()
}

#[test]
fn registered_instances_join_their_template() {
    let t = tempfile::tempdir().expect("tempdir");
    let (state, cfg) = setup(t.path(), "plain");
    let v = load(&cfg);
    assert_eq!(names(&v), ["gw-default", "plain"]);
    // Where instances can be registered, even one with none yet.
    let templates: Vec<&str> = v.model.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(templates, ["gw-{instance}", "bare-{instance}"]);

    assert!(register(&state, "gw-{instance}", "eve", None).expect("reg"));
    assert!(!register(&state, "gw-{instance}", "eve", None).expect("reg"));
    assert!(register(&state, "bare-{instance}", "one", None).expect("reg"));
    assert!(register(&state, "gw-{instance}", "default", None).expect("reg"));
    assert!(register(&state, "gw-{instance}", "adam", None).expect("reg"));
    let v = load(&cfg);
    // Declared names first, then registered ones sorted.
    let want = ["gw-default", "gw-adam", "gw-eve", "bare-one", "plain"];
    assert_eq!(names(&v), want);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);

    assert!(unregister(&state, "gw-{instance}", "eve").expect("unreg"));
    assert!(!unregister(&state, "gw-{instance}", "eve").expect("unreg"));
    assert!(!is_registered(&state, "gw-{instance}", "eve"));
    assert!(is_registered(&state, "gw-{instance}", "adam"));
    let v = load(&cfg);
    assert_eq!(names(&v), ["gw-default", "gw-adam", "bare-one", "plain"]);
}

#[test]
fn bad_registrations_never_break_the_config() {
    let t = tempfile::tempdir().expect("tempdir");
    // `gw-eve` is declared after the template: it still wins.
    let (state, cfg) = setup(t.path(), "gw-eve");
    let dir = state.join(INSTANCES_DIR).join("gw-{instance}");
    fs::create_dir_all(dir.join("adir")).expect("mkdir");
    for name in ["Bad Name", "eve", &"x".repeat(70), "ok", ".hidden"] {
        fs::write(dir.join(name), "").expect("write");
    }
    let v = load(&cfg);
    assert_eq!(names(&v), ["gw-default", "gw-ok", "gw-eve"]);
    let w: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 4, "{w:#?}");
    for (i, what) in [
        "not a regular file",
        "skipping registered instance \"Bad Name\"",
        "skipping registered instance \"xxxx",
        "skipping registered slot `gw-eve` (instance `eve`): already defined at",
    ]
    .iter()
    .enumerate()
    {
        assert!(w.iter().any(|l| l.contains(what)), "{i}: {what}: {w:#?}");
    }
}
