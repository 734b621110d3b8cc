//! The config text an import prints: `{"slots": [...]}`, pretty, each
//! slot's keys in the order docs/config.md lists them (nested objects in
//! key order), a final newline; and the check every import passes before
//! it is printed.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::capacity::{self, limit::Limit, Need, Others, Place};
use crate::config::{self, FixedInstances, LoadError, Validated};

/// Slot keys in the order of docs/config.md's table; others after, sorted.
const ORDER: &[&str] = &[
    "name",
    "instances",
    "type",
    "command",
    "user",
    "cwd",
    "env",
    "env_file",
    "secrets",
    "autostart",
    "depends_on",
    "essential",
    "readiness",
    "liveness",
    "log",
    "restart",
    "down_signal",
    "stop_timeout_ms",
];

/// The config text of `slots`, in serde_json's pretty layout (two spaces
/// a level, `[]` and `{}` when empty), written directly: serde's
/// serializer, with a formatter call for every bracket, comma and indent,
/// cost more than the rest of the render.
pub fn render(slots: &[Map<String, Value>]) -> String {
    // Room for a typical slot up front: growing a big text by doubling
    // copied it over and over.
    let mut out = Vec::with_capacity(64 + slots.len() * 768);
    if slots.is_empty() {
        out.extend_from_slice(b"{\n  \"slots\": []");
    } else {
        out.extend_from_slice(b"{\n  \"slots\": [");
        for (i, s) in slots.iter().enumerate() {
            newline(&mut out, 2, i > 0);
            slot(&mut out, s);
        }
        newline(&mut out, 1, false);
        out.push(b']');
    }
    out.extend_from_slice(b"\n}\n");
    // Every piece written is UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// One slot at depth 2: its keys in ORDER, then the others (sorted, as
/// the map holds them).
fn slot(out: &mut Vec<u8>, s: &Map<String, Value>) {
    if s.is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    // One pass over the slot's few keys placing each in ORDER: a map
    // lookup per ORDER key cost more than the writing.
    let mut placed: [Option<&Value>; ORDER.len()] = [None; ORDER.len()];
    let mut others = false;
    for (k, v) in s {
        match ORDER.iter().position(|o| *o == k) {
            Some(i) => placed[i] = Some(v),
            None => others = true,
        }
    }
    let ordered = ORDER.iter().zip(placed).filter_map(|(k, v)| Some((*k, v?)));
    let rest = (s.iter().filter(|_| others))
        .filter(|(k, _)| !ORDER.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v));
    out.push(b'{');
    for (i, (k, v)) in ordered.chain(rest).enumerate() {
        newline(out, 3, i > 0);
        string(out, k);
        out.extend_from_slice(b": ");
        value(out, v, 3);
    }
    newline(out, 2, false);
    out.push(b'}');
}

/// A value whose first line is at `depth`.
fn value(out: &mut Vec<u8>, v: &Value, depth: usize) {
    match v {
        Value::Array(a) if a.is_empty() => out.extend_from_slice(b"[]"),
        Value::Object(m) if m.is_empty() => out.extend_from_slice(b"{}"),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                newline(out, depth + 1, i > 0);
                value(out, x, depth + 1);
            }
            newline(out, depth, false);
            out.push(b']');
        }
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                newline(out, depth + 1, i > 0);
                string(out, k);
                out.extend_from_slice(b": ");
                value(out, x, depth + 1);
            }
            newline(out, depth, false);
            out.push(b'}');
        }
        Value::String(s) => string(out, s),
        // Numbers, booleans and null as serde_json writes them; into a
        // Vec, that cannot fail.
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// A JSON string: as it is when nothing in it needs escaping (nearly
/// every string of a config), else as serde_json escapes it.
fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        let _ = serde_json::to_writer(&mut *out, s);
        return;
    }
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// A comma, a line break and the indent of up to 32 levels.
const BREAK: &[u8] = b",\n                                                                ";

/// A line break (after a comma when `comma`) and the indent of `depth`.
fn newline(out: &mut Vec<u8>, depth: usize, comma: bool) {
    let from = usize::from(!comma);
    match BREAK.get(from..2 + 2 * depth) {
        Some(b) => out.extend_from_slice(b),
        None => {
            out.extend_from_slice(&BREAK[from..2]);
            (0..depth).for_each(|_| out.extend_from_slice(b"  "));
        }
    }
}

/// What `svctl check` asks of a config off s6-overlay, without the
/// image's users and programs: valid, and within s6-svscan's default
/// limit with s6-overlay's own services. The error names the slot (its
/// index in `slots`) when it is about one.
pub fn validate(slots: &[Map<String, Value>]) -> Result<(), (Option<usize>, String)> {
    checked(slots).map(|_| ())
}

