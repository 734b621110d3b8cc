//! What the import's tests share: fixtures, and an import's slots as the
//! config text holds them and as `svctl check` loads them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use svkit::config::{load_layers, FixedInstances, Validated};
use svkit_import::{Imported, RawSlot};

/// A slot as the JSON object the config text holds.
pub fn to_json(s: &RawSlot) -> serde_json::Map<String, Value> {
    match serde_json::to_value(s).unwrap() {
        Value::Object(m) => m,
        other => panic!("{other}"),
    }
}

/// `tests/fixtures/import/FORMAT/REL`, canonical.
pub fn fixture_of(format: &str, rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/import")
        .join(format)
        .join(rel);
    std::fs::canonicalize(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The slots as `{"slots": [...]}` in one layer, loaded as `svctl check`
/// loads a config dir.
pub fn validate(imported: &Imported) -> Validated {
    let json = serde_json::to_vec_pretty(&json!({ "slots": imported.slots })).unwrap();
    let files = vec![(PathBuf::from("/etc/svkit/10-imported.json"), json)];
    load_layers(&files, &FixedInstances::default())
        .unwrap_or_else(|e| panic!("imported config is invalid: {e}\n{:#?}", imported.slots))
}
