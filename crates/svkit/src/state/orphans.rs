//! Records in `state_dir` that the config no longer declares a name for:
//! what an image upgrade that renames a `remember` slot or a template
//! leaves behind. They are never read again (nothing of that name is
//! rendered), so they are named to operators (the boot hook, `svctl status`,
//! `svctl plan`) and removed only when one asks (`svctl forget`). The rule
//! of what counts as an orphan is [`orphans`], and only it.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::names::INSTANCE_VAR;
use crate::config::Model;

use super::{StateError, INSTANCES_DIR};

/// The dir under `state_dir` holding one file per remembered slot.
const DESIRED_DIR: &str = "desired";

/// What kind of record an orphan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OrphanKind {
    /// `desired/NAME`: the state an operator set for a `remember` slot.
    Remembered,
    /// `instances/NAME/`: the instances registered for a template.
    Registered,
}

/// One record whose name the config does not declare.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Orphan {
    /// The slot name (remembered) or the template name as declared
    /// (registered, e.g. `gw-{instance}`): what `svctl forget` takes.
    pub name: String,
    pub kind: OrphanKind,
    pub path: PathBuf,
    /// Registered: the instance names recorded, sorted.
    pub instances: Vec<String>,
}

impl Orphan {
    /// The record in the words of the note: `remembered state of rem`,
    /// `registered instances of gw-{instance} (eve, bob)`.
    pub fn describe(&self) -> String {
        match self.kind {
            OrphanKind::Remembered => format!("remembered state of {}", self.name),
            OrphanKind::Registered if self.instances.is_empty() => {
                format!("registered instances of {}", self.name)
            }
            OrphanKind::Registered => format!(
                "registered instances of {} ({})",
                self.name,
                self.instances.join(", ")
            ),
        }
    }
}

/// Whether the config declares `name`: a slot of that name, a template of
/// that name, or a name one of its templates could expand to. The last is
/// declared too: an instance found by `from_dir` may be gone today and
/// back tomorrow, and its remembered state must still be there.
pub fn declares(model: &Model, name: &str) -> bool {
    model.slot(name).is_some()
        || model.templates.iter().any(|t| {
            t.name == name
                || t.name.split_once(INSTANCE_VAR).is_some_and(|(pre, post)| {
                    name.len() > pre.len() + post.len()
                        && name.starts_with(pre)
                        && name.ends_with(post)
                })
        })
}

