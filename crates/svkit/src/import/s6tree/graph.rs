//! The graph of an s6-rc source dir: bundles (pipelines included) and the
//! services they stand for, what starts at boot, and cycles.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::super::common::error;
use super::rc::{Def, Kind, BOOT_BUNDLES};
use crate::import::ImportError;

/// Every bundle by name: the `bundle` definitions and the pipelines a last
/// consumer names with `pipeline-name`. A cycle of bundles is an error.
pub(super) fn bundles(
    path: &Path,
    defs: &[Def],
    index: &HashMap<&str, usize>,
) -> Result<HashMap<String, Vec<String>>, ImportError> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for d in defs.iter().filter(|d| d.kind == Kind::Bundle) {
        out.insert(d.name.clone(), d.contents.clone());
    }
    for d in defs {
        let Some(p) = &d.pipeline_name else { continue };
        if d.consumer_for.is_empty() || d.producer_for.is_some() {
            continue; // s6-rc ignores it on anything but a last consumer
        }
        if index.contains_key(p.as_str()) || out.contains_key(p) {
            return Err(error(
                &d.dir.join("pipeline-name"),
                format!("`{p}` is already a service or bundle (s6-rc-compile refuses it too)"),
            ));
        }
        let mut members = Vec::new();
        let mut stack = vec![d.name.clone()];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            if let Some(&i) = index.get(n.as_str()) {
                stack.extend(defs[i].consumer_for.iter().cloned());
            }
            members.push(n);
        }
        out.insert(p.clone(), members);
    }
    let names: Vec<&String> = out.keys().collect();
    let at: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            out[*n]
                .iter()
                .filter_map(|m| at.get(m.as_str()).copied())
                .collect()
        })
        .collect();
    if let Some(cycle) = find_cycle(&edges) {
        let cycle: Vec<&str> = cycle.iter().map(|&i| names[i].as_str()).collect();
        return Err(error(
            path,
            format!(
                "bundle cycle {} (s6-rc-compile refuses it too)",
                cycle.join(" -> ")
            ),
        ));
    }
    Ok(out)
}

/// The services `name` stands for: itself, or a bundle's services, each
/// once; `None` for a name defined nowhere in the tree.
pub(super) fn expand(
    name: &str,
    index: &HashMap<&str, usize>,
    bundles: &HashMap<String, Vec<String>>,
) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut stack = vec![name];
    let mut seen = HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        if let Some(members) = bundles.get(n) {
            stack.extend(members.iter().rev().map(String::as_str));
        } else {
            let i = index.get(n).copied();
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}

/// What s6-overlay starts at boot: the boot bundles' services and, as
/// s6-rc does, everything they depend on (a producer's consumer too).
pub(super) fn boot_set(
    defs: &[Def],
    index: &HashMap<&str, usize>,
    bundles: &HashMap<String, Vec<String>>,
) -> HashSet<usize> {
    let mut boot = HashSet::new();
    let mut stack: Vec<&str> = BOOT_BUNDLES.to_vec();
    while let Some(n) = stack.pop() {
        for i in expand(n, index, bundles).into_iter().flatten() {
            if boot.insert(i) {
                let d = &defs[i];
                stack.extend(d.deps.iter().map(String::as_str));
                stack.extend(d.producer_for.iter().map(String::as_str));
            }
        }
    }
    boot
}

/// A cycle in a directed graph (as node indices, the first repeated at the
/// end), if any. Iterative: a hostile tree may chain thousands of services.
pub(super) fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state = vec![State::New; edges.len()];
    for start in 0..edges.len() {
        if state[start] != State::New {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = State::Open;
        while let Some(top) = path.last_mut() {
            let node = top.0;
            let Some(&to) = edges[node].get(top.1) else {
                state[node] = State::Done;
                path.pop();
                continue;
            };
            top.1 += 1;
            match state[to] {
                State::New => {
                    state[to] = State::Open;
                    path.push((to, 0));
                }
                State::Open => {
                    let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                    let mut cycle: Vec<usize> = path[from..].iter().map(|&(n, _)| n).collect();
                    cycle.push(to);
                    return Some(cycle);
                }
                State::Done => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn cycles() {
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![]]), None);
        assert_eq!(
            find_cycle(&[vec![1], vec![2], vec![0]]),
            Some(vec![0, 1, 2, 0])
        );
        assert_eq!(find_cycle(&[vec![0]]), Some(vec![0, 0]));
        let chain: Vec<Vec<usize>> = (0..20_000)
            .map(|i| if i + 1 < 20_000 { vec![i + 1] } else { vec![] })
            .collect();
        assert_eq!(find_cycle(&chain), None);
    }
}
