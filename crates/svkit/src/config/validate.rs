//! From parsed layers to the validated `Model`: layer merge, instance
//! expansion, cross-slot rules (duplicates, redirects, also_start).
//! Redirect rules: every named slot must exist, and `also_start` must not
//! loop (svkit-wrap follows it transitively).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::discover::InstanceSource;
use super::error::{Diagnostic, Site, Warning};
use super::json_pos::FieldPath;
use super::model::*;
use super::names::*;
use super::parse::Layer;
use super::raw::RawSlot;
use super::slot::{build_slot, SlotCtx};
use super::vars::{shown, Vars};

/// A valid model plus the non-fatal findings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    pub model: Model,
    pub warnings: Vec<Warning>,
}

/// One expansion of a raw slot (see [`instances_of`]).
struct Found {
    name: String,
    instance: Option<String>,
    /// The place to blame for a duplicate.
    at: FieldPath,
    /// How it was found: None when declared, else "registered" or
    /// "discovered" (such a duplicate is skipped with a warning).
    how: Option<&'static str>,
    /// Built only to report the errors of the slot's other fields (a bad
    /// name, or a template with no instance yet), never registered.
    register: bool,
}

impl Found {
    /// A declared name, or a stand-in built only for its errors.
    fn declared(name: String, instance: Option<String>, at: FieldPath, register: bool) -> Found {
        Found {
            name,
            instance,
            at,
            how: None,
            register,
        }
    }
}

/// Validate every layer together. `Err` holds every problem found.
pub fn validate(layers: &[Layer], src: &dyn InstanceSource) -> Result<Validated, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut warnings = Vec::new();
    let vars = Vars::new(src);

    // Top-level scalars: a later layer overrides an earlier one, like a
    // derived image's ENV overrides its base's.
    let mut user = None;
    let mut state_dir = DEFAULT_STATE_DIR.to_string();
    let mut sentinel_env = DEFAULT_SENTINEL_ENV.to_string();
    let mut default_program = None;
    let root = FieldPath::root();
    for l in layers {
        if let Some(u) = &l.top.user {
            user = super::slot::user(l, root.key("user"), u, &vars, &mut diags);
        }
        if let Some(s) = &l.top.state_dir {
            match check_abs_path(s) {
                Ok(s) => state_dir = s,
                Err(e) => diags.push(l.diag(&root.key("state_dir"), format!("`{s}` {e}"))),
            }
        }
        if let Some(s) = &l.top.sentinel_env {
            match check_env_name(s) {
                Ok(()) => sentinel_env = s.clone(),
                Err(e) => diags.push(l.diag(&root.key("sentinel_env"), format!("`{s}`: {e}"))),
            }
        }
        if let Some(s) = &l.top.default_program {
            let p = root.key("default_program");
            if s.is_empty() || s.starts_with('-') {
                diags.push(l.diag(&p, "must be a program name (not empty, not `-`-led)"));
            } else if let Err(e) = check_no_nul(s) {
                diags.push(l.diag(&p, e));
            } else {
                default_program = Some(s.clone());
            }
        }
    }

    // `http`: a later layer's replaces an earlier one's, whole.
    let mut http = None;
    for l in layers {
        if let Some(h) = &l.top.http {
            let p = root.key("http");
            http = check_http(l, &p, h, &mut diags).map(|h| (l, h));
        }
    }
    // It runs as a slot like any other, so s6 supervises it and every
    // view shows it; as root, as the control FIFOs need.
    let serve = RawSlot {
        name: SERVE_SLOT.into(),
        command: vec!["svkit".into(), "serve".into()],
        user: Some("root".into()),
        autostart: Some("always".into()),
        ..RawSlot::default()
    };

    let mut todo = Vec::new();
    if let Some((l, _)) = &http {
        let at = root.key("http");
        let f = Found::declared(SERVE_SLOT.into(), None, at.clone(), true);
        todo.push((*l, 0, &serve, at, f));
    }
    for l in layers {
        for (idx, raw) in &l.slots {
            let base = root.key("slots").index(*idx);
            let found = instances_of(l, &base, raw, &vars, &state_dir, &mut diags, &mut warnings);
            for f in found {
                todo.push((l, *idx, raw, base.clone(), f));
            }
        }
    }
    // A declared name wins over a discovered or registered one wherever it
    // comes: what is found on disk never makes the config invalid.
    let mut declared: HashMap<String, Site> = HashMap::new();
    for (l, .., f) in todo.iter().filter(|(.., f)| f.how.is_none() && f.register) {
        declared
            .entry(f.name.clone())
            .or_insert_with(|| l.site(f.at.clone()));
    }
    // Where each slot name was first defined, to name both places on a
    // duplicate.
    let mut seen: HashMap<String, Site> = HashMap::new();
    let mut slots: Vec<Slot> = Vec::new();
    // Where each valid slot was declared, `decl[i]` for `slots[i]`.
    let mut decl = Vec::new();
    for (l, idx, raw, base, found) in todo {
        let mut ctx = SlotCtx {
            layer: l,
            base,
            instance: found.instance.as_deref(),
            sentinel_env: &sentinel_env,
            vars: &vars,
            diags: Vec::new(),
        };
        let origin = Origin {
            file: l.file.clone(),
            index: idx,
            template: raw.name.clone(),
        };
        let slot = build_slot(&mut ctx, raw, found.name.clone(), origin, user.as_ref());
        let ok = ctx.diags.is_empty();
        diags.extend(ctx.diags);
        if !found.register {
            continue;
        }
        let (name, at, how) = (found.name, found.at, found.how);
        // What is found on disk also yields to a declared name to come.
        let first = seen.get(&name).or_else(|| how.and(declared.get(&name)));
        if let Some(first) = first {
            let first = format!("{} ({})", first.at(), first.path);
            let what = match &found.instance {
                Some(i) => format!("slot `{name}` (instance `{i}`)"),
                None => format!("slot `{name}`"),
            };
            match how {
                None => diags.push(l.diag(&at, format!("{what} is already defined at {first}"))),
                Some(how) => warnings.push(l.warning(
                    &at,
                    format!("skipping {how} {what}: already defined at {first}"),
                )),
            }
            continue;
        }
        seen.insert(name, l.site(at));
        if ok {
            slots.push(slot);
            decl.push((l, raw));
        }
    }

    // Every slot declared, valid or not: a reference to a malformed one is
    // not an error of its own (the slot's errors say what is wrong).
    let declared: HashSet<&str> = (seen.keys().map(String::as_str))
        .chain(
            layers
                .iter()
                .flat_map(|l| l.broken.iter().map(String::as_str)),
        )
        .collect();
    super::depends::resolve(&decl, &mut slots, &declared, &mut diags);
    let redirects = redirects(layers, &declared, &mut diags);
    let templates = (layers.iter().flat_map(|l| &l.slots))
        .filter(|(_, r)| r.instances.is_some() && r.name.contains(INSTANCE_VAR))
        .map(|(_, r)| Template {
            name: r.name.clone(),
            user: (r.user.as_ref())
                .map(|u| vars.quiet(u))
                .or_else(|| user.as_ref().map(|(u, _)| u.clone())),
        })
        .collect();
    warnings.extend(vars.warnings());

    if diags.is_empty() {
        Ok(Validated {
            model: Model {
                files: layers.iter().map(|l| l.file.clone()).collect(),
                user: user.map(|(u, _)| u),
                state_dir,
                sentinel_env,
                default_program,
                slots,
                redirects,
                templates,
                http: http.map(|(_, h)| h),
            },
            warnings,
        })
    } else {
        // A template error repeats once per instance: report it once.
        let mut seen = BTreeSet::new();
        diags.retain(|x| seen.insert(x.to_string()));
        Err(diags)
    }
}

