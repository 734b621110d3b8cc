//! Property: the config scanner vouches only for text serde_json accepts
//! (config load skips serde_json's syntax pass for such text, so a text it
//! vouched for wrongly would load instead of being refused, located), and
//! for such text it finds the spans it finds in text serde_json accepted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use proptest::prelude::*;
use serde::de::IgnoredAny;
use svkit::config::json_pos::Spans;

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

fn vouched_means_accepted(text: &str) {
    if let Some(spans) = Spans::scan(text) {
        assert!(
            serde_json::from_str::<IgnoredAny>(text).is_ok(),
            "vouched for text serde_json refuses: {text:?}"
        );
        assert_eq!(
            format!("{spans:?}"),
            format!("{:?}", Spans::scan_valid(text)),
            "{text:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn a_config_with_a_few_bytes_changed(e in edits()) {
        if let Some(text) = apply(SEED, &e) {
            vouched_means_accepted(&text);
        }
    }

    #[test]
    fn short_texts_of_json_bytes(t in prop::collection::vec(prop::sample::select(ALPHABET), 0..12)) {
        vouched_means_accepted(std::str::from_utf8(&t).unwrap());
    }
}

#[test]
fn plain_json_is_vouched_for_and_the_rest_left_to_serde_json() {
    assert!(Spans::scan(SEED).is_some());
    assert!(Spans::scan(r#"{"a": [1, -0, 0.5, "\/\b\f\n\r\t"]}"#).is_some());
    // Valid, but serde_json's to judge: scanned again after it accepted.
    let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
    for judged in [
        r#"{"\u0041": 1}"#,
        r#"{"a": 1e5}"#,
        "12345678901234567890",
        &deep,
    ] {
        assert!(Spans::scan(judged).is_none(), "{judged}");
        assert!(
            serde_json::from_str::<IgnoredAny>(judged).is_ok(),
            "{judged}"
        );
    }
    // Not JSON.
    let deeper = "[".repeat(100_000);
    for bad in [
        "",
        " ",
        "{",
        "{,}",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\":}",
        "[1 2]",
        "01",
        "1.",
        ".5",
        "+1",
        "-",
        "tru",
        "nul",
        "\"a",
        "\"\t\"",
        "{} {}",
        "[}",
        "{]",
        "{1:2}",
        "\"\\x\"",
        &deeper,
    ] {
        assert!(Spans::scan(bad).is_none(), "{bad:?}");
        assert!(serde_json::from_str::<IgnoredAny>(bad).is_err(), "{bad:?}");
    }
}
