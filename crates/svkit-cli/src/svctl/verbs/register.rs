//! `svctl register NAME` / `svctl unregister NAME`: an instance of a
//! templated slot (`gateway-{instance}`) added or removed at runtime. The
//! instance is recorded under the config's `state_dir`
//! (`svkit::state::register`), which reconcile reads like the config's own
//! instance names; then reconcile runs, creating or deleting the slot.
//! All of it under the scandir lock, from the first read of the config to
//! the last write: an `apply` or another `register` running at the same
//! time either sees the record or runs after it, never in between.

use std::path::Path;
use std::time::Duration;

use svkit::config::names::{check_instance_name, check_slot_name, INSTANCE_VAR};
use svkit::config::{self, Template};
use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, Fatal};
use svkit::reconcile::ApplyOptions;
use svkit::s6::control::wait_supervised;
use svkit::state;

use super::ctx::require_tree_user;
use super::reconcile::{apply_locked, lock};
use crate::config::Policy;
use crate::svctl::args::RegisterArgs;

/// How long a new slot may take to get its supervisor.
const SUPERVISE_TIMEOUT: Duration = Duration::from_secs(5);

fn pick(args: &RegisterArgs, mut all: Vec<Template>) -> Result<Template, Fatal> {
    let list = (all.iter().map(|t| t.name.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    match &args.template {
        Some(want) => all.into_iter().find(|t| &t.name == want).ok_or_else(|| {
            Fatal::usage(
                format!("unknown template {want}"),
                format!("templated slots in the config: {list}"),
            )
        }),
        None if all.len() == 1 => Ok(all.remove(0)),
        None if all.is_empty() => Err(Fatal::usage(
            "nothing to register into",
            "the config declares no slot with {instance} and instances",
        )),
        None => Err(Fatal::usage(
            "several templated slots",
            format!("choose one with --slot: {list}"),
        )),
    }
}

/// The config, template and expanded slot name, after every check.
fn resolve(args: &RegisterArgs) -> Result<(config::Model, Template, String), Fatal> {
    let dir = args.at.config.dir();
    // The apply that follows loads the config again and prints its
    // warnings: once is enough.
    let model = crate::config::required(&dir, Policy::Required { quiet: true })?.model;
    let t = pick(args, model.templates.clone())?;
    let slot = t.name.replace(INSTANCE_VAR, &args.name);
    let bad = check_instance_name(&args.name)
        .map_err(|e| format!("instance `{}`: {e}", args.name))
        .and_then(|()| check_slot_name(&slot).map_err(|e| format!("slot `{slot}`: {e}")));
    if let Err(why) = bad {
        return Err(Fatal::new(
            NOT_OK,
            format!("unable to register {}", args.name),
            why,
        ));
    }
    Ok((model, t, slot))
}

pub fn register(args: &RegisterArgs) -> Result<u8, Fatal> {
    let scandir = args.at.scandir();
    require_tree_user(&scandir, "register an instance")?;
    let opts = ApplyOptions::default();
    // Held until the slot has its supervisor: success means it is there.
    let lock = lock(&scandir, opts.lock_timeout)?;
    let (model, t, slot) = resolve(args)?;
    let failed = || format!("unable to register {}", args.name);
    let sd = Path::new(&model.state_dir);
    let registered = state::is_registered(sd, &t.name, &args.name);
    if !registered && model.slot(&slot).is_some() {
        msg::fatal(format_args!(
            "unable to register {}: slot {slot} is already declared by the config",
            args.name
        ));
        return Ok(NOT_OK);
    }
    // Only root hands the record to the slot's user: in a non-root tree
    // (the only one a non-root caller gets here) the caller is the tree's
    // user and owns what it writes.
    let as_root = nix::unistd::geteuid().is_root();
    let owner = match t.user.as_deref().filter(|u| *u != "root" && as_root) {
        Some(u) => Some(svkit::reconcile::lookup_user(u).map_err(|e| Fatal::system(failed(), e))?),
        None => None,
    };
    state::register(sd, &t.name, &args.name, owner).map_err(|e| Fatal::system(failed(), e))?;
    let applied = apply_locked(&lock, &args.at.config.dir(), &opts).and_then(|o| {
        if o.plans.iter().any(|p| p.name == slot) {
            return Ok(());
        }
        let ignored = "reconcile ignored it (see the warnings above)";
        Err(Fatal::new(NOT_OK, failed(), ignored))
    });
    if let Err(f) = applied {
        if !registered {
            let _ = state::unregister(sd, &t.name, &args.name);
        }
        return Err(f);
    }
    wait_supervised(&scandir.join(&slot), SUPERVISE_TIMEOUT)
        .map_err(|e| Fatal::system(failed(), e))?;
    Ok(OK)
}

pub fn unregister(args: &RegisterArgs) -> Result<u8, Fatal> {
    let scandir = args.at.scandir();
    require_tree_user(&scandir, "unregister an instance")?;
    let opts = ApplyOptions::default();
    let lock = lock(&scandir, opts.lock_timeout)?;
    let (model, t, slot) = resolve(args)?;
    let sd = Path::new(&model.state_dir);
    let failed = || format!("unable to unregister {}", args.name);
    let removed =
        state::unregister(sd, &t.name, &args.name).map_err(|e| Fatal::system(failed(), e))?;
    if !removed {
        let why = if model.slot(&slot).is_some() {
            format!("slot {slot} is declared by the config, not registered")
        } else {
            format!("not a registered instance of {}", t.name)
        };
        return Err(Fatal::new(NOT_OK, failed(), why));
    }
    if let Err(f) = apply_locked(&lock, &args.at.config.dir(), &opts) {
        // Keep the registry in step with the scandir: the slot is still there.
        let _ = state::register(sd, &t.name, &args.name, None);
        return Err(f);
    }
    Ok(OK)
}
