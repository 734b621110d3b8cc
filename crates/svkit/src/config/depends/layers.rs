//! Slots in layers to start or stop them together: a layer waits for the
//! one before it.

use std::collections::BTreeMap;

use super::graph::start_order;
use crate::config::model::Slot;

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
