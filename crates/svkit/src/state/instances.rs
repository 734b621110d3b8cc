//! Instances registered at runtime (`svctl register NAME`): one empty file
//! per instance, `<state_dir>/instances/<template>/<name>`, where
//! `<template>` is the declared slot name with `{instance}` in it (e.g.
//! `gateway-{instance}`). Like desired states they live under `state_dir`,
//! so they survive container restarts.
//!
//! [`load_config`] is the config loader reconcile uses: it loads the config
//! dir and, when instances are registered, loads it again with those names
//! appended to their template's `instances.names`. Registered instances can
//! never make a valid config invalid: if the second load fails (a name that
//! collides with another slot, say), the first one is used with a warning.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::config::{self, names, FsInstances, LoadError, Validated, Warning};

use super::StateError;

/// The dir under `state_dir` holding one dir per template.
pub const INSTANCES_DIR: &str = "instances";

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Io { path, source }
}

fn template_dir(state_dir: &Path, template: &str) -> PathBuf {
    state_dir.join(INSTANCES_DIR).join(template)
}

/// Registered instance names per template, sorted. A missing dir is empty;
/// entries that are not plain files or not valid names are skipped with a
/// warning (hand-planted files must never stop a boot).
pub fn registered(
    state_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, Vec<String>>, StateError> {
    let base = state_dir.join(INSTANCES_DIR);
    let mut out = BTreeMap::new();
    let rd = match fs::read_dir(&base) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(&base)(e)),
    };
    for t in rd {
        let t = t.map_err(io(&base))?;
        let Ok(template) = t.file_name().into_string() else {
            continue;
        };
        if template.starts_with('.') || !t.file_type().map_err(io(&base))?.is_dir() {
            continue;
        }
        let dir = t.path();
        let mut names = Vec::new();
        for e in fs::read_dir(&dir).map_err(io(&dir))? {
            let e = e.map_err(io(&dir))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let plain = e.file_type().map_err(io(&dir))?.is_file();
            match names::check_instance_name(&name) {
                Ok(()) if plain => names.push(name),
                Ok(()) => warnings.push(format!(
                    "ignoring registered instance {}: not a regular file",
                    e.path().display()
                )),
                Err(why) => warnings.push(format!(
                    "ignoring registered instance {}: {why}",
                    e.path().display()
                )),
            }
        }
        names.sort();
        if !names.is_empty() {
            out.insert(template, names);
        }
    }
    Ok(out)
}

/// Whether `name` is registered for `template`.
pub fn is_registered(state_dir: &Path, template: &str, name: &str) -> bool {
    fs::symlink_metadata(template_dir(state_dir, template).join(name))
        .is_ok_and(|m| m.file_type().is_file())
}

/// Records `name` as an instance of `template`; `Ok(false)` when it already
/// was. `owner` (uid, gid) owns the dirs created, like desired states.
pub fn register(
    state_dir: &Path,
    template: &str,
    name: &str,
    owner: Option<(u32, u32)>,
) -> Result<bool, StateError> {
    let base = state_dir.join(INSTANCES_DIR);
    let dir = template_dir(state_dir, template);
    super::ensure_dirs(&[state_dir, base.as_path(), dir.as_path()], owner)?;
    let path = dir.join(name);
    // Created with the owner's filesystem identity: the dirs are theirs, so
    // a symlink they swap in must not let root create a file elsewhere.
    let created = crate::fsutil::as_owner(owner, || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
    });
    match created {
        Ok(f) => {
            f.sync_all().map_err(io(&path))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_file() => Ok(false),
                _ => Err(StateError::Corrupt { path }),
            }
        }
        Err(e) => Err(io(&path)(e)),
    }
}

/// Forgets `name`; `Ok(false)` when it was not registered.
pub fn unregister(state_dir: &Path, template: &str, name: &str) -> Result<bool, StateError> {
    let path = template_dir(state_dir, template).join(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(&path)(e)),
    }
}