/// `http`, checked: `listen` is `IP:PORT` (a port, not 0) or
/// `unix:/ABS/PATH`; `token_file` an absolute path.
fn check_http(
    l: &Layer,
    p: &FieldPath,
    h: &super::raw::RawHttp,
    diags: &mut Vec<Diagnostic>,
) -> Option<Http> {
    let before = diags.len();
    let listen = match h.listen.strip_prefix("unix:") {
        Some(path) => check_abs_path(path).map(Listen::Unix),
        None => match h.listen.parse::<std::net::SocketAddr>() {
            Ok(a) if a.port() != 0 => Ok(Listen::Tcp(a)),
            _ => Err("must be IP:PORT (e.g. 0.0.0.0:9090, [::]:9090) or unix:/ABS/PATH".into()),
        },
    };
    let listen = listen
        .map_err(|e| diags.push(l.diag(&p.key("listen"), format!("`{}`: {e}", h.listen))))
        .ok();
    let token_file = h.token_file.as_ref().and_then(|t| {
        check_abs_path(t)
            .map_err(|e| diags.push(l.diag(&p.key("token_file"), format!("`{t}` {e}"))))
            .ok()
    });
    match listen {
        Some(listen) if diags.len() == before => Some(Http { listen, token_file }),
        _ => None,
    }
}

