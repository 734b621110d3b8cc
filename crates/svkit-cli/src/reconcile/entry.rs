//! svkit-reconcile: the `/etc/cont-init.d/` hook. Reads the config, renders
//! the slots into the scandir, prunes stale ones, starts what should start.
//! The same algorithm as `svctl apply`, slot by slot: a slot that cannot
//! be made (its log dir, its user, ...) is reported and the others are
//! made (`svctl apply` is all or nothing). Only a config that cannot be
//! used at all stops the boot (exit 1): a slot left out is the container
//! running degraded, which `svctl status` (the HEALTHCHECK) reports, never
//! a reason for s6-overlay's `S6_BEHAVIOUR_IF_STAGE2_FAILS=2` to stop it.

use crate::reconcile::cli::Cli;
use std::process::ExitCode;
use svkit::config::LoadError;
use svkit::msg::{self, exit, Fatal};
use svkit::reconcile::{self, ApplyOptions, ReconcileError, ScandirLock, Scope};

/// The whole program: reconciles, returns the exit code.
pub fn main() -> ExitCode {
    msg::init("svkit-reconcile");
    let cli: Cli = crate::clapmsg::parse();
    let config_dir = cli
        .config_dir
        .unwrap_or_else(svkit::config::config_dir_from_env);
    let scandir = cli.scandir.unwrap_or_else(svkit::container::scandir);
    let opts = ApplyOptions {
        lock_timeout: cli.lock_timeout,
        scope: Scope::EachSlot,
        ..Default::default()
    };
    // Before reading the config and the registered instances: a `register`
    // racing the boot is either seen whole or waits for this apply.
    let lock = match ScandirLock::acquire(&scandir, opts.lock_timeout) {
        Ok(l) => l,
        Err(e) => {
            return Fatal::system(format!("unable to reconcile {}", scandir.display()), e).report()
        }
    };
    let prepared = match reconcile::prepare_for(&config_dir, &scandir, opts.scope) {
        Ok(p) => p,
        Err(LoadError::Invalid(diags)) => {
            msg::invalid_config(&config_dir, "nothing changed", &diags);
            return ExitCode::from(exit::NOT_OK);
        }
        Err(e) => return Fatal::system(e.to_string(), "").report(),
    };
    for w in &prepared.warnings {
        msg::warn(w);
    }
    if svkit::container::s6_overlay_missing().is_none() {
        let grace = svkit::container::setting("S6_KILL_GRACETIME");
        if let Some(note) = svkit::container::kill_grace_note(grace.as_deref()) {
            msg::info(note);
        }
    }
    // A program missing from the image is the slot's own failure (it exits
    // 127 at each start, as status shows): said once here, in plain words.
    let path = svkit::container::container_env().remove("PATH");
    let root = std::path::Path::new("/");
    for d in svkit::config::programs::missing_programs(&prepared.model, root, path.as_deref()) {
        msg::warn(d);
    }
    match reconcile::apply(&lock, &prepared.desired, &opts) {
        Ok(outcome) => {
            if let Some(f) = outcome.report(&scandir) {
                msg::warn(format_args!(
                    "{f}; the boot goes on without them (`svctl status` counts them missing)"
                ));
            }
            match msg::out(outcome.audit()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => f.report(),
            }
        }
        // Too many services for s6-svscan is the config's fault: exit 1
        // as an invalid config, its own text saying it all.
        Err(e @ ReconcileError::TooManyServices(_)) => {
            Fatal::new(e.exit_code(), e.to_string(), "").report()
        }
        Err(e) => Fatal::system(format!("unable to reconcile {}", scandir.display()), e).report(),
    }
}
