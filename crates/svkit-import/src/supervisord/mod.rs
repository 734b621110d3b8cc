//! supervisord's INI config into svkit slots: `[program:x]` sections
//! become slots (templated for `numprocs`), everything else is reported.
//! Split by concern: [`read`] (the main file and its includes), [`ini`]
//! (the INI dialect), [`expand`] (`%(name)s`), [`shlex`] (how supervisord
//! splits words), [`words`] (its value types), [`program`] (one program,
//! its values expanded: its command and environment, and the keys that
//! become svkit policies).

mod expand;
mod ini;
mod program;
mod read;
mod shlex;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_input;
mod words;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use svkit::config::names;
use svkit::msg::At;

use crate::{ImportError, Imported, Note, Options};
use ini::Section;
use program::{Built, Global, Program};

/// Why a whole section does not carry over.
fn section_why(name: &str) -> &'static str {
    match name.split_once(':').map_or(name, |(kind, _)| kind) {
        "eventlistener" => "an event listener has no svkit equivalent yet (`svctl events --json` streams slot state changes to build one on)",
        "fcgi-program" => "svkit opens no sockets for programs: run the FastCGI server as a [program] that binds its own socket",
        "rpcinterface" => "svctl replaces supervisord's XML-RPC interface",
        "unix_http_server" | "inet_http_server" => "svctl talks to s6 directly: there is no control socket or HTTP server to configure",
        "supervisorctl" => "svctl replaces supervisorctl (docs/import.md has the verbs side by side)",
        _ => "not a section supervisord knows (it ignores it too)",
    }
}

/// `[supervisord]`: `user` and `environment` reach every program; every
/// other key is supervisord's own.
fn global(s: Option<&Section>, notes: &mut Vec<Note>) -> Result<Global, ImportError> {
    let mut g = Global::default();
    let Some(s) = s else { return Ok(g) };
    for (k, v) in &s.keys {
        let bad = |what: String| ImportError::new(v.at.clone(), format!("{k}: {what}"));
        let note = |why: &str| Note::new(v.at.clone(), k, why);
        match k.as_str() {
            // root: no drop, as in svkit by default.
            "user" if v.text == "root" => {}
            "user" if !v.text.contains('%') => {
                names::check_user(&v.text).map_err(|e| bad(format!("`{}`: {e}", v.text)))?;
                g.user = Some(v.text.clone());
                notes.push(note(&format!("every slot without a user of its own runs as `{}`, as under supervisord", v.text)));
            }
            "environment" if !v.text.contains('%') => g.env = shlex::env_pairs(&v.text).map_err(bad)?,
            "user" | "environment" => notes.push(note("not carried over: it uses %(…)s expansions; set it on each slot")),
            "nodaemon" => notes.push(note("not carried over: s6-overlay's /init is PID 1 and stays in the foreground")),
            _ => notes.push(note("not carried over: supervisord's own setting; s6-overlay's /init and svctl replace supervisord")),
        }
    }
    Ok(g)
}

/// The slots of the config at `path`, checked as `svctl check` checks a
/// config (an error names where the slot at fault was written).
pub fn import(path: &Path, opts: &Options) -> Result<Imported, ImportError> {
    let (imported, at) = import_located(path, opts)?;
    crate::checked(&imported.slots, &at, At::file(path))?;
    Ok(imported)
}

