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
//! Owns: the choice of mode, the run dir and s6-overlay's stage 2 and 3
//! work without it ([`stages`], [`tree`]).

pub mod mode;
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

/// What svkit-init runs (s6-svscan, the hooks) goes through `svkit
/// unblocked PROG ARGS...`: svkit-init reads its signals from a signalfd,
/// so it keeps them blocked, and a child would inherit that mask (a hook's
/// `trap`, a program's TERM, would never fire). This clears the mask and
/// execs PROG; it returns only when the exec failed.
pub fn unblocked_main(args: std::env::ArgsOs) -> std::process::ExitCode {
    msg::init("svkit unblocked");
    let argv: Vec<OsString> = args.collect();
    let Some((prog, rest)) = argv.split_first() else {
        msg::fatal("usage: svkit unblocked PROG [ARGS...] (run by svkit-init)");
        return std::process::ExitCode::from(exit::USAGE);
    };
    unblock_all();
    let e = std::process::Command::new(prog).args(rest).exec();
    msg::fatal(format_args!(
        "unable to run {}: {}",
        prog.to_string_lossy(),
        strerror(&e)
    ));
    std::process::ExitCode::from(if e.kind() == std::io::ErrorKind::NotFound {
        exit::NOT_FOUND
    } else {
        exit::CANNOT_EXECUTE
    })
}

/// Clears this thread's signal mask: a process started by svkit-init
/// (the CMD's svkit-wrap, through `svkit unblocked` the rest) starts as
/// any process would.
pub fn unblock_all() {
    let _ = nix::sys::signal::SigSet::all().thread_unblock();
}

/// `prog` run through `svkit unblocked` (see [`unblocked_main`]).
pub(crate) fn unblocked(prog: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new("/proc/self/exe");
    c.arg0("svkit").arg("unblocked").arg(prog);
    c
}
