//! Shared by the render tests: the golden cases under `tests/golden/`.
//!
//! A case is a dir with `config/*.json` (the layers), an optional
//! `case.json` (render env and autostart facts) and `expected/` (the golden
//! output). Config paths are presented as `/etc/svkit/<file>` so the output
//! does not depend on where the repository is checked out.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use svkit::config::{load_layers, FixedInstances, Validated};
use svkit::render::{render_all, RenderEnv, RenderedSlot};
use svkit::slot::health::StartFacts;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(workspace().join("tests/golden"))
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("config").is_dir())
        .collect();
    v.sort();
    v
}

/// Discovery answer used by every case.
pub fn instances() -> FixedInstances {
    FixedInstances(vec![(
        "/data/profiles".into(),
        vec![
            "three".into(),
            "Bad Name".into(),
            ".hidden".into(),
            "one".into(),
        ],
    )])
}

pub fn load_case(dir: &Path) -> Validated {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir.join("config"))
        .expect("config dir")
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name();
            (
                Path::new("/etc/svkit").join(&name),
                std::fs::read(e.path()).expect("read config"),
            )
        })
        .collect();
    files.sort();
    match load_layers(&files, &instances()) {
        Ok(v) => v,
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

pub fn case_env(dir: &Path) -> (RenderEnv, StartFacts) {
    let v: serde_json::Value = std::fs::read(dir.join("case.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).expect("case.json"))
        .unwrap_or(serde_json::json!({}));
    let s = |k: &str, d: Option<&str>| match v.get(k) {
        Some(serde_json::Value::Null) => None,
        Some(x) => x.as_str().map(String::from),
        None => d.map(String::from),
    };
    let env = RenderEnv {
        with_contenv: s("with_contenv", Some("/command/with-contenv")),
        s6_bin: s("s6_bin", Some("/command")),
        as_root: v.get("as_root").and_then(|x| x.as_bool()).unwrap_or(true),
    };
    let map = |k: &str| -> BTreeMap<String, serde_json::Value> {
        v.get(k)
            .and_then(|x| x.as_object())
            .map(|o| o.iter().map(|(a, b)| (a.clone(), b.clone())).collect())
            .unwrap_or_default()
    };
    let facts = StartFacts {
        env: map("env")
            .into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
            .collect(),
        remembered: map("remembered")
            .into_iter()
            .map(|(k, v)| (k, v.as_bool().unwrap_or(false)))
            .collect(),
    };
    (env, facts)
}

pub fn render_case(dir: &Path) -> (Validated, Vec<RenderedSlot>) {
    let v = load_case(dir);
    let (env, facts) = case_env(dir);
    let slots = render_all(&v.model, &env, &facts);
    (v, slots)
}

/// The golden tree of a case: relative path -> bytes, with a MANIFEST of
/// modes and owners and the list of warnings.
pub fn golden_tree(v: &Validated, slots: &[RenderedSlot]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut manifest = String::new();
    for s in slots {
        for f in &s.files {
            // Every rendered file is root's.
            manifest.push_str(&format!("{}/{} {:o} root\n", s.name, f.path, f.mode));
            out.insert(format!("{}/{}", s.name, f.path), f.contents.clone());
        }
    }
    out.insert("MANIFEST".into(), manifest.into_bytes());
    let warnings: String = v.warnings.iter().map(|w| format!("{w}\n")).collect();
    out.insert("WARNINGS".into(), warnings.into_bytes());
    out
}

/// Every file under `dir`, relative, with its bytes.
pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let (Ok(rel), Ok(b)) = (p.strip_prefix(base), std::fs::read(&p)) {
                out.insert(rel.to_string_lossy().into_owned(), b);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}
