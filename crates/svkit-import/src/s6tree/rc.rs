//! An s6-rc source dir, read as s6-rc-compile reads it (the image's own
//! `/etc/s6-overlay/s6-rc.d`): every subdir is a definition whose `type`
//! is `longrun`, `oneshot` or `bundle`.
//!
//! - A longrun is a slot; a oneshot a `oneshot` slot running its `up` line
//!   with `execlineb -P`. A pipeline consumer (`consumer-for`: a logger,
//!   typically) is no slot: svkit cannot pipe one slot into another.
//! - `dependencies.d` → `depends_on`, a bundle standing for its services:
//!   `completed` on a oneshot, `ready` on a longrun with readiness, else `up`.
//! - What starts at boot is what s6-overlay starts: the `user` and `user2`
//!   bundles, with everything they depend on; the rest is `never`.
//!
//! Below the import, the graph: bundles (pipelines included) and the
//! services they stand for, what starts at boot, and cycles.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use svkit::msg::At;

use super::{file_note, file_notes, longrun_slot, name_map, note, read, S6_OVERLAY_BIN};
use crate::common::error;
use crate::{ImportError, Imported, Note, RawSlot};

/// The bundles s6-overlay's `top` starts at boot, defined in the image's tree.
const BOOT_BUNDLES: &[&str] = &["user", "user2"];
/// s6-overlay's own services, from its own source dir: every svkit slot
/// starts after them (the cont-init hooks, svkit's boot hook among them).
const OVERLAY_BASE: &[&str] = &["base", "fix-attrs", "legacy-cont-init"];
/// s6-overlay's service that starts `/etc/services.d`, after svkit's hook.
const LEGACY_SERVICES: &str = "legacy-services";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Longrun,
    Oneshot,
    Bundle,
}

struct Def {
    name: String,
    dir: PathBuf,
    kind: Kind,
    deps: Vec<String>,
    contents: Vec<String>,
    producer_for: Option<String>,
    consumer_for: Vec<String>,
    pipeline_name: Option<String>,
}

fn read_def(name: &str, dir: &Path) -> Result<Def, ImportError> {
    let kind = match read::small(dir, "type")?.as_deref() {
        Some("longrun") => Kind::Longrun,
        Some("oneshot") => Kind::Oneshot,
        Some("bundle") => Kind::Bundle,
        Some(other) => {
            return Err(error(
                &dir.join("type"),
                format!("`{other}`: a type is longrun, oneshot or bundle (s6-rc-compile refuses it too)"),
            ))
        }
        None => {
            return Err(error(
                dir,
                "no type file: every definition of an s6-rc source dir has one (s6-rc-compile refuses it too)",
            ))
        }
    };
    // Each list where s6-rc reads it: none of another kind.
    let list = |what: &str, read: bool| match read {
        true => read::names(dir, what),
        false => Ok(Vec::new()),
    };
    let (atomic, longrun) = (kind != Kind::Bundle, kind == Kind::Longrun);
    Ok(Def {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        kind,
        deps: list("dependencies", atomic)?,
        contents: list("contents", !atomic)?,
        producer_for: list("producer-for", longrun)?.into_iter().next(),
        consumer_for: list("consumer-for", longrun)?,
        pipeline_name: list("pipeline-name", longrun)?.into_iter().next(),
    })
}

