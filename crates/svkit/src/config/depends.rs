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
/// deepest dependency. Starting goes up the depths, stopping down them.
pub fn depths(slots: &[Slot]) -> BTreeMap<String, usize> {
    let by_name: BTreeMap<&str, &Slot> = slots.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut depth: BTreeMap<String, usize> = BTreeMap::new();
    for name in start_order(slots) {
        let d = by_name.get(name).map_or(0, |s| {
            (s.depends_on.iter())
                .filter_map(|d| depth.get(&d.on).map(|x| x + 1))
                .max()
                .unwrap_or(0)
        });
        depth.insert(name.to_string(), d);
    }
    depth
}