/// The slots of the config at `path`, unchecked, with where each was
/// written.
pub(crate) fn import_located(
    path: &Path,
    opts: &Options,
) -> Result<(Imported, Vec<At>), ImportError> {
    let (ini, mut notes, files) = read::read(path)?;
    let mut groups: HashMap<&str, &str> = HashMap::new();
    for s in &ini.sections {
        let Some(g) = s.name.strip_prefix("group:") else {
            continue;
        };
        let listed = s.get("programs").map_or("", |v| &v.text);
        let progs: Vec<&str> = listed
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        groups.extend(progs.iter().map(|&p| (p, g)));
        notes.push(Note::new(s.at.clone(), &s.name, format!(
            "not carried over: svkit has no groups; its programs ({}) are slots of their own: `svctl start {}` starts them together",
            progs.join(", "),
            progs.join(" ")
        )));
    }
    let g = global(ini.section("supervisord"), &mut notes)?;
    let mut built: Vec<Built> = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    for s in &ini.sections {
        let Some(prog) = s.name.strip_prefix("program:") else {
            if !matches!(s.name.as_str(), "supervisord" | "include")
                && !s.name.starts_with("group:")
            {
                notes.push(Note::new(
                    s.at.clone(),
                    &s.name,
                    format!("not carried over: {}", section_why(&s.name)),
                ));
            }
            continue;
        };
        let group = groups.get(prog).copied().unwrap_or(prog);
        let mut p = Program {
            sec: s,
            defaults: &ini.defaults,
            global: &g,
            group,
            notes: &mut notes,
            count: None,
        };
        for b in p.build()? {
            if let Some(other) = taken.get(&b.slot.name).map(|&i| &built[i]) {
                return Err(ImportError::new(
                    b.at.clone(),
                    format!(
                        "[{}] is slot `{}`, as the program at {} is: rename one (process_name)",
                        s.name, b.slot.name, other.at
                    ),
                ));
            }
            taken.insert(b.slot.name.clone(), built.len());
            built.push(b);
        }
        if !opts.priority_as_order {
            if let Some(v) = s.get("priority") {
                notes.push(Note::new(
                    v.at.clone(),
                    "priority",
                    "start order not carried over: svkit starts every slot at once (--priority-as-order makes a lower priority a depends_on: up)",
                ));
            }
        }
    }
    own_log_dirs(&mut built, &mut notes);
    if opts.priority_as_order {
        order(&mut built);
    }
    let at = built.iter().map(|b| b.at.clone()).collect();
    let slots = built.into_iter().map(|b| b.slot).collect();
    Ok((
        Imported {
            slots,
            notes,
            files,
        },
        at,
    ))
}

/// s6-log locks its dir: slots whose files shared a dir under supervisord
/// each get a dir of their own below it, and a template's instances one
/// each.
fn own_log_dirs(built: &mut [Built], notes: &mut [Note]) {
    let dir = |b: &Built| b.slot.log.as_ref().map(|l| l.dir.clone());
    let mut count: HashMap<String, usize> = HashMap::new();
    for d in built.iter().filter_map(dir) {
        *count.entry(d).or_default() += 1;
    }
    for b in built.iter_mut() {
        let Some(d) = dir(b) else { continue };
        let shared = count.get(&d).copied().unwrap_or(0) > 1;
        let templated = b.slot.instances.is_some() && !d.contains(names::INSTANCE_VAR);
        if !shared && !templated {
            continue;
        }
        let own = if shared {
            format!("{d}/{}", b.slot.name)
        } else {
            format!("{d}/{{instance}}")
        };
        if let Some(log) = &mut b.slot.log {
            log.dir = own.clone();
        }
        // The note that named the dir names the one it is now.
        if let Some(at) = &b.log_at {
            let said = (notes.iter_mut()).find(|n| n.at == *at && n.key == "stdout_logfile");
            if let Some(n) = said {
                n.why = n.why.replacen(
                    &format!("log.dir {d}:"),
                    &format!("log.dir {own} (a dir of its own: s6-log locks its dir):"),
                    1,
                );
            }
        }
    }
}

/// `--priority-as-order`: each slot waits for the started-at-boot slots
/// of the next lower priority (and through them, every lower one).
fn order(built: &mut [Built]) {
    let mut at: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for b in built.iter().filter(|b| b.autostart) {
        at.entry(b.priority).or_default().push(b.slot.name.clone());
    }
    for b in built.iter_mut() {
        if let Some((_, below)) = at.range(..b.priority).next_back() {
            b.slot.depends_on = Some(below.iter().map(|n| (n.clone(), "up".into())).collect());
        }
    }
}
