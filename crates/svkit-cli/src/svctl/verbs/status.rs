//! `svctl status`: the state of slots, read natively (a few syscalls per
//! slot, no process per slot: this is also a container health check).

use std::time::SystemTime;

use svkit::msg::exit::svctl::{NOT_IN_STATE, UNKNOWN_SLOT};
use svkit::msg::exit::OK;
use svkit::msg::{self, Fatal};
use svkit::s6::status::{read_slot, supervisor_running, StatusError};
use svkit::slot::health;
use svkit::slot::owner::is_ours;
use svkit::slot::status_fmt::{json_doc, mode_line, table, Row};

use super::ctx::Ctx;
use crate::svctl::args::StatusArgs;

pub fn run(args: &StatusArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let declared_missing = ctx
        .model
        .as_ref()
        .map(|m| health::declared_missing(m, &ctx.scandir))
        .unwrap_or_default();
    let mut unknown = Vec::new();
    let mut missing = Vec::new();
    let names = if args.slots.is_empty() {
        missing.clone_from(&declared_missing);
        ctx.list(args.all)?
    } else {
        let mut v = Vec::new();
        for n in &args.slots {
            if ctx.known(n) {
                v.push(n.clone());
            } else if declared_missing.contains(n) {
                missing.push(n.clone());
            } else {
                unknown.push(n.clone());
            }
        }
        v
    };
    let mut rows = names
        .iter()
        .map(|n| row(&ctx, n))
        .collect::<Result<Vec<_>, _>>()?;
    if let (Some(model), false) = (&ctx.model, missing.is_empty()) {
        // Unusable state files were reported by the boot that read them.
        let facts = health::start_facts(model, &mut Vec::new());
        rows.extend(missing.iter().map(|n| missing_row(&ctx, &facts, n)));
    }
    // In the order asked for, else by name, missing slots among the others.
    if args.slots.is_empty() {
        rows.sort_by(|a, b| a.name.cmp(&b.name));
    } else {
        rows.sort_by_key(|r| args.slots.iter().position(|s| *s == r.name));
    }
    ctx.judge().mark_stalled(
        rows.iter_mut()
            .filter(|r| r.st.is_some())
            .map(|r| (r.name.as_str(), &mut r.v.log)),
    );
    let orphans = ctx.orphans();
    let now = SystemTime::now();
    let mode = svkit::container::supervision();
    let text = if args.json {
        json_doc(&rows, &unknown, &orphans, &mode, now)
    } else if rows.is_empty() && !unknown.is_empty() {
        // Nothing asked for exists: the warnings below say it all.
        String::new()
    } else {
        let mut t = table(&rows, now, want_colour());
        t.extend(mode_line(&mode, &ctx.scandir));
        t
    };
    msg::out(text)?;
    for n in &unknown {
        msg::warn(format_args!("unknown slot {n}: not in the scandir"));
    }
    for r in &rows {
        if let Some(f) = &r.v.log {
            msg::warn(format_args!("slot {}: {f}", r.name));
        }
        if let Some(pid) = r.v.stray {
            msg::warn(format_args!(
                "slot {}: a copy of its program runs unsupervised (pid {pid}), left by a supervisor that died; svctl stop {} ends it",
                r.name, r.name
            ));
        }
    }
    // A note, never a fault: the slots' health is what the exit code says.
    if let Some(note) = svkit::state::note(&orphans) {
        msg::warn(note);
    }
    let hidden: Vec<&str> = rows
        .iter()
        .filter(|r| r.unreadable.is_some())
        .map(|r| r.name.as_str())
        .collect();
    if !hidden.is_empty() {
        msg::warn(format_args!(
            "status of {} unreadable as uid {}: its supervise/ belongs to another user (root sees every slot)",
            hidden.join(", "),
            nix::unistd::geteuid()
        ));
    }
    // Listing, another user's slot is shown but decides nothing: a slot
    // user's `svctl status` answers for the slots it can read. Named (or
    // when nothing is readable), what was asked about is unknown.
    let readable: Vec<&Row> = rows.iter().filter(|r| r.unreadable.is_none()).collect();
    let asked_hidden = !hidden.is_empty() && (!args.slots.is_empty() || readable.is_empty());
    Ok(if !unknown.is_empty() || asked_hidden {
        UNKNOWN_SLOT
    } else if readable.iter().all(|r| r.in_wanted_state()) {
        OK
    } else {
        NOT_IN_STATE
    })
}

/// A slot the config declares that is not in the scandir: wanted up or
/// not as its autostart says.
fn missing_row(ctx: &Ctx, facts: &health::StartFacts, name: &str) -> Row {
    Row {
        name: name.to_string(),
        ours: false,
        st: None,
        v: health::Verdict {
            desired_up: ctx.slot(name).is_some_and(|s| health::autostarts(s, facts)),
            ..Default::default()
        },
        log_dir: ctx.log_dir(name).map(str::to_string),
        unreadable: None,
        missing: true,
    }
}

/// One slot's row. A slot whose supervisor is gone (or not there yet) is a
/// row without status; so is one whose `supervise/` this user may not read
/// (another user's slot), marked unreadable. Only other I/O errors and
/// corrupt status files are errors.
pub fn row(ctx: &Ctx, name: &str) -> Result<Row, Fatal> {
    let dir = ctx.dir(name);
    let sys = |e: StatusError| Fatal::system(format!("unable to read status of {name}"), e);
    let read = read_slot(&dir).and_then(|s| Ok((s, supervisor_running(&dir)?)));
    let (st, unreadable) = match read {
        Ok((s, true)) => (Some(s), None),
        Ok((_, false)) | Err(StatusError::NotSupervised { .. }) => (None, None),
        // Shown as unreadable, not a reason to show nothing.
        Err(e) if e.is_denied() => (None, Some(e.to_string())),
        Err(e) => return Err(sys(e)),
    };
    let v = ctx.judge().verdict(name, st.as_ref(), SystemTime::now());
    Ok(Row {
        name: name.to_string(),
        ours: is_ours(&dir),
        st,
        v,
        log_dir: ctx.log_dir(name).map(str::to_string),
        unreadable,
        missing: false,
    })
}

/// Colour only on a terminal, and never with NO_COLOR set (no-color.org).
pub fn want_colour() -> bool {
    use std::io::IsTerminal as _;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}
