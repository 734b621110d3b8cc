//! Carry out a redirect: ensure the slot, want it up, start companions.

use crate::config::{Autostart, Model, Redirect};
use crate::reconcile::{self, ApplyOptions, ReconcileError};
use crate::s6::control::{self, Command6, ControlError};
use crate::s6::health;
use crate::state::{self, Desired, StateError};
use std::fmt;
use std::path::Path;
use std::time::Duration;

#[derive(Debug)]
pub enum RedirectError {
    Reconcile(ReconcileError),
    Control(ControlError),
    State(StateError),
    /// The rule names a slot the config does not declare (validation
    /// prevents it; a racing config edit could not).
    NoSlot(String),
}

impl fmt::Display for RedirectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedirectError::Reconcile(e) => write!(f, "unable to render the slot: {e}"),
            RedirectError::Control(e) => write!(f, "{e}"),
            RedirectError::State(e) => write!(f, "{e}"),
            RedirectError::NoSlot(s) => write!(f, "slot {s} is not declared in the config"),
        }
    }
}

impl std::error::Error for RedirectError {}

/// Bound on waiting for s6-svscan to supervise a slot just rendered.
const SUPERVISE_TIMEOUT: Duration = Duration::from_secs(5);

/// Ensures the rule's slot exists (applying the model when it does not),
/// wants it up, and starts the `also_start` slots whose autostart holds.
/// Returns the slots started, the rule's own first.
pub fn execute(
    model: &Model,
    rule: &Redirect,
    scandir: &Path,
) -> Result<Vec<String>, RedirectError> {
    if model.slot(&rule.slot).is_none() {
        return Err(RedirectError::NoSlot(rule.slot.clone()));
    }
    let missing = std::iter::once(&rule.slot)
        .chain(&rule.also_start)
        .any(|s| !scandir.join(s).is_dir());
    let mut warnings = Vec::new();
    if missing {
        let desired = reconcile::desired(model, scandir, &mut warnings);
        reconcile::apply(scandir, &desired, &ApplyOptions::default())
            .map_err(RedirectError::Reconcile)?;
    }
    let facts = health::start_facts(model, &mut warnings);
    let mut started = vec![rule.slot.clone()];
    want_up(model, &rule.slot, scandir)?;
    for name in &rule.also_start {
        let Some(slot) = model.slot(name) else {
            continue;
        };
        if health::autostarts(slot, &facts) {
            want_up(model, name, scandir)?;
            started.push(name.clone());
        }
    }
    Ok(started)
}

fn want_up(model: &Model, name: &str, scandir: &Path) -> Result<(), RedirectError> {
    let Some(slot) = model.slot(name) else {
        return Err(RedirectError::NoSlot(name.to_string()));
    };
    let dir = scandir.join(name);
    control::wait_supervised(&dir, SUPERVISE_TIMEOUT).map_err(RedirectError::Control)?;
    control::send(&dir, &[Command6::Up]).map_err(RedirectError::Control)?;
    // The desired state is for the next boot: recorded after the slot is
    // told to come up (the user waits on that, not on an fsync), and not
    // rewritten when it already says up.
    if slot.autostart == Autostart::Remember {
        let state_dir = Path::new(&model.state_dir);
        if !matches!(state::read_desired(state_dir, name), Ok(Some(Desired::Up))) {
            let owner = slot.run_as().and_then(|u| reconcile::lookup_user(u).ok());
            let owner = owner.filter(|_| nix::unistd::geteuid().is_root());
            state::write_desired(state_dir, name, Desired::Up, owner)
                .map_err(RedirectError::State)?;
        }
    }
    Ok(())
}

/// The line on stderr (an info message) that tells a user where their
/// process went and how to get the old behaviour back.
pub fn breadcrumb(routed: &[std::ffi::OsString], rule: &Redirect, started: &[String]) -> String {
    let mut opt_outs = Vec::new();
    if let Some(flag) = &rule.opt_out_flag {
        opt_outs.push(format!("add {flag}"));
    }
    if let Some(var) = &rule.opt_out_env {
        opt_outs.push(format!("set {var}=1"));
    }
    let also = if started.len() > 1 {
        format!(" (with {})", started[1..].join(", "))
    } else {
        String::new()
    };
    let mut line = format!(
        "`{}` now runs under s6 supervision in slot {}{also}: restarted on crash, logs in docker logs; see `svctl status`.",
        super::decide::shown(routed),
        rule.slot
    );
    if !opt_outs.is_empty() {
        line.push_str(&format!(
            " To run it in the foreground instead, {}.",
            opt_outs.join(" or ")
        ));
    }
    line
}
