//! The config text an import prints: `{"slots": [...]}`, pretty, each
//! slot's keys in the order docs/config.md lists them (nested objects in
//! key order), a final newline; and the check every import passes before
//! it is printed.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::ser::{Serialize, SerializeMap, Serializer};
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

struct Slot<'a>(&'a Map<String, Value>);

impl Serialize for Slot<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        // One pass over the slot's few keys placing each in ORDER: a map
        // lookup per ORDER key cost more than the writing.
        let mut placed: [Option<&Value>; ORDER.len()] = [None; ORDER.len()];
        let mut others = false;
        for (k, v) in self.0 {
            match ORDER.iter().position(|o| *o == k) {
                Some(i) => placed[i] = Some(v),
                None => others = true,
            }
        }
        for (k, v) in ORDER.iter().zip(placed) {
            if let Some(v) = v {
                m.serialize_entry(k, v)?;
            }
        }
        for (k, v) in self.0.iter().filter(|_| others) {
            if !ORDER.contains(&k.as_str()) {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

struct Top<'a>(&'a [Map<String, Value>]);

impl Serialize for Top<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        let slots: Vec<Slot<'_>> = self.0.iter().map(Slot).collect();
        m.serialize_entry("slots", &slots)?;
        m.end()
    }
}

/// The config text of `slots`.
pub fn render(slots: &[Map<String, Value>]) -> String {
    // Room for a typical slot up front: growing a big text by doubling
    // copied it over and over.
    let mut buf = Vec::with_capacity(64 + slots.len() * 768);
    // Serializing maps of strings and numbers into a Vec cannot fail.
    let _ = serde_json::to_writer_pretty(&mut buf, &Top(slots));
    buf.push(b'\n');
    // serde_json writes UTF-8 only.
    String::from_utf8(buf).unwrap_or_default()
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
    let text = render(slots);
    // A copy for the load: cheaper than checking the bytes are UTF-8 again
    // to turn them back into the text.
    let files = vec![(PathBuf::from("imported.json"), text.as_bytes().to_vec())];
    let v = match config::load_layers(&files, &FixedInstances::default()) {
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
