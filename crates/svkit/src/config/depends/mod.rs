//! `depends_on`: which slots a slot waits for before it starts, resolved
//! once every slot is known. A key names a slot, or a template as declared
//! (`db-{instance}`), meaning each of its instances. Unknown names, a slot
//! depending on itself, `completed` of a slot that can never complete,
//! and cycles are errors at the key that says so.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

mod graph;
mod layers;
#[cfg(test)]
mod tests;

pub use graph::{cycle, start_order};
pub use layers::{start_layers, stop_layers};

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::model::{Condition, Dependency, Kind, OnCleanExit, Slot};
use super::parse::Layer;

/// Fills each slot's `depends_on` from its raw declaration. `declared`
/// names every slot declared, the invalid ones too: depending on one of
/// those is left to that slot's own errors.
pub fn resolve(
    layers: &[Layer],
    slots: &mut [Slot],
    declared: &HashSet<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    let names: BTreeSet<&str> = slots.iter().map(|s| s.name.as_str()).collect();
    let mut instances: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for s in slots.iter() {
        if s.instance.is_some() {
            instances
                .entry(s.origin.template.as_str())
                .or_default()
                .push(s.name.clone());
        }
    }
    let completes: BTreeSet<&str> = slots
        .iter()
        .filter(|s| s.kind == Kind::Oneshot || s.restart.on_clean_exit == OnCleanExit::Stop)
        .map(|s| s.name.as_str())
        .collect();
    let raws = Raws::new(layers);
    let mut resolved: Vec<Vec<Dependency>> = Vec::with_capacity(slots.len());
    for s in slots.iter() {
        let Some((layer, raw)) = raws.of(s) else {
            resolved.push(Vec::new());
            continue;
        };
        let mut deps = Vec::new();
        for (key, word) in raw {
            let at = path(s).key(key.clone());
            let Some(cond) = condition(word) else {
                diags.push(layer.diag(
                    &at,
                    format!("`{word}`: expected \"up\", \"ready\" or \"completed\""),
                ));
                continue;
            };
            let targets = match instances.get(key.as_str()) {
                Some(all) => all.clone(),
                None if names.contains(key.as_str()) => vec![key.clone()],
                None if declared.contains(key.as_str()) => continue,
                None => {
                    diags.push(layer.diag(&at, format!("depends on undeclared slot `{key}`")));
                    continue;
                }
            };
            for on in targets {
                if on == s.name {
                    diags.push(layer.diag(&at, format!("slot `{on}` depends on itself")));
                } else if cond == Condition::Completed && !completes.contains(on.as_str()) {
                    diags.push(layer.diag(
                        &at,
                        format!("`{on}` never completes: `completed` needs a oneshot (or on_clean_exit: \"stop\")"),
                    ));
                } else {
                    deps.push(Dependency {
                        on,
                        condition: cond,
                    });
                }
            }
        }
        resolved.push(deps);
    }
    for (s, deps) in slots.iter_mut().zip(resolved) {
        s.depends_on = deps;
    }
    graph::cycles(&raws, slots, diags);
}

pub(super) fn path(s: &Slot) -> FieldPath {
    FieldPath::root()
        .key("slots")
        .index(s.origin.index)
        .key("depends_on")
}

/// Each slot's raw `depends_on` by where it was declared: looked up once
/// per slot, so a config of thousands of slots is not searched thousands
/// of times. By file (a config has a few), then by the slot's index in the
/// file's `slots`: hashing a path for every slot cost more than the rest.
pub(super) struct Raws<'a> {
    files: Vec<(&'a Path, Vec<Option<Origin<'a>>>)>,
}

type RawDeps = BTreeMap<String, String>;

type Origin<'a> = (&'a Layer, Option<&'a RawDeps>);

impl<'a> Raws<'a> {
    fn new(layers: &'a [Layer]) -> Self {
        let mut files: Vec<(&Path, Vec<Option<Origin>>)> = Vec::new();
        for l in layers {
            let at = match files.iter().position(|(f, _)| *f == l.file.as_path()) {
                Some(at) => at,
                None => {
                    files.push((l.file.as_path(), Vec::with_capacity(l.slots.len())));
                    files.len() - 1
                }
            };
            let by_index = &mut files[at].1;
            for (i, raw) in &l.slots {
                if by_index.len() <= *i {
                    by_index.resize(*i + 1, None);
                }
                // The first layer of a file name wins, as a search in
                // layer order would find it.
                by_index[*i].get_or_insert((l, raw.depends_on.as_ref()));
            }
        }
        Raws { files }
    }

    fn get(&self, s: &Slot) -> Option<&Origin<'a>> {
        let (_, by_index) = (self.files.iter()).find(|(f, _)| *f == s.origin.file.as_path())?;
        by_index.get(s.origin.index)?.as_ref()
    }

    pub(super) fn layer(&self, s: &Slot) -> Option<&'a Layer> {
        self.get(s).map(|(l, _)| *l)
    }

    fn of(&self, s: &Slot) -> Option<(&'a Layer, &'a RawDeps)> {
        let (l, raw) = self.get(s)?;
        Some((l, (*raw)?))
    }
}

fn condition(word: &str) -> Option<Condition> {
    match word {
        "up" => Some(Condition::Up),
        "ready" => Some(Condition::Ready),
        "completed" => Some(Condition::Completed),
        _ => None,
    }
}
