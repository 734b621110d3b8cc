//! The config as each tool loads it: one loader, one printer of its
//! warnings, and a policy that names what differs between the tools (the
//! config's own rules are `svkit::config`'s).

use std::io::ErrorKind;
use std::path::Path;

use svkit::config::{Diagnostic, LoadError, Validated};
use svkit::msg::{self, exit, Fatal};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Verbs that only need the scandir (status, start, wait, ...):
    /// without a config dir (outside an image) nothing is said; a config
    /// that cannot be used is one warning line; either way they go on
    /// without it. Its warnings are for the verbs about the config.
    Lenient,
    /// svkit-wrap: without a config dir there is nothing to redirect; a
    /// config that cannot be used is fatal.
    IfPresent,
    /// The verbs about the config (render, exec, register): it must
    /// load. `quiet`: its warnings are left to the load before any write.
    Required { quiet: bool },
    /// `svctl check`: as `Required`, but maybe where the image is built,
    /// not in the environment the slots run with: a `${VAR}` unset there
    /// and without a default is a warning (`config::Checking`).
    Check,
    /// The boot hook, `plan` and `apply`: it must load, an invalid one
    /// changes nothing (said so), and its warnings are printed with the
    /// render's (`svkit::reconcile::prepare`).
    Apply,
}

/// Prints the warnings of a load (and of a render).
pub fn warn(warnings: &[impl std::fmt::Display]) {
    for w in warnings {
        msg::warn(w);
    }
}

/// The config in `dir`, with the instances registered at runtime (as the
/// boot hook sees it). `None` only where `policy` lets the tool go on
/// without one; an invalid config is reported in full (`Fatal::reported`).
pub fn load(dir: &Path, policy: Policy) -> Result<Option<Validated>, Fatal> {
    let live = svkit::state::LiveInstances;
    let src: &dyn svkit::config::InstanceSource = match policy {
        Policy::Check => &svkit::config::Checking(&live),
        _ => &live,
    };
    let err = match svkit::config::load(dir, src) {
        Ok(v) => {
            if matches!(
                policy,
                Policy::IfPresent | Policy::Required { quiet: false } | Policy::Check
            ) {
                warn(&v.warnings);
            }
            return Ok(Some(v));
        }
        Err(e) => e,
    };
    let missing = matches!(&err, LoadError::Io { path, source }
        if path == dir && source.kind() == ErrorKind::NotFound);
    match (policy, err) {
        (Policy::Lenient | Policy::IfPresent, _) if missing => Ok(None),
        (Policy::Lenient, e) => {
            let why = e.to_string();
            let first = why.lines().next().unwrap_or_default();
            msg::warn(format_args!("config {} not used: {first}", dir.display()));
            Ok(None)
        }
        (Policy::Apply, e) => Err(unusable(dir, e, Some(NOTHING_CHANGED))),
        (_, e) => Err(unusable(dir, e, None)),
    }
}

/// What an apply says after an invalid config's errors.
pub const NOTHING_CHANGED: &str = "nothing changed";

/// [`load`] with a policy that needs the config: [`Policy::Required`],
/// [`Policy::Check`] or [`Policy::Apply`].
pub fn required(dir: &Path, policy: Policy) -> Result<Validated, Fatal> {
    load(dir, policy)?
        // Never None: only the lenient policies go on without a config.
        .ok_or_else(|| Fatal::system(format!("no config in {}", dir.display()), ""))
}

/// A config that cannot be used: every error of an invalid one printed
/// (after `tail`, else their count), or what kept it from being read.
pub fn unusable(dir: &Path, e: LoadError, tail: Option<&str>) -> Fatal {
    match e {
        LoadError::Invalid(diags) => invalid(dir, &diags, tail),
        LoadError::Io { path, source } => Fatal::io(
            format!("unable to read config {}", msg::path(&path)),
            &source,
        ),
    }
}

/// Prints `diags` as an invalid config (after `tail`, else their count).
pub fn invalid(dir: &Path, diags: &[Diagnostic], tail: Option<&str>) -> Fatal {
    let n = diags.len();
    let count = format!("{n} error{}", if n == 1 { "" } else { "s" });
    msg::invalid_config(dir, tail.unwrap_or(&count), diags);
    Fatal::reported(exit::NOT_OK)
}
