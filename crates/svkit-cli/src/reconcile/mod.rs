//! `svkit-reconcile`, the `/etc/cont-init.d/` hook. Reads the config, renders
//! the slots into the scandir, prunes stale ones, starts what should start.
//! The same algorithm as `svctl apply`, slot by slot: a slot that cannot
//! be made (its log dir, its user, ...) is reported and the others are
//! made (`svctl apply` is all or nothing). Only a config that cannot be
//! used at all stops the boot (exit 1): a slot left out is the container
//! running degraded, which `svctl status` (the HEALTHCHECK) reports, never
//! a reason for s6-overlay's `S6_BEHAVIOUR_IF_STAGE2_FAILS=2` to stop it.
//!
//! [`main`] is the whole program; `svkit-docgen` renders completions and
//! man pages from [`cli::Cli`].

pub mod cli;

use cli::Cli;
use std::process::ExitCode;
use svkit::msg;
use svkit::reconcile::{ApplyOptions, Scope};

/// The whole program: reconciles, returns the exit code.
pub fn main() -> ExitCode {
    msg::init("svkit-reconcile");
    let cli: Cli = crate::clapmsg::parse();
    let config_dir = cli
        .config_dir
        .unwrap_or_else(svkit::config::config_dir_from_env);
    let scandir = cli.scandir.unwrap_or_else(svkit::container::scandir);
    if let Err(e) = svkit::slot::end::forget_decision() {
        msg::warn(format_args!(
            "unable to clear an earlier run's exit code ({}): {}; the stop hook may leave the foreground command to the final TERM",
            svkit::slot::end::decided_exitcode().display(),
            msg::strerror(&e)
        ));
    }
    let opts = ApplyOptions {
        lock_timeout: cli.lock_timeout,
        scope: Scope::EachSlot,
        ..Default::default()
    };
    // Before reading the config and the registered instances: a `register`
    // racing the boot is either seen whole or waits for this apply.
    let lock = match crate::apply::lock(&scandir, opts.lock_timeout) {
        Ok(l) => l,
        Err(f) => return f.report(),
    };
    let applied = crate::apply::apply(&lock, &config_dir, &opts, |prepared| {
        if svkit::container::s6_overlay_missing().is_none() {
            let grace = svkit::container::setting("S6_KILL_GRACETIME");
            if let Some(note) = svkit::container::kill_grace_note(grace.as_deref()) {
                msg::info(note);
            }
        }
        // A slot's declared stop time that the stop hook's bounds would
        // cut: said once here, as `svctl check` says it.
        let stops = svkit::stopbudget::Settings::from_container();
        if let Some(note) = svkit::stopbudget::note(&prepared.model, &stops) {
            msg::warn(note);
        }
        // A program missing from the image is the slot's own failure (it
        // exits 127 at each start, as status shows): said once here, in
        // plain words.
        let path = svkit::container::container_env().remove("PATH");
        let root = std::path::Path::new("/");
        for d in svkit::config::programs::missing_programs(&prepared.model, root, path.as_deref()) {
            msg::warn(d);
        }
        // Records of names an earlier image declared (a renamed slot or
        // template) are never read again: said once a boot, in one line.
        crate::svctl::verbs::ctx::orphans(&prepared.model);
    });
    match applied {
        Ok(a) => {
            if let Some(f) = a.failed {
                msg::warn(format_args!(
                    "{f}; the boot goes on without them (`svctl status` counts them missing)"
                ));
            }
            ExitCode::SUCCESS
        }
        Err(f) => f.report(),
    }
}
