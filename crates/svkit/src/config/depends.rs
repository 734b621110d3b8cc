//! `depends_on`: which slots a slot waits for before it starts, resolved
//! once every slot is known. A key names a slot, or a template as declared
//! (`db-{instance}`), meaning each of its instances. Unknown names, a slot
//! depending on itself, `completed` of a slot that can never complete,
//! and cycles are errors at the key that says so.

use std::collections::{BTreeMap, BTreeSet};

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::model::{Condition, Dependency, Kind, OnCleanExit, Slot};
use super::parse::Layer;

/// Fills each slot's `depends_on` from its raw declaration.
pub fn resolve(layers: &[Layer], slots: &mut [Slot], diags: &mut Vec<Diagnostic>) {
    let names: BTreeSet<String> = slots.iter().map(|s| s.name.clone()).collect();
    let mut instances: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for s in slots.iter() {
        if s.instance.is_some() {
            instances
                .entry(s.origin.template.as_str())
                .or_default()
                .push(s.name.clone());
        }
    }
    let completes: BTreeSet<String> = slots
        .iter()
        .filter(|s| s.kind == Kind::Oneshot || s.restart.on_clean_exit == OnCleanExit::Stop)
        .map(|s| s.name.clone())
        .collect();
    let mut resolved: Vec<Vec<Dependency>> = Vec::with_capacity(slots.len());
    for s in slots.iter() {
        let Some((layer, raw)) = raw_of(layers, s) else {
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
                None if names.contains(key) => vec![key.clone()],
                None => {
                    diags.push(layer.diag(&at, format!("depends on undeclared slot `{key}`")));
                    continue;
                }
            };
            for on in targets {
                if on == s.name {
                    diags.push(layer.diag(&at, format!("slot `{on}` depends on itself")));
                } else if cond == Condition::Completed && !completes.contains(&on) {
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
    cycles(layers, slots, diags);
}

fn path(s: &Slot) -> FieldPath {
    FieldPath::root()
        .key("slots")
        .index(s.origin.index)
        .key("depends_on")
}

fn raw_of<'a>(layers: &'a [Layer], s: &Slot) -> Option<(&'a Layer, &'a BTreeMap<String, String>)> {
    let layer = layers.iter().find(|l| l.file == s.origin.file)?;
    let (_, raw) = layer.slots.iter().find(|(i, _)| *i == s.origin.index)?;
    Some((layer, raw.depends_on.as_ref()?))
}

fn condition(word: &str) -> Option<Condition> {
    match word {
        "up" => Some(Condition::Up),
        "ready" => Some(Condition::Ready),
        "completed" => Some(Condition::Completed),
        _ => None,
    }
}

/// Reports each slot on a cycle once, with the cycle spelled out.
fn cycles(layers: &[Layer], slots: &[Slot], diags: &mut Vec<Diagnostic>) {
    let by_name: BTreeMap<&str, &Slot> = slots.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut reported = BTreeSet::new();
    for start in slots {
        // Depth-first from `start`, looking for a way back to it.
        let mut stack: Vec<(&str, Vec<&str>)> =
            vec![(start.name.as_str(), vec![start.name.as_str()])];
        let mut seen = BTreeSet::new();
        while let Some((at, trail)) = stack.pop() {
            let Some(slot) = by_name.get(at) else {
                continue;
            };
            for d in &slot.depends_on {
                if d.on == start.name {
                    if reported.insert(start.name.clone()) {
                        let mut ring = trail.clone();
                        ring.push(&start.name);
                        if let Some((layer, _)) = raw_of(layers, start) {
                            diags.push(layer.diag(
                                &path(start),
                                format!("dependency cycle: {}", ring.join(" -> ")),
                            ));
                        }
                    }
                } else if seen.insert(d.on.as_str()) {
                    let mut next = trail.clone();
                    next.push(d.on.as_str());
                    stack.push((d.on.as_str(), next));
                }
            }
        }
    }
}

/// Slots in start order: every slot after what it depends on (ties in name
/// order). Stopping goes the other way. Slots on a cycle (refused by
/// validation) come last.
pub fn start_order(slots: &[Slot]) -> Vec<&str> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut order = Vec::with_capacity(slots.len());
    let mut left: Vec<&Slot> = slots.iter().collect();
    left.sort_by(|a, b| a.name.cmp(&b.name));
    while !left.is_empty() {
        let (ready, wait): (Vec<&Slot>, Vec<&Slot>) = left.iter().partition(|s| {
            s.depends_on
                .iter()
                .all(|d| done.contains(d.on.as_str()) || !slots.iter().any(|x| x.name == d.on))
        });
        if ready.is_empty() {
            order.extend(wait.iter().map(|s| s.name.as_str()));
            break;
        }
        for s in &ready {
            done.insert(s.name.as_str());
            order.push(s.name.as_str());
        }
        left = wait;
    }
    order
}

/// How deep each slot sits: 0 without dependencies, else one more than its
/// deepest dependency.
fn depths(slots: &[Slot]) -> BTreeMap<&str, usize> {
    let by_name: BTreeMap<&str, &Slot> = slots.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    for name in start_order(slots) {
        let d = by_name.get(name).map_or(0, |s| {
            (s.depends_on.iter())
                .filter_map(|d| depth.get(d.on.as_str()).map(|x| x + 1))
                .max()
                .unwrap_or(0)
        });
        depth.insert(name, d);
    }
    depth
}

/// How high each slot sits: 0 when no slot depends on it, else one more
/// than its highest dependent.
fn heights(slots: &[Slot]) -> BTreeMap<&str, usize> {
    let mut dependents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in slots {
        for d in &s.depends_on {
            dependents.entry(d.on.as_str()).or_default().push(&s.name);
        }
    }
    let mut height: BTreeMap<&str, usize> = BTreeMap::new();
    for name in start_order(slots).into_iter().rev() {
        let h = (dependents.get(name).into_iter().flatten())
            .filter_map(|d| height.get(d).map(|x| x + 1))
            .max()
            .unwrap_or(0);
        height.insert(name, h);
    }
    height
}

/// `names` in layers by `rank` (a name `slots` does not declare ranks 0),
/// lowest first, empty layers left out, each layer in `names`' order.
fn layers(names: &[String], rank: &BTreeMap<&str, usize>) -> Vec<Vec<String>> {
    let of = |n: &String| rank.get(n.as_str()).copied().unwrap_or(0);
    let max = names.iter().map(of).max().unwrap_or(0);
    (0..=max)
        .map(|r| names.iter().filter(|n| of(n) == r).cloned().collect())
        .filter(|l: &Vec<String>| !l.is_empty())
        .collect()
}

/// `names` in layers to start (or restart) them: a slot's dependencies in
/// an earlier layer than itself.
pub fn start_layers(slots: &[Slot], names: &[String]) -> Vec<Vec<String>> {
    layers(names, &depths(slots))
}

/// `names` in layers to stop them: the slots nothing depends on first,
/// then what only they depend on, and so on; a slot's dependents always in
/// an earlier layer than itself.
pub fn stop_layers(slots: &[Slot], names: &[String]) -> Vec<Vec<String>> {
    layers(names, &heights(slots))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load, FixedInstances};

    fn slots(json: &str) -> Vec<Slot> {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::write(t.path().join("10.json"), json).expect("write");
        load(t.path(), &FixedInstances::default())
            .expect("valid config")
            .model
            .slots
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// redis <- migrate <- web, and a worker nothing depends on and that
    /// depends on nothing.
    const CHAIN: &str = r#"{ "slots": [
        { "name": "web", "command": ["x"], "depends_on": { "migrate": "up" } },
        { "name": "worker", "command": ["x"] },
        { "name": "migrate", "command": ["x"], "depends_on": { "redis": "up" } },
        { "name": "redis", "command": ["x"] } ] }"#;

    #[test]
    fn start_layers_put_dependencies_first() {
        let s = slots(CHAIN);
        let all = names(&["migrate", "redis", "web", "worker"]);
        assert_eq!(
            start_layers(&s, &all),
            [
                names(&["redis", "worker"]),
                names(&["migrate"]),
                names(&["web"])
            ]
        );
        // Only the given names, ranked as in the whole graph.
        assert_eq!(
            start_layers(&s, &names(&["web", "redis"])),
            [names(&["redis"]), names(&["web"])]
        );
    }

    #[test]
    fn stop_layers_put_dependents_and_independents_first() {
        let s = slots(CHAIN);
        let all = names(&["migrate", "redis", "web", "worker"]);
        assert_eq!(
            stop_layers(&s, &all),
            [
                names(&["web", "worker"]),
                names(&["migrate"]),
                names(&["redis"])
            ]
        );
        // Not in the config (a foreign slot): nothing depends on it.
        assert_eq!(
            stop_layers(&s, &names(&["redis", "other"])),
            [names(&["other"]), names(&["redis"])]
        );
    }
}