/// The entries of `dir` an operator or svkit could have recorded (dot
/// names are svkit's temp files); a missing dir has none.
fn entries(dir: &Path) -> Result<Vec<(String, fs::FileType)>, StateError> {
    if super::lstat(dir)?.is_none() {
        return Ok(Vec::new());
    }
    let io = super::io(dir);
    let mut out = Vec::new();
    for e in fs::read_dir(dir).map_err(&io)? {
        let e = e.map_err(&io)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        out.push((name, e.file_type().map_err(&io)?));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Every record under the model's `state_dir` whose name it does not
/// declare ([`declares`]): remembered states first, then registered
/// instances, each sorted by name. A template dir with nothing in it is
/// no record.
pub fn orphans(model: &Model) -> Result<Vec<Orphan>, StateError> {
    let sd = Path::new(&model.state_dir);
    let mut out = Vec::new();
    let desired = sd.join(DESIRED_DIR);
    for (name, _) in entries(&desired)? {
        if !declares(model, &name) {
            out.push(Orphan {
                path: desired.join(&name),
                name,
                kind: OrphanKind::Remembered,
                instances: Vec::new(),
            });
        }
    }
    let registered = sd.join(INSTANCES_DIR);
    for (name, ty) in entries(&registered)? {
        if model.templates.iter().any(|t| t.name == name) {
            continue;
        }
        let path = registered.join(&name);
        // A symlink or a file here is no template dir: a record all the
        // same, left for `forget` to remove (never followed).
        let instances = if ty.is_dir() {
            entries(&path)?.into_iter().map(|(n, _)| n).collect()
        } else {
            Vec::new()
        };
        if ty.is_dir() && instances.is_empty() {
            continue;
        }
        out.push(Orphan {
            name,
            kind: OrphanKind::Registered,
            path,
            instances,
        });
    }
    Ok(out)
}

/// The one line naming every orphan and how to clean them; `None` when
/// there are none.
pub fn note(orphans: &[Orphan]) -> Option<String> {
    if orphans.is_empty() {
        return None;
    }
    let list: Vec<String> = orphans.iter().map(Orphan::describe).collect();
    let names: Vec<&str> = orphans.iter().map(|o| o.name.as_str()).collect();
    Some(format!(
        "state_dir keeps records of names the config no longer declares: {}; `svctl forget {}` (or `svctl forget --all`) removes them",
        list.join("; "),
        names.join(" ")
    ))
}

/// The `orphans` array of `svctl status --json` and `svctl plan --json`.
pub fn orphans_json(orphans: &[Orphan]) -> Value {
    // Names and paths are UTF-8 (the config's and `state_dir`'s): this
    // cannot fail.
    serde_json::to_value(orphans).unwrap_or_default()
}

/// Removes the record; never follows a symlink (`remove_dir_all` removes
/// a symlink it meets, not what it points to).
pub fn forget(orphan: &Orphan) -> Result<(), StateError> {
    let io = super::io(&orphan.path);
    match fs::symlink_metadata(&orphan.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(e)),
        Ok(m) if m.is_dir() => fs::remove_dir_all(&orphan.path).map_err(&io),
        Ok(_) => fs::remove_file(&orphan.path).map_err(&io),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{register, write_desired, Desired};

    /// A valid config declaring `slots` (plain) and `templates` (with no
    /// instances), its `state_dir` at `sd`.
    fn model(sd: &Path, slots: &[&str], templates: &[&str]) -> Model {
        let decl: Vec<String> = (slots.iter())
            .map(|s| format!(r#"{{"name": "{s}", "command": ["x"]}}"#))
            .chain(templates.iter().map(|t| {
                format!(r#"{{"name": "{t}", "instances": {{"names": []}}, "command": ["x"]}}"#)
            }))
            .collect();
        crate::config::test_model(&format!(
            r#"{{"state_dir": "{}", "slots": [{}]}}"#,
            sd.display(),
            decl.join(", ")
        ))
    }

    #[test]
    fn only_undeclared_names_are_orphans() {
        let t = tempfile::tempdir().expect("tempdir");
        let sd = t.path();
        for s in ["keep", "gone", "gw-eve"] {
            write_desired(sd, s, Desired::Up, None).expect("write");
        }
        register(sd, "gw-{instance}", "eve", None).expect("register");
        register(sd, "old-{instance}", "b", None).expect("register");
        register(sd, "old-{instance}", "a", None).expect("register");
        fs::create_dir_all(sd.join("instances/empty-{instance}")).expect("mkdir");
        let m = model(sd, &["keep"], &["gw-{instance}"]);
        let found = orphans(&m).expect("orphans");
        let names: Vec<(&str, OrphanKind, Vec<String>)> = found
            .iter()
            .map(|o| (o.name.as_str(), o.kind, o.instances.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("gone", OrphanKind::Remembered, vec![]),
                (
                    "old-{instance}",
                    OrphanKind::Registered,
                    vec!["a".to_string(), "b".to_string()]
                ),
            ]
        );
        let line = note(&found).expect("a note");
        assert!(
            line.contains(
                "remembered state of gone; registered instances of old-{instance} (a, b)"
            ) && line.contains("`svctl forget gone old-{instance}`"),
            "{line}"
        );
        for o in &found {
            forget(o).expect("forget");
        }
        assert!(orphans(&m).expect("orphans").is_empty());
        assert!(sd.join("desired/keep").is_file() && sd.join("desired/gw-eve").is_file());
        assert!(sd.join("instances/gw-{instance}/eve").is_file());
    }

    #[test]
    fn nothing_recorded_is_no_orphan_and_a_planted_symlink_is_not_followed() {
        let t = tempfile::tempdir().expect("tempdir");
        let m = model(t.path(), &[], &[]);
        assert!(orphans(&m).expect("orphans").is_empty());
        assert_eq!(note(&[]), None);
        let elsewhere = t.path().join("elsewhere");
        fs::create_dir_all(elsewhere.join("x")).expect("mkdir");
        fs::create_dir_all(t.path().join(INSTANCES_DIR)).expect("mkdir");
        std::os::unix::fs::symlink(&elsewhere, t.path().join("instances/planted"))
            .expect("symlink");
        let found = orphans(&m).expect("orphans");
        assert_eq!(found.len(), 1);
        forget(&found[0]).expect("forget");
        assert!(elsewhere.join("x").is_dir(), "followed the symlink");
        assert!(orphans(&m).expect("orphans").is_empty());
    }

    #[test]
    fn a_name_a_template_could_expand_to_is_declared() {
        let t = tempfile::tempdir().expect("tempdir");
        let m = model(t.path(), &["a"], &["gw-{instance}-x"]);
        assert!(declares(&m, "a"));
        assert!(declares(&m, "gw-{instance}-x"));
        assert!(declares(&m, "gw-e-x"));
        assert!(!declares(&m, "gw--x"));
        assert!(!declares(&m, "gw-e"));
        assert!(!declares(&m, "b"));
    }
}