/// The config layers with registered names appended to the `instances.names`
/// of the slot whose `name` is their template. Layers without such a slot
/// are returned unchanged (byte for byte).
pub fn inject(
    layers: &[(PathBuf, Vec<u8>)],
    registered: &BTreeMap<String, Vec<String>>,
) -> Vec<(PathBuf, Vec<u8>)> {
    use serde_json::Value;
    layers
        .iter()
        .map(|(path, bytes)| {
            let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else {
                return (path.clone(), bytes.clone());
            };
            let mut touched = false;
            let slots = v.get_mut("slots").and_then(Value::as_array_mut);
            for slot in slots.into_iter().flatten() {
                let Some(names) = slot
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(|n| registered.get(n))
                else {
                    continue;
                };
                let Some(inst) = slot.get_mut("instances").and_then(Value::as_object_mut) else {
                    continue;
                };
                let list = inst
                    .entry("names")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Some(list) = list.as_array_mut() {
                    for n in names {
                        if !list.iter().any(|x| x.as_str() == Some(n)) {
                            list.push(Value::String(n.clone()));
                            touched = true;
                        }
                    }
                }
            }
            match touched.then(|| serde_json::to_vec_pretty(&v)) {
                Some(Ok(b)) => (path.clone(), b),
                _ => (path.clone(), bytes.clone()),
            }
        })
        .collect()
}

/// Loads the config dir including registered instances (see the module
/// doc). The returned warnings include the config's own.
pub fn load_config(config_dir: &Path) -> Result<Validated, LoadError> {
    let layers = config::read_layers(config_dir)?;
    let mut first = config::load_layers(&layers, &FsInstances)?;
    let mut notes = Vec::new();
    let reg = match registered(Path::new(&first.model.state_dir), &mut notes) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("registered instances ignored: {e}"));
            BTreeMap::new()
        }
    };
    let mut out = if reg.is_empty() {
        first
    } else {
        match config::load_layers(&inject(&layers, &reg), &FsInstances) {
            Ok(v) => v,
            Err(e) => {
                let why = e.to_string().replace('\n', "; ");
                first.warnings.push(Warning {
                    message: format!("registered instances ignored: {why}"),
                });
                first
            }
        }
    };
    out.warnings
        .extend(notes.into_iter().map(|message| Warning { message }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = r#"{
  "state_dir": "STATE",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["default"] }, "command": ["x"] },
    { "name": "bare-{instance}", "instances": { }, "command": ["x"] },
    { "name": "plain", "command": ["x"] }
  ]
}"#;

    fn names(v: &Validated) -> Vec<String> {
        v.model.slots.iter().map(|s| s.name.clone()).collect()
    }

    #[test]
    fn registered_instances_join_their_template() {
        let t = tempfile::tempdir().expect("tempdir");
        let state = t.path().join("state");
        let cfg = t.path().join("cfg");
        fs::create_dir(&cfg).expect("mkdir");
        let body = CFG.replace("STATE", &state.display().to_string());
        fs::write(cfg.join("10.json"), body).expect("write");
        let v = load_config(&cfg).expect("load");
        assert_eq!(names(&v), ["gw-default", "plain"]);

        assert!(register(&state, "gw-{instance}", "eve", None).expect("reg"));
        assert!(!register(&state, "gw-{instance}", "eve", None).expect("reg"));
        assert!(register(&state, "bare-{instance}", "one", None).expect("reg"));
        assert!(register(&state, "gw-{instance}", "default", None).expect("reg"));
        let v = load_config(&cfg).expect("load");
        assert_eq!(names(&v), ["gw-default", "gw-eve", "bare-one", "plain"]);
        assert!(v.warnings.is_empty(), "{:?}", v.warnings);

        assert!(unregister(&state, "gw-{instance}", "eve").expect("unreg"));
        assert!(!unregister(&state, "gw-{instance}", "eve").expect("unreg"));
        assert!(!is_registered(&state, "gw-{instance}", "eve"));
        let v = load_config(&cfg).expect("load");
        assert_eq!(names(&v), ["gw-default", "bare-one", "plain"]);
    }

    #[test]
    fn bad_registrations_never_break_the_config() {
        let t = tempfile::tempdir().expect("tempdir");
        let state = t.path().join("state");
        let cfg = t.path().join("cfg");
        fs::create_dir(&cfg).expect("mkdir");
        let body = CFG
            .replace("STATE", &state.display().to_string())
            .replace("\"plain\"", "\"gw-eve\"");
        fs::write(cfg.join("10.json"), body).expect("write");
        let dir = state.join(INSTANCES_DIR).join("gw-{instance}");
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join("Bad Name"), "").expect("write");
        // Collides with the literal slot gw-eve: the registration is ignored.
        fs::write(dir.join("eve"), "").expect("write");
        let v = load_config(&cfg).expect("load");
        assert_eq!(names(&v), ["gw-default", "gw-eve"]);
        assert_eq!(v.warnings.len(), 2, "{:?}", v.warnings);
    }
}
