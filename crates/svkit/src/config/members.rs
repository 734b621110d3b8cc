//! Every error in a value serde_json rejected, not just its first.
//!
//! serde stops at the first problem, so a slot with a wrong type in
//! `log.keep` and an unknown key `restat` would take two rounds of editing.
//! Here each member of the object is parsed alone, as the only member of a
//! skeleton of its ancestors, as part of the same type: an error inside the
//! member's own text is its own; one outside it belongs to the skeleton (a
//! required field the lone member leaves out) and is not reported. The
//! members of an object-valued member are checked the same way, one by one.

use serde::de::DeserializeOwned;

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::parse::{diag_at, error_offset, Layer};

/// Nesting checked member by member; below it a member's first error
/// stands for all of them.
const MAX_DEPTH: usize = 8;

/// Every error serde finds in the object at `path` (whose text is in
/// `text`), checked as a `T`, each with its own position and field path.
/// Empty when no single member is at fault (e.g. a required field is
/// missing): the caller then reports serde's own error.
pub(super) fn every_error<T: DeserializeOwned>(
    layer: &Layer,
    text: &str,
    path: &FieldPath,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check::<T>(layer, text, path, "", "", 0, &mut out);
    out
}

fn check<T: DeserializeOwned>(
    layer: &Layer,
    text: &str,
    at: &FieldPath,
    open: &str,
    close: &str,
    depth: usize,
    out: &mut Vec<Diagnostic>,
) {
    for (child, span) in layer.spans.members(at) {
        let Some(key_start) = span.key_start else {
            continue;
        };
        // `"key": ` with its colon, then the whole member.
        let (Some(key), Some(member)) = (
            text.get(key_start..span.start),
            text.get(key_start..span.end),
        ) else {
            continue;
        };
        let doc = format!("{open}{{{member}}}{close}");
        let Err(e) = serde_json::from_str::<T>(&doc) else {
            continue;
        };
        let base = open.len() + 1;
        let off = error_offset(&doc, &e);
        if off < base || off >= base + member.len() {
            continue;
        }
        let in_value = off >= base + key.len();
        let is_object = text.as_bytes().get(span.start) == Some(&b'{');
        if in_value && is_object && depth < MAX_DEPTH {
            let before = out.len();
            let open = format!("{open}{{{key}");
            let close = format!("}}{close}");
            check::<T>(layer, text, &child, &open, &close, depth + 1, out);
            if out.len() > before {
                continue;
            }
        }
        out.push(diag_at(layer, key_start + (off - base), &e));
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_layer;
    use std::path::Path;

    fn errors(text: &str) -> Vec<(String, String)> {
        let (_, d) = parse_layer(Path::new("t.json"), text.as_bytes());
        d.iter()
            .map(|d| {
                let path = d.path.as_ref().map(ToString::to_string);
                (path.unwrap_or_default(), d.message.clone())
            })
            .collect()
    }

    #[test]
    fn every_wrong_member_of_a_slot_is_reported() {
        let d = errors(
            r#"{"slots": [{"name": "a", "command": "x",
              "log": {"dir": 5, "keep": "ten", "colour": true},
              "restat": {}, "restart": {"backoff": {"max_s": "2"}}}]}"#,
        );
        let paths: Vec<&str> = d.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "slots[0].command",
                "slots[0].log.dir",
                "slots[0].log.keep",
                "slots[0].log",
                "slots[0]",
                "slots[0].restart.backoff.max_s"
            ],
            "{d:?}"
        );
        assert!(d[3].1.contains("unknown field `colour`"), "{d:?}");
        assert!(d[4].1.contains("unknown field `restat`"), "{d:?}");
    }

    #[test]
    fn a_missing_field_alone_is_still_reported() {
        let d = errors(r#"{"slots": [{"name": "a"}]}"#);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].1.contains("missing field `command`"), "{d:?}");
    }

    #[test]
    fn a_missing_field_inside_a_member_is_that_members_error() {
        let d = errors(r#"{"slots": [{"name": "a", "command": ["x"], "log": {"keep": 3}}]}"#);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].1.contains("missing field `dir`"), "{d:?}");
    }
}