/// What a raw slot expands to. Discovered
/// (`from_dir`) and registered (`svctl register`) instances that make an
/// invalid name are skipped with a warning; declared ones are errors.
fn instances_of(
    l: &Layer,
    base: &FieldPath,
    raw: &RawSlot,
    vars: &Vars<'_>,
    state_dir: &str,
    diags: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Warning>,
) -> Vec<Found> {
    let pname = base.key("name");
    let has_var = raw.name.contains(INSTANCE_VAR);
    // A template stand-in, built only for its errors.
    let stand_in = |n: String| vec![Found::declared(n, Some("x".into()), pname.clone(), false)];
    let Some(inst) = &raw.instances else {
        let bad = if has_var {
            Some("uses {instance} but the slot declares no `instances`".to_string())
        } else {
            (check_slot_name(&raw.name).err()).map(|e| format!("`{}`: {e}", raw.name))
        };
        let register = bad.is_none();
        diags.extend(bad.map(|m| l.diag(&pname, m)));
        return vec![Found::declared(raw.name.clone(), None, pname, register)];
    };
    if !has_var {
        diags.push(l.diag(
            &pname,
            "the slot declares `instances` but its name has no {instance}: every instance would get the same name",
        ));
        return stand_in(raw.name.clone());
    }
    // Check the template with a neutral instance, so that a bad template is
    // reported once and even when no instance exists yet.
    let probe = raw.name.replace(INSTANCE_VAR, "x");
    if let Err(e) = check_slot_name(&probe) {
        if probe.len() <= MAX_NAME_BYTES {
            diags.push(l.diag(&pname, format!("`{}`: {e}", raw.name)));
            return stand_in(probe);
        }
    }

    let mut out = Vec::new();
    let mut names = BTreeSet::new();
    let pinst = base.key("instances");
    let listed = (inst.names.iter().enumerate()).map(|(j, i)| (pinst.key("names").index(j), i));
    let pcount = pinst.key("count");
    let n = (inst.count.as_ref()).map_or(0, |c| count(l, &pcount, c, vars, diags));
    let counted: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    for (p, i) in listed.chain(counted.iter().map(|i| (pcount.clone(), i))) {
        let name = raw.name.replace(INSTANCE_VAR, i);
        let bad = check_instance_name(i)
            .map_err(|e| format!("instance `{i}`: {e}"))
            .and_then(|()| {
                check_slot_name(&name)
                    .map_err(|e| format!("instance `{i}` makes slot name `{name}` invalid: {e}"))
            });
        match bad {
            Err(e) => {
                diags.push(l.diag(&p, e));
                // One error for a count, not one an instance.
                if p == pcount {
                    break;
                }
            }
            Ok(()) => {
                if names.insert(i.clone()) {
                    out.push(Found::declared(name, Some(i.clone()), p, true));
                }
            }
        }
    }
    // Registered names, then discovered ones: each skipped with a warning
    // when it does not fit.
    let registered = vars.src.registered(state_dir, &raw.name, warnings);
    let mut found = vec![("registered", pinst.clone(), String::new(), registered)];
    if let Some(fd) = &inst.from_dir {
        let pf = pinst.key("from_dir");
        let dir = check_abs_path(&fd.path)
            .map_err(|e| diags.push(l.diag(&pf.key("path"), format!("`{}` {e}", fd.path))));
        let file = (fd.require_file.iter()).try_for_each(|r| {
            check_file_name(r)
                .map_err(|e| diags.push(l.diag(&pf.key("require_file"), format!("`{r}` {e}"))))
        });
        if let (Ok(dir), Ok(())) = (dir, file) {
            let names = (vars.src.discover(&dir, fd.require_file.as_deref())).unwrap_or_else(|e| {
                let why = format!("unable to list {dir}: {e}; no instances discovered there");
                warnings.push(l.warning(&pf, why));
                Vec::new()
            });
            found.push(("discovered", pf, format!(" in {dir}"), names));
        }
    }
    for (how, at, whence, list) in found {
        let mut list: Vec<String> = list.into_iter().filter(|n| !names.contains(n)).collect();
        list.sort();
        list.dedup();
        for i in list {
            let name = raw.name.replace(INSTANCE_VAR, &i);
            match check_instance_name(&i).and_then(|()| check_slot_name(&name)) {
                Err(e) => warnings
                    .push(l.warning(&at, format!("skipping {how} instance \"{i}\"{whence}: {e}"))),
                Ok(()) => {
                    names.insert(i.clone());
                    out.push(Found {
                        name,
                        instance: Some(i),
                        at: at.clone(),
                        how: Some(how),
                        register: true,
                    });
                }
            }
        }
    }
    if out.is_empty() {
        return stand_in(probe);
    }
    out
}

/// `instances.count`: a whole number, written as one or as a string that
/// is one once its `${VAR}` are expanded, at most s6-svscan's limit (each
/// instance is a service). 0 when it is not.
fn count(
    l: &Layer,
    p: &FieldPath,
    v: &serde_json::Value,
    vars: &Vars<'_>,
    diags: &mut Vec<Diagnostic>,
) -> u32 {
    let max = crate::s6::SVSCAN_MAX;
    let (what, text) = match v {
        serde_json::Value::Number(n) => (format!("`{n}`"), n.to_string()),
        serde_json::Value::String(s) => {
            let Some(t) = vars.get(l, p, s, diags) else {
                return 0;
            };
            (shown(s, &t), t)
        }
        _ => {
            let msg = "expected a number, or a string such as \"${WORKERS:-4}\"";
            diags.push(l.diag(p, msg));
            return 0;
        }
    };
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u32>() {
        Ok(n) if digits && n <= max => n,
        _ => {
            diags.push(l.diag(
                p,
                format!("{what}: expected a whole number 0..{max} (s6-svscan supervises at most {max} services)"),
            ));
            0
        }
    }
}

/// slot -> (a slot its redirects also start, where that is said)
type Edges = BTreeMap<String, Vec<(String, Site)>>;

fn redirects(
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