pub(super) fn import(
    path: &Path,
    root: &str,
    entries: &[(String, PathBuf, bool)],
) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    let defs: Vec<Def> = (entries.iter().filter(|e| e.2))
        .map(|(name, dir, _)| read_def(name, dir))
        .collect::<Result<_, _>>()?;
    // The files read are the definition dirs.
    out.files = defs.len();
    let index: HashMap<&str, usize> = defs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    let bundles = bundles(path, &defs, &index)?;
    let boot = boot_set(&defs, &index, &bundles);
    let has_user = BOOT_BUNDLES.iter().any(|b| bundles.contains_key(*b));
    if !has_user {
        out.notes.push(note(
            path,
            "user",
            "no user or user2 bundle here: s6-overlay starts only what they hold, so every \
             slot is imported with `autostart: never`",
        ));
    }

    // The slots, in the tree's order; a consumer, a bundle or a longrun
    // that cannot run is none.
    let atomic = defs.iter().filter(|d| {
        d.kind == Kind::Oneshot || (d.kind == Kind::Longrun && d.consumer_for.is_empty())
    });
    let names = name_map(
        atomic.map(|d| (d.name.as_str(), d.dir.as_path())),
        &mut out.notes,
    )?;
    let mut slots: Vec<(usize, RawSlot)> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        let slot = match d.kind {
            Kind::Bundle => None,
            Kind::Longrun if !d.consumer_for.is_empty() => {
                out.notes.push(file_note(
                    &d.dir,
                    "consumer-for",
                    format!(
                        "not imported: svkit cannot pipe one slot's output into another (an s6-rc \
                         pipeline from {}); when it is a logger, svkit renders its own: check \
                         where this one wrote and set `log` on the producer's slot",
                        d.consumer_for.join(", ")
                    ),
                ));
                None
            }
            Kind::Longrun => {
                let image_dir = format!("{root}/{}", d.name);
                longrun_slot(&names[&d.name], &d.dir, &image_dir, &mut out.notes)?
            }
            Kind::Oneshot => Some(oneshot_slot(&names[&d.name], d, root)?),
        };
        let Some(mut slot) = slot else { continue };
        rc_notes(d, &mut out.notes)?;
        if !boot.contains(&i) {
            slot.autostart = Some("never".into());
            if has_user {
                out.notes.push(note(
                    &d.dir,
                    &d.name,
                    "not in the user bundles: s6-overlay does not start it at boot, nor does \
                     svkit (`autostart: never`; `svctl start` does)",
                ));
            }
        }
        slots.push((i, slot));
    }
    let made: HashMap<usize, usize> = slots
        .iter()
        .enumerate()
        .map(|(at, (i, _))| (*i, at))
        .collect();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    for at in 0..slots.len() {
        let d = &defs[slots[at].0];
        let mut depends = BTreeMap::new();
        for dep in &d.deps {
            for target in expand(dep, &index, &bundles) {
                let Some(t) = target else {
                    out.notes.push(unknown_dep(d, dep));
                    continue;
                };
                let Some(&t_at) = made.get(&t) else {
                    out.notes.push(dep_note(
                        d,
                        dep,
                        &format!(
                            "`{}` is not a slot (see its own notes): not carried over",
                            defs[t].name
                        ),
                    ));
                    continue;
                };
                let cond = match (defs[t].kind, slots[t_at].1.readiness.is_some()) {
                    (Kind::Oneshot, _) => "completed",
                    (_, true) => "ready",
                    _ => "up",
                };
                depends.insert(names[&defs[t].name].clone(), cond.to_owned());
                edges[at].push(t_at);
            }
        }
        slots[at].1.depends_on = (!depends.is_empty()).then_some(depends);
    }
    if let Some((first, cycle)) = named_cycle(edges, |at| &defs[slots[at].0].name) {
        let what = format!("dependency cycle {cycle} (s6-rc-compile refuses it too)");
        return Err(error(&defs[slots[first].0].dir, what));
    }
    out.slots = slots.into_iter().map(|(_, s)| s).collect();
    if has_user && !out.slots.is_empty() {
        out.notes.push(note(
            path,
            "user",
            "s6-overlay starts what the user and user2 bundles hold itself: once the svkit \
             config is in the image, empty their contents.d (the definitions may stay, s6-rc \
             only compiles them), or each service runs twice",
        ));
    }
    Ok(out)
}

