//! The dependency graph: cycles, shown one ring a slot, and the start
//! order that puts every slot after what it depends on.

use std::collections::{HashMap, VecDeque};

use super::{path, Raws};
use crate::config::error::Diagnostic;
use crate::config::model::Slot;

/// Past this many slots a cycle is shown by its ends and its length: the
/// error stays one readable line, and its size does not grow with the
/// square of the cycle's.
const RING_SHOWN: usize = 12;

/// Reports each slot on a cycle once, with the cycle spelled out.
/// Slots on a cycle are those of a strongly connected component of more
/// than one slot (a slot depending on itself was refused already, without
/// an edge); each one's ring is the shortest way back to it inside its
/// component.
pub(super) fn cycles(raws: &Raws, slots: &[Slot], diags: &mut Vec<Diagnostic>) {
    let graph = Graph::new(slots);
    let comp = graph.components();
    let mut size = vec![0usize; slots.len()];
    for &c in &comp {
        size[c] += 1;
    }
    for (i, s) in slots.iter().enumerate() {
        if size[comp[i]] < 2 {
            continue;
        }
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
        if let Some(layer) = raws.layer(s) {
            diags.push(layer.diag(&path(s), format!("dependency cycle: {shown}")));
        }
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
pub(super) struct Graph {
    adj: Vec<Vec<usize>>,
}

impl Graph {
    pub(super) fn new(slots: &[Slot]) -> Graph {
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
    pub(super) fn components(&self) -> Vec<usize> {
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

/// Slots in start order: every slot after what it depends on (ties in name
/// order). Stopping goes the other way. Slots on a cycle (refused by
/// validation) come last.
pub fn start_order(slots: &[Slot]) -> Vec<&str> {
    let graph = Graph::new(slots);
    // A slot's round is one more than its latest dependency's: counted
    // from the slots nothing holds back, each edge looked at once.
    let mut waiting: Vec<usize> = graph.adj.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); slots.len()];
    for (i, deps) in graph.adj.iter().enumerate() {
        for &d in deps {
            dependents[d].push(i);
        }
    }
    let mut round = vec![0usize; slots.len()];
    let mut queue: VecDeque<usize> = (0..slots.len()).filter(|&i| waiting[i] == 0).collect();
    let mut placed = Vec::with_capacity(slots.len());
    while let Some(i) = queue.pop_front() {
        placed.push(i);
        for &k in &dependents[i] {
            round[k] = round[k].max(round[i] + 1);
            waiting[k] -= 1;
            if waiting[k] == 0 {
                queue.push_back(k);
            }
        }
    }
    let mut stuck: Vec<usize> = (0..slots.len()).filter(|&i| waiting[i] > 0).collect();
    placed.sort_by(|&a, &b| (round[a], &slots[a].name).cmp(&(round[b], &slots[b].name)));
    stuck.sort_by(|&a, &b| slots[a].name.cmp(&slots[b].name));
    (placed.into_iter().chain(stuck))
        .map(|i| slots[i].name.as_str())
        .collect()
}
