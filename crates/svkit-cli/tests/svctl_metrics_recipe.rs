//! docs/svctl.md's node-exporter recipe, taken from the doc as written (the
//! `json` block under `<!-- svkit:recipe node-exporter -->`), on the real
//! `/init` in a config whose `user` is not root, beside a slot of root's:
//! the file it writes holds every slot's samples, and nothing is warned.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::path::Path;
use std::time::{Duration, Instant};
use svctl_common::*;

const DOC: &str = "docs/svctl.md";
const MARKER: &str = "<!-- svkit:recipe node-exporter -->";
const FILE: &str = "/var/lib/node-exporter/svkit.prom";

/// The `json` block right under the recipe's marker.
fn recipe() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DOC);
    let md = std::fs::read_to_string(p).expect(DOC);
    let mut lines = md.lines().skip_while(|l| l.trim() != MARKER).skip(1);
    assert_eq!(
        lines.next().map(str::trim),
        Some("```json"),
        "{DOC}: no json block under {MARKER}"
    );
    let body: Vec<&str> = lines.take_while(|l| l.trim() != "```").collect();
    serde_json::from_str(&body.join("\n")).expect("the recipe is JSON")
}

#[test]
fn node_exporter_recipe_writes_every_slot_quietly() {
    if !sandbox_or_skip("node_exporter_recipe_writes_every_slot_quietly") {
        return;
    }
    let slot = recipe();
    let name = slot["name"]
        .as_str()
        .expect("the recipe slot has a name")
        .to_string();
    // The config's user is not root, and one slot is root's: its
    // supervise/ is root's alone.
    let config = serde_json::json!({
        "user": "nobody",
        "state_dir": "/data/.svkit",
        "slots": [
            { "name": "app", "command": ["sleep", "1000"] },
            { "name": "rootjob", "command": ["sleep", "1001"], "user": "root" },
            slot,
        ]
    });
    let fx = Fixture::new(&config.to_string());
    let sbx = fx.boot();
    let all = ["app", "rootjob", name.as_str()];
    wait_supervised(&sbx, &all);
    // Bounded: the recipe writes at once, then every 15 s.
    let end = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let t = stdout(&sbx.sh(&format!("cat {FILE} 2>/dev/null")));
        let missing: Vec<_> = all
            .iter()
            .filter(|s| !t.contains(&format!("svkit_slot_up{{slot=\"{s}\"}} 1")))
            .collect();
        if missing.is_empty() {
            break t;
        }
        assert!(
            Instant::now() < end,
            "{FILE} lacks {missing:?}:\n{t}\nlogs:\n{}",
            sbx.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(text.contains("# TYPE svkit_slot_up gauge"), "{text}");
    // The recipe wrote at least once by now; whatever it said is logged.
    let logs = sbx.logs();
    assert!(!logs.contains("warning"), "{logs}");
    assert!(!logs.contains("fatal"), "{logs}");
    sbx.stop();
}
