//! One error per cause: a malformed slot is still a declared one, so its
//! dependents and redirects to it add no "undeclared slot" errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::PathBuf;

use svkit::config::*;

fn errors(text: &str) -> Vec<String> {
    let files = vec![(
        PathBuf::from("/etc/svkit/10.json"),
        text.as_bytes().to_vec(),
    )];
    match load_layers(&files, &FixedInstances::default()) {
        Err(LoadError::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
        other => panic!("expected invalid, got {other:?}"),
    }
}

#[test]
fn a_type_error_in_a_slot_is_its_only_error() {
    let d = errors(
        r#"{"slots": [
  {"name": "db", "command": "postgres"},
  {"name": "api", "command": ["api"], "depends_on": {"db": "ready"}},
  {"name": "db-{instance}", "instances": {"names": ["a"]}, "command": 5},
  {"name": "web", "command": ["web"], "depends_on": {"db-{instance}": "up", "api": "up"}}
],
"redirects": [{"match": ["db"], "slot": "db"}]}"#,
    );
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d[0].contains("slots[0].command: invalid type"), "{d:#?}");
    assert!(d[1].contains("slots[2].command: invalid type"), "{d:#?}");
}

#[test]
fn a_slot_with_an_invalid_value_is_still_declared() {
    let d = errors(
        r#"{"slots": [
  {"name": "db", "command": ["postgres"], "env": {"1BAD": "x"}},
  {"name": "api", "command": ["api"], "depends_on": {"db": "ready", "nope": "up"}}
]}"#,
    );
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d[0].contains("slots[0].env.1BAD"), "{d:#?}");
    assert!(d[1].contains("undeclared slot `nope`"), "{d:#?}");
}

/// A template's error is its own, not each instance's: said once however
/// many instances there are, naming the template.
#[test]
fn a_template_error_is_said_once_for_all_its_instances() {
    let d = errors(
        r#"{"slots": [
  {"name": "w-{instance}", "instances": {"names": ["a", "b", "c"]}, "command": ["w"], "env": {"1BAD": "x"}}
]}"#,
    );
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].contains("slots[0].env.1BAD"), "{d:#?}");
    let d = errors(
        r#"{"slots": [
  {"name": "W-{instance}", "instances": {"names": ["a", "b"]}, "command": ["w"]}
]}"#,
    );
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].contains("`W-{instance}`"), "{d:#?}");
}

/// `default_program` must name a program: not empty, not an option.
#[test]
fn an_empty_or_dash_led_default_program_is_refused() {
    for bad in ["", "-x"] {
        let d = errors(&format!(
            r#"{{"default_program": "{bad}", "slots": [{{"name": "a", "command": ["a"]}}]}}"#
        ));
        assert_eq!(d.len(), 1, "{bad:?}: {d:#?}");
        assert!(
            d[0].contains("default_program: must be a program name"),
            "{d:#?}"
        );
    }
}
