//! Redirect rules: every named slot must exist, and `also_start` must not
//! loop (svkit-wrap follows it transitively).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::error::{Diagnostic, Site};
use super::json_pos::FieldPath;
use super::model::Redirect;
use super::names::{check_env_name, check_no_nul};
use super::parse::Layer;

/// slot -> (a slot its redirects also start, where that is said)
type Edges = BTreeMap<String, Vec<(String, Site)>>;

pub(crate) fn redirects(
    layers: &[Layer],
    slots: &HashSet<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Redirect> {
    let mut out = Vec::new();
    let mut by_match: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut edges = Edges::new();
    for l in layers {
        for (idx, r) in &l.redirects {
            let base = FieldPath::root().key("redirects").index(*idx);
            let n = diags.len();
            if r.match_.is_empty() {
                diags.push(l.diag(&base.key("match"), "match must not be empty"));
            }
            for (i, m) in r.match_.iter().enumerate() {
                if let Err(e) = check_no_nul(m) {
                    diags.push(l.diag(&base.key("match").index(i), e));
                }
            }
            if !r.match_.is_empty() {
                let here = format!("{} ({base})", crate::msg::path(&l.file));
                if let Some(first) = by_match.get(&r.match_) {
                    diags.push(l.diag(
                        &base.key("match"),
                        format!("the same match is already declared at {first}"),
                    ));
                } else {
                    by_match.insert(r.match_.clone(), here);
                }
            }
            if !slots.contains(r.slot.as_str()) {
                diags.push(l.diag(
                    &base.key("slot"),
                    format!("redirect names undeclared slot `{}`", r.slot),
                ));
            }
            if let Some(f) = &r.opt_out_flag {
                if !f.starts_with('-') || f.len() < 2 || f.contains('\0') {
                    diags.push(l.diag(
                        &base.key("opt_out_flag"),
                        format!("`{f}`: an opt-out flag starts with `-`"),
                    ));
                }
            }
            if let Some(v) = &r.opt_out_env {
                if let Err(e) = check_env_name(v) {
                    diags.push(l.diag(&base.key("opt_out_env"), format!("`{v}`: {e}")));
                }
            }
            for (i, a) in r.also_start.iter().enumerate() {
                let p = base.key("also_start").index(i);
                if !slots.contains(a.as_str()) {
                    diags.push(l.diag(&p, format!("also_start names undeclared slot `{a}`")));
                } else if *a == r.slot {
                    diags.push(l.diag(
                        &p,
                        format!("also_start names the redirect's own slot `{a}`"),
                    ));
                } else {
                    let site = l.site(p);
                    edges
                        .entry(r.slot.clone())
                        .or_default()
                        .push((a.clone(), site));
                }
            }
            if diags.len() == n {
                out.push(Redirect {
                    matches: r.match_.clone(),
                    slot: r.slot.clone(),
                    opt_out_flag: r.opt_out_flag.clone(),
                    opt_out_env: r.opt_out_env.clone(),
                    also_start: r.also_start.clone(),
                });
            }
        }
    }
    cycles(&edges, diags);
    out
}

/// Report each also_start edge that closes a cycle, with the cycle spelled
/// out: a depth-first walk, `stack` the slots on its way, `done` those left.
fn cycles(edges: &Edges, diags: &mut Vec<Diagnostic>) {
    fn visit(
        n: &str,
        edges: &Edges,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        diags: &mut Vec<Diagnostic>,
    ) {
        stack.push(n.to_string());
        for (m, site) in edges.get(n).into_iter().flatten() {
            if let Some(from) = stack.iter().position(|s| s == m) {
                let cyc = [&stack[from..], std::slice::from_ref(m)].concat();
                let msg = format!("also_start makes a cycle: {}", cyc.join(" -> "));
                diags.push(site.diag(msg));
            } else if !done.contains(m) {
                visit(m, edges, stack, done, diags);
            }
        }
        stack.pop();
        done.insert(n.to_string());
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if !done.contains(n) {
            visit(n, edges, &mut Vec::new(), &mut done, diags);
        }
    }
}