/// [`validate`], and the text it checked with the config loaded from it.
pub fn checked(
    slots: &[Map<String, Value>],
) -> Result<(String, Validated), (Option<usize>, String)> {
    // Too many services shows in the slot list already (a template makes
    // one slot per distinct instance name): said before rendering and
    // loading a config that the same count refuses after.
    fits(slots.iter().flat_map(|s| {
        let made = match s.get("instances") {
            Some(i) => {
                let names = i.get("names").and_then(Value::as_array);
                let distinct: BTreeSet<&str> = names
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                distinct.len()
            }
            None => 1,
        };
        std::iter::repeat_n(("", s.contains_key("log")), made)
    }))?;
    // The text's own bytes go to the load and come back: a copy of a big
    // import's text cost more (a page fault for every 4 KiB of it) than
    // checking again that the bytes are UTF-8.
    let files = vec![(PathBuf::from("imported.json"), render(slots).into_bytes())];
    let loaded = config::load_layers(&files, &FixedInstances::default());
    let text = files
        .into_iter()
        .next()
        .and_then(|(_, bytes)| String::from_utf8(bytes).ok())
        .unwrap_or_default();
    let v = match loaded {
        Ok(v) => v,
        Err(LoadError::Invalid(diags)) => {
            let Some(d) = diags.into_iter().next() else {
                return Err((None, "the imported config is invalid".into()));
            };
            let index = d
                .path
                .as_deref()
                .and_then(|p| p.strip_prefix("slots["))
                .and_then(|p| p.split(']').next())
                .and_then(|n| n.parse().ok());
            let what = match &d.path {
                Some(p) => format!("{p}: {}", d.message),
                None => d.message,
            };
            return Err((index, format!("the imported slot would be invalid: {what}")));
        }
        Err(e) => return Err((None, e.to_string())),
    };
    fits(
        v.model
            .slots
            .iter()
            .map(|s| (s.name.as_str(), s.log.is_some())),
    )?;
    Ok((text, v))
}

/// Within s6-svscan's default limit with s6-overlay's own services, as
/// `svctl check` asks off s6-overlay.
fn fits<'a>(
    slots: impl IntoIterator<Item = (&'a str, bool)>,
) -> Result<(), (Option<usize>, String)> {
    let mut need = Need::of_slots(slots);
    need.others.push(Others {
        count: capacity::OVERLAY_OWN,
        place: Place::OverlayAssumed,
    });
    need.check(Limit::assumed("an import, checked as on a build host"))
        .map(|_| ())
        .map_err(|e| (None, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slots(n: usize, log: bool) -> Vec<Map<String, Value>> {
        (0..n)
            .map(|i| {
                let mut s = json!({"name": format!("w{i}"), "command": ["sleep", "1"]});
                if log {
                    s["log"] = json!({"dir": format!("/var/log/w{i}")});
                }
                s.as_object().cloned().unwrap()
            })
            .collect()
    }

    fn template(names: &[&str]) -> Map<String, Value> {
        let s = json!({"name": "t-{instance}", "instances": {"names": names}, "command": ["x"]});
        s.as_object().cloned().unwrap()
    }

    /// What the check of the loaded config says of `slots`.
    fn after_load(slots: &[Map<String, Value>]) -> Result<(), (Option<usize>, String)> {
        let files = vec![(PathBuf::from("imported.json"), render(slots).into_bytes())];
        let v = config::load_layers(&files, &FixedInstances::default()).unwrap();
        fits(
            v.model
                .slots
                .iter()
                .map(|s| (s.name.as_str(), s.log.is_some())),
        )
    }

    #[test]
    fn the_layout_is_serde_jsons_pretty_one_at_any_depth() {
        // Empty and filled arrays and objects, nested past the indent
        // written at once (32 levels).
        for depth in [0, 1, 2, 31, 32, 33, 40] {
            let mut v = json!([[], {}, 1, "s", {"k": [true, null]}]);
            for d in 0..depth {
                v = if d % 2 == 0 {
                    json!([v, []])
                } else {
                    json!({"a": v, "b": {}})
                };
            }
            let slot = json!({"name": "w", "command": ["x"], "zz": v});
            let slot = slot.as_object().cloned().unwrap();
            let want = serde_json::to_string_pretty(&json!({"slots": [slot.clone()]})).unwrap();
            // docs/config.md's order puts command after name; zz last.
            let got = render(&[slot]);
            let want = want.replace(
                "\"command\": [\n        \"x\"\n      ],\n      \"name\": \"w\",",
                "\"name\": \"w\",\n      \"command\": [\n        \"x\"\n      ],",
            );
            assert_eq!(got, want + "\n", "depth {depth}");
        }
    }

    #[test]
    fn too_many_services_is_refused_before_the_load_as_after_it() {
        // 997 beside s6-overlay's own 3 fit; a logger each does not.
        assert!(checked(&slots(997, false)).is_ok());
        for (many, why) in [
            (slots(998, false), "slots"),
            (slots(500, true), "loggers"),
            (
                [slots(995, false), vec![template(&["a", "b", "c"])]].concat(),
                "instances",
            ),
        ] {
            let early = checked(&many).unwrap_err();
            assert_eq!(Err(early.clone()), after_load(&many), "{why}");
            assert!(early.1.contains("s6-svscan"), "{why}: {}", early.1);
        }
        // A template makes one slot per distinct name, as the load does.
        let dup = [slots(995, false), vec![template(&["a", "a", "b"])]].concat();
        assert!(checked(&dup).is_ok());
        // Known before the load: over the limit and invalid says the
        // limit (the load would have said the invalid slot).
        let mut bad = slots(998, false);
        bad[0].insert("command".into(), json!([]));
        assert!(checked(&bad).unwrap_err().1.contains("s6-svscan"));
    }
}
