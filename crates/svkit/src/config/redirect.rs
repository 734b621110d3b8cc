//! Redirect rules: every named slot must exist, and `also_start` must not
//! loop (svkit-wrap follows it transitively).

use std::collections::{BTreeMap, HashSet};

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::model::Redirect;
use super::names::{check_env_name, check_no_nul};
use super::parse::Layer;

pub(crate) fn redirects(
    layers: &[Layer],
    slots: &HashSet<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Redirect> {
    let mut out = Vec::new();
    let mut by_match: BTreeMap<Vec<String>, String> = BTreeMap::new();
    // slot -> (also_start slots, where declared) for cycle detection
    let mut edges: BTreeMap<String, Vec<(String, usize, FieldPath)>> = BTreeMap::new();
    for (li, l) in layers.iter().enumerate() {
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
                    edges
                        .entry(r.slot.clone())
                        .or_default()
                        .push((a.clone(), li, p));
                }
            }
            if diags.len() == n {
                out.push(Redirect {
                    origin_file: l.file.clone(),
                    matches: r.match_.clone(),
                    slot: r.slot.clone(),
                    opt_out_flag: r.opt_out_flag.clone(),
                    opt_out_env: r.opt_out_env.clone(),
                    also_start: r.also_start.clone(),
                });
            }
        }
    }
    cycles(layers, &edges, diags);
    out
}

/// Report each also_start edge that closes a cycle, with the cycle spelled out.
fn cycles(
    layers: &[Layer],
    edges: &BTreeMap<String, Vec<(String, usize, FieldPath)>>,
    diags: &mut Vec<Diagnostic>,
) {
    // Colors: absent = unvisited, false = on the stack, true = done.
    fn visit(
        n: &str,
        edges: &BTreeMap<String, Vec<(String, usize, FieldPath)>>,
        color: &mut BTreeMap<String, bool>,
        stack: &mut Vec<String>,
        found: &mut Vec<(usize, FieldPath, String)>,
    ) {
        color.insert(n.to_string(), false);
        stack.push(n.to_string());
        for (m, li, p) in edges.get(n).map(Vec::as_slice).unwrap_or(&[]) {
            match color.get(m.as_str()) {
                None => visit(m, edges, color, stack, found),
                Some(false) => {
                    let from = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut cyc: Vec<&str> = stack[from..].iter().map(String::as_str).collect();
                    cyc.push(m);
                    found.push((*li, p.clone(), cyc.join(" -> ")));
                }
                Some(true) => {}
            }
        }
        stack.pop();
        color.insert(n.to_string(), true);
    }
    let mut color = BTreeMap::new();
    let mut found = Vec::new();
    for n in edges.keys() {
        if !color.contains_key(n.as_str()) {
            visit(n, edges, &mut color, &mut Vec::new(), &mut found);
        }
    }
    for (li, p, cyc) in found {
        if let Some(l) = layers.get(li) {
            diags.push(l.diag(&p, format!("also_start makes a cycle: {cyc}")));
        }
    }
}
