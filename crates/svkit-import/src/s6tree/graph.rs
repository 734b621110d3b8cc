//! The graph of an s6-rc source dir: bundles (pipelines included) and the
//! services they stand for, what starts at boot, and cycles.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use super::rc::{Def, Kind, BOOT_BUNDLES};
use crate::common::error;
use crate::ImportError;

/// Every bundle by name, and the services it stands for.
pub(super) type Bundles = BTreeMap<String, Vec<String>>;

/// Every bundle by name: the `bundle` definitions and the pipelines a last
/// consumer names with `pipeline-name`. A cycle of bundles is an error.
pub(super) fn bundles(
    path: &Path,
    defs: &[Def],
    index: &HashMap<&str, usize>,
) -> Result<Bundles, ImportError> {
    let mut out = Bundles::new();
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
    if let Some((_, cycle)) = named_cycle(edges, |i| names[i]) {
        let what = format!("bundle cycle {cycle} (s6-rc-compile refuses it too)");
        return Err(error(path, what));
    }
    Ok(out)
}

/// A cycle of `edges` (the library's search, as for a config's
/// `depends_on`): its first node, and its nodes' names joined by ` -> `.
pub(super) fn named_cycle<'a>(
    edges: Vec<Vec<usize>>,
    name: impl Fn(usize) -> &'a String,
) -> Option<(usize, String)> {
    let cycle = svkit::config::depends::cycle(edges)?;
    let names: Vec<&str> = cycle.iter().map(|&i| name(i).as_str()).collect();
    Some((cycle[0], names.join(" -> ")))
}

/// The services `name` stands for: itself, or a bundle's services, each
/// once; `None` for a name defined nowhere in the tree.
pub(super) fn expand(
    name: &str,
    index: &HashMap<&str, usize>,
    bundles: &Bundles,
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
    bundles: &Bundles,
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