/// A oneshot's slot: its `up` line run by `execlineb -P` (s6-rc lexes it
/// with execlineb's lexer too), once per boot.
fn oneshot_slot(slot: &str, d: &Def, root: &str) -> Result<RawSlot, ImportError> {
    if !read::has(&d.dir, "up")? {
        return Err(error(
            &d.dir.join("up"),
            "a oneshot needs an up file (s6-rc-compile refuses it too)",
        ));
    }
    // Refuses a FIFO or a dir where the file should be.
    crate::common::read_head(&d.dir.join("up"), 0, "up")?;
    let s = RawSlot {
        name: slot.to_owned(),
        kind: Some("oneshot".into()),
        command: vec![
            format!("{S6_OVERLAY_BIN}/execlineb"),
            "-P".into(),
            format!("{root}/{}/up", d.name),
        ],
        ..RawSlot::default()
    };
    crate::common::no_placeholder(&s, At::file(&d.dir))?;
    Ok(s)
}

/// The s6-rc files of an atomic service that svkit has no key for.
fn rc_notes(d: &Def, notes: &mut Vec<Note>) -> Result<(), ImportError> {
    let mut files: Vec<(&str, String)> = vec![
        ("timeout-up", "not carried over: svkit waits for a dependency without a time limit (`svctl status` shows who waits for what and why)".into()),
        ("timeout-down", "not carried over: a stop takes as long as it takes; `stop_timeout_ms` (from timeout-kill) ends it with SIGKILL".into()),
        ("flag-essential", "not carried over: s6-rc's essential (only `s6-rc -D` stops it) has no svkit equivalent; svkit's `essential` (the container ends with the slot) is another thing".into()),
    ];
    if d.kind == Kind::Oneshot {
        files.push(("down", "not carried over: svkit runs nothing when a oneshot is stopped; run it from the shutdown of the slot that needs it".into()));
    }
    if let Some(consumer) = &d.producer_for {
        files.push(("producer-for", format!("not carried over: its output went to `{consumer}`; it now goes to the container's output: set the slot's `log` to keep files")));
    }
    file_notes(&d.dir, &files, notes)
}

fn dep_note(d: &Def, dep: &str, why: &str) -> Note {
    file_note(&d.dir, &format!("dependencies.d/{dep}"), why)
}

fn unknown_dep(d: &Def, dep: &str) -> Note {
    let why = if OVERLAY_BASE.contains(&dep) {
        "s6-overlay's own: every svkit slot starts after it (svkit makes its slots in a cont-init hook), nothing to carry over"
    } else if dep == LEGACY_SERVICES {
        "not carried over: svkit makes its slots before /etc/services.d starts and cannot wait for it; import services.d too and depend on its slots"
    } else {
        "not defined in this tree: not carried over"
    };
    dep_note(d, dep, why)
}

/// Every bundle by name, and the services it stands for.
type Bundles = BTreeMap<String, Vec<String>>;

/// Every bundle by name: the `bundle` definitions and the pipelines a last
/// consumer names with `pipeline-name`. A cycle of bundles is an error.
fn bundles(
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
    // A bundle's edges go to the bundles among its members (by their
    // place in the map's order).
    let names: Vec<&String> = out.keys().collect();
    let edges = (out.values())
        .map(|ms| {
            ms.iter()
                .filter_map(|m| out.keys().position(|n| n == m))
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
fn named_cycle<'a>(
    edges: Vec<Vec<usize>>,
    name: impl Fn(usize) -> &'a String,
) -> Option<(usize, String)> {
    let cycle = svkit::config::depends::cycle(edges)?;
    let names: Vec<&str> = cycle.iter().map(|&i| name(i).as_str()).collect();
    Some((cycle[0], names.join(" -> ")))
}

/// The services `name` stands for: itself, or a bundle's services, each
/// once; `None` for a name defined nowhere in the tree.
fn expand(name: &str, index: &HashMap<&str, usize>, bundles: &Bundles) -> Vec<Option<usize>> {
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
fn boot_set(defs: &[Def], index: &HashMap<&str, usize>, bundles: &Bundles) -> HashSet<usize> {
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
