//! Property: the config scanner takes the texts serde_json accepts, and
//! only those, and finds each value where serde_json reads it (config
//! load locates every error with what it found): the span of every value,
//! parsed alone, is the value serde_json reads at its path (a key given
//! twice: the last value), each member's key is written at its key span,
//! and objects and arrays have the members serde_json found.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use proptest::prelude::*;
use serde_json::Value;
use svkit::config::json_pos::{FieldPath, Spans};

/// A config in the shapes configs are written in, pretty and compact.
const SEED: &str = r#"{
  "user": "app",
  "slots": [
    {"name": "web", "command": ["nginx", "-g", "daemon off;"], "env": {"A": "x\"y\\z\n", "B": ""},
     "restart": {"max_deaths": 5, "within_s": 60, "permanent_exit_codes": [0, 78]},
     "autostart": true, "stop_timeout_ms": -1.25, "x": null, "y": false, "z": [[], {}]}
  ]
}"#;

/// Bytes that matter to JSON's grammar, and some that never may appear.
const ALPHABET: &[u8] = b"{}[]\",:\\ \t\n\r0123456789-+.eEtrufalsn/bu\x01\x1f\x7fx";

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    // (where, what: 0 delete, 1 insert, 2 replace, which byte)
    prop::collection::vec(
        (any::<usize>(), 0u8..3, prop::sample::select(ALPHABET)),
        1..4,
    )
}

fn apply(seed: &str, edits: &[(usize, u8, u8)]) -> Option<String> {
    let mut b = seed.as_bytes().to_vec();
    for &(at, op, c) in edits {
        let at = at % (b.len() + 1);
        match op {
            0 if at < b.len() => {
                b.remove(at);
            }
            1 => b.insert(at, c),
            _ if at < b.len() => b[at] = c,
            _ => {}
        }
    }
    String::from_utf8(b).ok()
}

/// The value at `path` of `text` is `v`, its members too.
fn found_where_serde_json_reads(text: &str, spans: &Spans, path: &FieldPath, v: &Value) {
    let span = spans
        .get(path)
        .unwrap_or_else(|| panic!("{path}: no span in {text:?}"));
    let alone: Value = serde_json::from_str(&text[span.start..span.end]).unwrap();
    assert_eq!(&alone, v, "{path} in {text:?}");
    match v {
        Value::Object(m) => {
            let members = spans.members(path);
            assert_eq!(members.len(), m.len(), "{path} in {text:?}");
            for (p, s) in members {
                let ks = s.key_start.unwrap();
                let key = serde_json::Deserializer::from_str(&text[ks..])
                    .into_iter::<String>()
                    .next()
                    .unwrap()
                    .unwrap();
                assert_eq!(p, path.key(key.as_str()), "{text:?}");
                found_where_serde_json_reads(text, spans, &p, &m[&key]);
            }
        }
        Value::Array(a) => {
            assert_eq!(spans.members(path).len(), a.len(), "{path} in {text:?}");
            for (i, x) in a.iter().enumerate() {
                found_where_serde_json_reads(text, spans, &path.index(i), x);
            }
        }
        _ => assert_eq!(spans.members(path).len(), 0, "{path} in {text:?}"),
    }
}

fn scanned_as_serde_json_reads(text: &str) {
    match (Spans::scan(text), serde_json::from_str::<Value>(text)) {
        (Ok(spans), Ok(v)) => found_where_serde_json_reads(text, &spans, &FieldPath::root(), &v),
        (Err(e), Err(want)) => assert_eq!(e.to_string(), want.to_string()),
        (s, v) => panic!("scan: {s:?}, serde_json: {v:?} for {text:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn a_config_with_a_few_bytes_changed(e in edits()) {
        if let Some(text) = apply(SEED, &e) {
            scanned_as_serde_json_reads(&text);
        }
    }

    #[test]
    fn short_texts_of_json_bytes(t in prop::collection::vec(prop::sample::select(ALPHABET), 0..12)) {
        scanned_as_serde_json_reads(std::str::from_utf8(&t).unwrap());
    }
}

#[test]
fn what_serde_json_alone_judges_is_scanned_too() {
    let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
    for judged in [
        SEED,
        r#"{"a": [1, -0, 0.5, "\/\b\f\n\r\t"]}"#,
        r#"{"\u0041": 1, "b\"c": {"\ud83d\ude00": [2e-3]}}"#,
        r#"{"a": 1e5, "b": 1E+2}"#,
        "12345678901234567890",
        " \"x\" ",
        &deep,
    ] {
        assert!(serde_json::from_str::<Value>(judged).is_ok(), "{judged}");
        scanned_as_serde_json_reads(judged);
    }
    // Not JSON: refused as serde_json refuses it.
    let deeper = "[".repeat(100_000);
    for bad in [
        "",
        " ",
        "{",
        "{,}",
        "[1,]",
        "{\"a\":}",
        "{\"a\" 1}",
        "[1 2]",
        "\"a",
        "\"a\\",
        "[}",
        "{]",
        "{1:2}",
        ":",
        "[:]",
        "{\"a\":1,:}",
        &deeper,
    ] {
        assert!(Spans::scan(bad).is_err(), "{bad:?}");
        scanned_as_serde_json_reads(bad);
    }
}
