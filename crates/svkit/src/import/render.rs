//! The config text an import prints: `{"slots": [...]}`, pretty, each
//! slot's keys in the order docs/config.md lists them (nested objects in
//! key order), a final newline; and the check every import passes before
//! it is printed.

use std::path::PathBuf;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::capacity::{self, limit::Limit, Need, Others, Place};
use crate::config::{self, FixedInstances, LoadError};

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
        for k in ORDER {
            if let Some(v) = self.0.get(*k) {
                m.serialize_entry(k, v)?;
            }
        }
        for (k, v) in self.0 {
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

/// [`validate`], and the text it checked.
pub fn checked(slots: &[Map<String, Value>]) -> Result<String, (Option<usize>, String)> {
    let text = render(slots);
    let files = vec![(PathBuf::from("imported.json"), text.into_bytes())];
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
    let mut need = Need::of_slots(
        v.model
            .slots
            .iter()
            .map(|s| (s.name.as_str(), s.log.is_some())),
    );
    need.others.push(Others {
        count: capacity::OVERLAY_OWN,
        place: Place::OverlayAssumed,
    });
    need.check(Limit::assumed("an import, checked as on a build host"))
        .map_err(|e| (None, e.to_string()))?;
    let text = files.into_iter().next().map(|(_, b)| b).unwrap_or_default();
    // The bytes are render's own String's.
    Ok(String::from_utf8(text).unwrap_or_default())
}
