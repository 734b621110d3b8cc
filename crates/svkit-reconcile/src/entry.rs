//! svkit-reconcile: the `/etc/cont-init.d/` hook. Reads the config, renders
//! the slots into the scandir, prunes stale ones, starts what should start.
//! The same algorithm as `svctl apply`, slot by slot: a slot that cannot
//! be made is reported and the others are made (`svctl apply` is all or
//! nothing).

use crate::cli::Cli;
use std::process::ExitCode;
use std::time::Duration;
use svkit::config::LoadError;
use svkit::msg::{self, exit, Fatal};
use svkit::reconcile::{self, ApplyOptions, ReconcileError, Scope};

/// The whole program: reconciles, returns the exit code.
pub fn main() -> ExitCode {
    msg::init("svkit-reconcile");
    let cli: Cli = msg::parse();
    let config_dir = cli
        .config_dir
        .unwrap_or_else(svkit::config::config_dir_from_env);
    let scandir = cli.scandir.unwrap_or_else(svkit::container::scandir);
    let opts = ApplyOptions {
        lock_timeout: Duration::from_millis(cli.lock_timeout),
        scope: Scope::EachSlot,
        ..Default::default()
    };
    let prepared = match reconcile::prepare(&config_dir, &scandir) {
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
    // A program missing from the image is the slot's own failure (it exits
    // 127 at each start, as status shows): said once here, in plain words.
    let path = svkit::container::container_env().remove("PATH");
    let root = std::path::Path::new("/");
    for d in svkit::config::programs::missing_programs(&prepared.model, root, path.as_deref()) {
        msg::warn(d);
    }
    match reconcile::apply(&scandir, &prepared.desired, &opts) {
        Ok(outcome) => {
            let failed = outcome.report(&scandir);
            match msg::out(outcome.audit()) {
                Ok(()) => failed.map_or(ExitCode::SUCCESS, |f| f.report()),
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
