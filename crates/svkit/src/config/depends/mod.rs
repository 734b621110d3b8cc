//! `depends_on`: which slots a slot waits for before it starts, resolved
//! once every slot is known. A key names a slot, or a template as declared
//! (`db-{instance}`), meaning each of its instances. Unknown names, a slot
//! depending on itself, `completed` of a slot that can never complete,
//! and cycles are errors at the key that says so.
//!
//! Then the dependency graph: cycles, shown one ring a slot; the start
//! order that puts every slot after what it depends on; and slots in
//! layers to start or stop them together, a layer waiting for the one
//! before it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

#[cfg(test)]
mod tests;

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::model::{Condition, Dependency, Kind, OnCleanExit, Slot};
use super::names::one_of;
use super::parse::Layer;
use super::raw::RawSlot;

/// Fills each slot's `depends_on` from its raw declaration, `decl[i]`
/// for `slots[i]`. `declared` names every slot declared, the invalid ones
/// too: depending on one of those is left to that slot's own errors.
pub(super) fn resolve(
    decl: &[(&Layer, &RawSlot)],
    slots: &mut [Slot],
    declared: &HashSet<&str>,
    diags: &mut Vec<Diagnostic>,
) {
    let names: BTreeSet<&str> = slots.iter().map(|s| s.name.as_str()).collect();
    let mut instances: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for s in slots.iter().filter(|s| s.instance.is_some()) {
        let all = instances.entry(s.origin.template.as_str()).or_default();
        all.push(s.name.clone());
    }
    let completes: BTreeSet<&str> = slots
        .iter()
        // A job runs again at its next tick: it never completes.
        .filter(|s| s.schedule.is_none())
        .filter(|s| s.kind == Kind::Oneshot || s.restart.on_clean_exit == OnCleanExit::Stop)
        .map(|s| s.name.as_str())
        .collect();
    let mut resolved: Vec<Vec<Dependency>> = Vec::with_capacity(slots.len());
    for (s, (layer, raw)) in slots.iter().zip(decl) {
        let mut deps = Vec::new();
        for (key, word) in raw.depends_on.iter().flatten() {
            let at = path(s).key(key.clone());
            let words = [
                ("up", Condition::Up),
                ("ready", Condition::Ready),
                ("completed", Condition::Completed),
            ];
            let cond = match one_of(word, &words) {
                Ok(c) => c,
                Err(e) => {
                    diags.push(layer.diag(&at, e));
                    continue;
                }
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
    cycles(decl, slots, diags);
}

fn path(s: &Slot) -> FieldPath {
    FieldPath::root()
        .key("slots")
        .index(s.origin.index)
        .key("depends_on")
}

/// Past this many slots a cycle is shown by its ends and its length: the
/// error stays one readable line, and its size does not grow with the
/// square of the cycle's.
const RING_SHOWN: usize = 12;

/// Reports each slot on a cycle once, with the cycle spelled out.
/// Slots on a cycle are those of a strongly connected component of more
/// than one slot (a slot depending on itself was refused already, without
/// an edge); each one's ring is the shortest way back to it inside its
/// component.
fn cycles(decl: &[(&Layer, &RawSlot)], slots: &[Slot], diags: &mut Vec<Diagnostic>) {
    let graph = Graph::new(slots);
    let comp = graph.components();
    for (i, (s, (layer, _))) in slots.iter().zip(decl).enumerate() {
        let Some(ring) = graph.ring(i, &comp) else {
            continue;
        };
        let names: Vec<&str> = ring.iter().map(|&j| slots[j].name.as_str()).collect();
        let shown = if names.len() > RING_SHOWN {
            let head = names[..RING_SHOWN - 2].join(" -> ");
            let tail = names[names.len() - 2..].join(" -> ");
            format!("{head} -> ... -> {tail} ({} slots)", names.len() - 1)
        } else {
            names.join(" -> ")
        };
        diags.push(layer.diag(&path(s), format!("dependency cycle: {shown}")));
    }
}

/// A cycle of the directed graph `adj` (a node's edges by index): the
/// first node on one, and its shortest way back to itself (the node at
/// both ends). The import refuses an s6-rc tree with it.
pub fn cycle(adj: Vec<Vec<usize>>) -> Option<Vec<usize>> {
    let graph = Graph { adj };
    let comp = graph.components();
    (0..graph.adj.len()).find_map(|i| graph.ring(i, &comp))
}

/// The dependency edges by slot index (unknown names left out).
struct Graph {
    adj: Vec<Vec<usize>>,
}

impl Graph {
    fn new(slots: &[Slot]) -> Graph {
        let idx: HashMap<&str, usize> = (slots.iter().enumerate())
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let adj = (slots.iter())
            .map(|s| {
                (s.depends_on.iter())
                    .filter_map(|d| idx.get(d.on.as_str()).copied())
                    .collect()
            })
            .collect();
        Graph { adj }
    }

    /// Tarjan's strongly connected components, without recursion (a chain
    /// of thousands would overflow the stack): each slot's component id.
    fn components(&self) -> Vec<usize> {
        const UNSEEN: usize = usize::MAX;
        let n = self.adj.len();
        let (mut index, mut low, mut comp) = (vec![UNSEEN; n], vec![0; n], vec![UNSEEN; n]);
        let (mut on_stack, mut stack) = (vec![false; n], Vec::new());
        let (mut next, mut comps) = (0, 0);
        for root in 0..n {
            if index[root] != UNSEEN {
                continue;
            }
            // (node, how many of its edges are done)
            let mut work = vec![(root, 0usize)];
            while let Some(&mut (v, ref mut e)) = work.last_mut() {
                if *e == 0 && index[v] == UNSEEN {
                    index[v] = next;
                    low[v] = next;
                    next += 1;
                    stack.push(v);
                    on_stack[v] = true;
                }
                if let Some(&w) = self.adj[v].get(*e) {
                    *e += 1;
                    if index[w] == UNSEEN {
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = comps;
                        if w == v {
                            break;
                        }
                    }
                    comps += 1;
                }
            }
        }
        comp
    }

    /// The shortest way from `start` back to itself inside its component,
    /// `start` at both ends.
    fn ring(&self, start: usize, comp: &[usize]) -> Option<Vec<usize>> {
        let mut prev = vec![usize::MAX; self.adj.len()];
        let mut queue = VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for &w in &self.adj[v] {
                if comp[w] != comp[start] {
                    continue;
                }
                if w == start {
                    let mut ring = vec![v];
                    let mut at = v;
                    while at != start {
                        at = *prev.get(at)?;
                        ring.push(at);
                    }
                    ring.reverse();
                    ring.push(start);
                    return Some(ring);
                }
                if prev[w] == usize::MAX {
                    prev[w] = v;
                    queue.push_back(w);
                }
            }
        }
        None
    }
}

/// Kahn's walk of `adj` (each slot's edges to those it waits for), each
/// edge looked at once: each slot's round, one more than the latest round
/// of those it waits for (0: none), and how many of them a cycle holds
/// back (not 0: the slot is on or behind a cycle).
fn rounds(adj: &[Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut waiting: Vec<usize> = adj.iter().map(Vec::len).collect();
    let mut round = vec![0usize; adj.len()];
    let mut queue: VecDeque<usize> = (0..adj.len()).filter(|&i| waiting[i] == 0).collect();
    let dependents = reversed(adj);
    while let Some(i) = queue.pop_front() {
        for &k in &dependents[i] {
            round[k] = round[k].max(round[i] + 1);
            waiting[k] -= 1;
            if waiting[k] == 0 {
                queue.push_back(k);
            }
        }
    }
    (round, waiting)
}

/// The edges of `adj` the other way.
fn reversed(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); adj.len()];
    for (i, deps) in adj.iter().enumerate() {
        for &d in deps {
            out[d].push(i);
        }
    }
    out
}

/// Slots in start order: every slot after what it depends on (ties in name
/// order). Stopping goes the other way. Slots on a cycle (refused by
/// validation) come last.
pub fn start_order(slots: &[Slot]) -> Vec<&str> {
    let (round, waiting) = rounds(&Graph::new(slots).adj);
    let mut order: Vec<usize> = (0..slots.len()).collect();
    order.sort_by_key(|&i| match waiting[i] {
        0 => (false, round[i], &slots[i].name),
        _ => (true, 0, &slots[i].name),
    });
    order.into_iter().map(|i| slots[i].name.as_str()).collect()
}

/// `names` in layers by `round` (of `slots`' indexes; a name `slots` does
/// not declare is in round 0), lowest first, empty layers left out, each
/// layer in `names`' order.
fn layers(slots: &[Slot], names: &[String], round: &[usize]) -> Vec<Vec<String>> {
    let idx: HashMap<&str, usize> = (slots.iter().enumerate())
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let of = |n: &String| idx.get(n.as_str()).map_or(0, |&i| round[i]);
    let max = names.iter().map(of).max().unwrap_or(0);
    (0..=max)
        .map(|r| names.iter().filter(|n| of(n) == r).cloned().collect())
        .filter(|l: &Vec<String>| !l.is_empty())
        .collect()
}

/// `names` in layers to start (or restart) them: a slot's dependencies in
/// an earlier layer than itself, by depth: 0 without dependencies, else
/// one more than its deepest dependency.
pub fn start_layers(slots: &[Slot], names: &[String]) -> Vec<Vec<String>> {
    layers(slots, names, &rounds(&Graph::new(slots).adj).0)
}

/// `names` in layers to stop them: the slots nothing depends on first,
/// then what only they depend on, and so on; a slot's dependents always in
/// an earlier layer than itself, by height: 0 when no slot depends on it,
/// else one more than its highest dependent.
pub fn stop_layers(slots: &[Slot], names: &[String]) -> Vec<Vec<String>> {
    layers(slots, names, &rounds(&reversed(&Graph::new(slots).adj)).0)
}
