//! `svkit-init`: the container's entrypoint, supervised wherever it runs.
//!
//! s6-overlay's `/init` runs only as PID 1 (and needs a writable `/run`):
//! under `docker run --init`, a shared pid namespace, Fly.io, ECS with an
//! injected init, or an image without s6-overlay, it cannot. s6 itself
//! can: `s6-svscan`, `s6-supervise` and `s6-log` run as ordinary
//! processes. So svkit-init hands over to `/init` where it works ([`mode`])
//! and otherwise runs the same stages itself with s6's tools ([`tree`]):
//! the same slots, redirect, hooks, logs and exit codes.
//!
//! Owns: the choice of mode, the run dir ([`place`]), s6-overlay's stage 2
//! and 3 work without it ([`stages`], [`tree`]).

pub mod mode;
pub mod place;
pub mod stages;
pub mod tree;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use crate::msg::{self, exit, strerror};

/// Runs the container: execs `/init svkit-wrap -- ARGV` in the overlay
/// mode (returns only if that exec failed), or supervises itself. The
/// container's exit code.
pub fn start(argv: Vec<OsString>) -> i32 {
    match mode::decide(&mode::Facts::gather()) {
        Err(why) => {
            msg::fatal(why);
            i32::from(exit::USAGE)
        }
        Ok(mode::Mode::Overlay(why)) => {
            msg::info(format_args!(
                "{why}: handing over to {}",
                mode::OVERLAY_INIT
            ));
            let e = std::process::Command::new(mode::OVERLAY_INIT)
                .arg("svkit-wrap")
                .arg("--")
                .args(&argv)
                .exec();
            msg::fatal(format_args!(
                "unable to run {}: {}",
                mode::OVERLAY_INIT,
                strerror(&e)
            ));
            i32::from(exit::SYSTEM)
        }
        Ok(mode::Mode::Portable(why)) => tree::run(argv, &why),
    }
}
