//! Config load grows linearly with the config: each size here took
//! minutes when one step was quadratic (a duplicate-key check per member,
//! a walk over every value per error, a cycle search per slot), and takes
//! a fraction of the bound now, even unoptimized. A regression fails at the
//! bound instead of hanging the suite.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use svkit::config::*;

/// Generous: each linear load takes at most 7 s of it in a debug build on
/// a loaded 2-CPU machine, the four at once; the quadratic ones did not end
/// within 20 s.
const BOUND: Duration = Duration::from_secs(25);

/// Loads `text` as the only layer on another thread; its result, or a
/// failure once `BOUND` has passed.
fn load_within(what: &str, text: String) -> (Duration, Result<Validated, LoadError>) {
    let (tx, rx) = mpsc::channel();
    let t0 = Instant::now();
    std::thread::spawn(move || {
        let files = vec![(PathBuf::from("/etc/svkit/10.json"), text.into_bytes())];
        let _ = tx.send(load_layers(&files, &FixedInstances::default()));
    });
    match rx.recv_timeout(BOUND) {
        Ok(r) => (t0.elapsed(), r),
        Err(_) => panic!("{what}: not loaded within {BOUND:?}"),
    }
}

#[test]
fn an_env_of_40000_keys() {
    let env: Vec<String> = (0..40_000).map(|i| format!("\"K{i}\": \"v\"")).collect();
    let text = format!(
        r#"{{"slots": [{{"name": "a", "command": ["a"], "env": {{{}}}}}]}}"#,
        env.join(", ")
    );
    let (took, r) = load_within("40,000 env keys", text);
    let v = r.expect("valid");
    assert_eq!(v.model.slots[0].env.len(), 40_000);
    eprintln!("40,000 env keys: {took:?}");
}

#[test]
fn a_dependency_chain_of_4000_slots() {
    let slots: Vec<String> = (0..4000)
        .map(|i| match i {
            0 => r#"{"name": "s0", "command": ["a"]}"#.to_owned(),
            _ => format!(
                r#"{{"name": "s{i}", "command": ["a"], "depends_on": {{"s{}": "up"}}}}"#,
                i - 1
            ),
        })
        .collect();
    let text = format!("{{\"slots\": [\n{}\n]}}", slots.join(",\n"));
    let (took, r) = load_within("a chain of 4,000", text);
    let v = r.expect("valid");
    let order = depends::start_order(&v.model.slots);
    assert_eq!(order.first(), Some(&"s0"));
    assert_eq!(order.last(), Some(&"s3999"));
    eprintln!("chain of 4,000: {took:?}");
}

#[test]
fn a_cycle_through_2000_slots_is_one_line_per_slot() {
    let slots: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                r#"{{"name": "s{i}", "command": ["a"], "depends_on": {{"s{}": "up"}}}}"#,
                (i + 1) % 2000
            )
        })
        .collect();
    let text = format!("{{\"slots\": [\n{}\n]}}", slots.join(",\n"));
    let (took, r) = load_within("a cycle of 2,000", text);
    let Err(LoadError::Invalid(d)) = r else {
        panic!("a cycle is invalid");
    };
    assert_eq!(d.len(), 2000);
    assert!(
        d[0].message
            .starts_with("dependency cycle: s0 -> s1 -> s2 -> "),
        "{}",
        d[0]
    );
    assert!(
        d[0].message.ends_with("-> s1999 -> s0 (2000 slots)"),
        "{}",
        d[0]
    );
    eprintln!("cycle of 2,000: {took:?}");
}

#[test]
fn ten_thousand_slots_with_an_error_each() {
    let slots: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"name": "s{i}", "command": "not a list", "env": {{"A": "1"}}}}"#))
        .collect();
    let text = format!("{{\"slots\": [\n{}\n]}}", slots.join(",\n"));
    let (took, r) = load_within("10,000 bad slots", text);
    let Err(LoadError::Invalid(d)) = r else {
        panic!("invalid");
    };
    assert_eq!(d.len(), 10_000);
    assert_eq!(
        d[9999].path.as_ref().map(ToString::to_string).as_deref(),
        Some("slots[9999].command")
    );
    assert_eq!(d[9999].pos.map(|p| p.line), Some(10_001));
    eprintln!("10,000 bad slots: {took:?}");
}

/// What the linear start order keeps: rounds of slots whose dependencies
/// started in earlier rounds, name order within a round, a dependency on
/// an unknown slot ignored, and slots held by a cycle last in name order.
#[test]
fn start_order_goes_by_rounds_then_names() {
    // A cycle is refused by validation: the dependencies are set on the
    // valid model afterwards, as any caller may hand them.
    let text = text_without_cycle();
    let files = vec![(PathBuf::from("/etc/svkit/10.json"), text.into_bytes())];
    let mut m = load_layers(&files, &FixedInstances::default())
        .expect("valid")
        .model;
    for s in &mut m.slots {
        let deps: &[&str] = match s.name.as_str() {
            "a" => &["b"],
            "b" | "c" => &["a"],
            "x" => &["gone"],
            _ => continue,
        };
        s.depends_on = deps
            .iter()
            .map(|d| Dependency {
                on: (*d).to_owned(),
                condition: Condition::Up,
            })
            .collect();
    }
    assert_eq!(
        depends::start_order(&m.slots),
        ["db", "worker", "x", "alpha", "migrate", "web", "a", "b", "c"]
    );
}

fn text_without_cycle() -> String {
    r#"{"slots": [
      {"name": "web", "command": ["a"], "depends_on": {"db": "up", "migrate": "ready"}},
      {"name": "migrate", "command": ["a"], "depends_on": {"db": "up"}},
      {"name": "db", "command": ["a"]}, {"name": "worker", "command": ["a"]},
      {"name": "c", "command": ["a"]}, {"name": "b", "command": ["a"]},
      {"name": "a", "command": ["a"]}, {"name": "x", "command": ["a"]},
      {"name": "alpha", "command": ["a"], "depends_on": {"worker": "up"}}
    ]}"#
    .to_owned()
}
