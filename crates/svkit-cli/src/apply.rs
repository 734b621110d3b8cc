//! Prepare → warn → apply → report under the scandir lock: what the boot
//! hook and `svctl apply|register|unregister` do (and `svctl plan` up to
//! the apply). The algorithm is `svkit::reconcile`; here its messages and
//! exit codes.

use std::path::Path;
use std::time::Duration;

use crate::config::{Policy, NOTHING_CHANGED};
use svkit::msg::{self, Fatal};
use svkit::reconcile::{
    self, ApplyOptions, ApplyReport, Prepared, ReconcileError, ScandirLock, Scope,
};

/// Takes the scandir lock, before anything is read: what is planned from
/// must be what is there when it is written.
pub fn lock(scandir: &Path, timeout: Duration) -> Result<ScandirLock, Fatal> {
    ScandirLock::acquire(scandir, timeout)
        .map_err(|e| Fatal::system(format!("unable to reconcile {}", scandir.display()), e))
}

/// Loads ([`Policy::Apply`]) and renders for `scope`, printing the
/// warnings; an invalid config prints every error and changes nothing.
pub fn prepare(config_dir: &Path, scandir: &Path, scope: Scope) -> Result<Prepared, Fatal> {
    let validated = crate::config::required(config_dir, Policy::Apply)?;
    let p = reconcile::prepare(validated, scandir, scope)
        .map_err(|e| crate::config::unusable(config_dir, e, Some(NOTHING_CHANGED)))?;
    crate::config::warn(&p.warnings);
    Ok(p)
}

/// What an apply (or plan) of `scandir` failed on. Too many services for
/// s6-svscan is the config's fault: exit 1, as an invalid config, its own
/// text saying it all.
pub fn failed(scandir: &Path, e: ReconcileError) -> Fatal {
    match e {
        e @ ReconcileError::TooManyServices(_) => Fatal::new(e.exit_code(), e.to_string(), ""),
        e => Fatal::system(format!("unable to reconcile {}", scandir.display()), e),
    }
}

pub struct Applied {
    pub outcome: ApplyReport,
    /// Slots that could not be made, named (each already said).
    pub failed: Option<Fatal>,
}

/// Prepares and applies under `lock`, printing the warnings, what was
/// not applied and the audit lines; `before` sees what is about to be
/// applied.
pub fn apply(
    lock: &ScandirLock,
    config_dir: &Path,
    opts: &ApplyOptions,
    before: impl FnOnce(&Prepared),
) -> Result<Applied, Fatal> {
    let scandir = lock.scandir();
    let prepared = prepare(config_dir, scandir, opts.scope)?;
    before(&prepared);
    let outcome =
        reconcile::apply(lock, &prepared.desired, opts).map_err(|e| failed(scandir, e))?;
    let failed = outcome.report(scandir);
    msg::out(outcome.audit())?;
    Ok(Applied { outcome, failed })
}
