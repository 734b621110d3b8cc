//! `svkit-init`: the container's entrypoint, supervised wherever it runs.
//!
//! s6-overlay's `/init` runs only as PID 1 (and needs a writable `/run`):
//! under `docker run --init`, a shared pid namespace, Fly.io, ECS with an
//! injected init, or an image without s6-overlay, it cannot. s6 itself
//! can: `s6-svscan`, `s6-supervise` and `s6-log` run as ordinary
//! processes. So svkit-init hands over to `/init` where it works ([`decide`])
//! and otherwise runs the same stages itself with s6's tools ([`tree`]):
//! the same slots, redirect, hooks, logs and exit codes.
//!
//! Owns: the choice of mode, the run dir and s6-overlay's stage 2 and 3
//! work without it ([`stages`], [`tree`]).

pub mod stages;
pub mod tree;

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::msg::{self, exit, strerror};

/// Runs the container: execs `/init svkit-wrap -- ARGV` in the overlay
/// mode (returns only if that exec failed), or supervises itself. The
/// container's exit code.
pub fn start(argv: Vec<OsString>) -> i32 {
    match decide(&Facts::gather()) {
        Err(why) => {
            msg::fatal(why);
            i32::from(exit::USAGE)
        }
        Ok(Mode::Overlay(why)) => {
            msg::info(format_args!("{why}: handing over to {}", OVERLAY_INIT));
            let e = std::process::Command::new(OVERLAY_INIT)
                .arg("svkit-wrap")
                .arg("--")
                .args(&argv)
                .exec();
            msg::fatal(format_args!(
                "unable to run {}: {}",
                OVERLAY_INIT,
                strerror(&e)
            ));
            i32::from(exit::SYSTEM)
        }
        Ok(Mode::Portable(why)) => tree::run(argv, &why),
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

// Which init runs the container: s6-overlay's `/init`, or svkit-init's
// own supervision with s6's tools. A pure decision over a few facts, so
// every case is a unit test.

/// s6-overlay's entrypoint, and the dir only s6-overlay installs.
pub const OVERLAY_INIT: &str = "/init";
pub const OVERLAY_PACKAGE: &str = "/package/admin/s6-overlay";

/// The variable that picks the mode: `s6` (svkit-init supervises, even as
/// PID 1 of an s6-overlay image) or `overlay` (hand over to `/init`).
pub const MODE_ENV: &str = "SVKIT_INIT";

/// What the decision rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Our pid, in the container's pid namespace.
    pub pid: u32,
    /// What PID 1 is (its `comm`, `unknown` when unreadable), when it is
    /// not us.
    pub pid1: String,
    /// The image has s6-overlay (`/init` and its package dir).
    pub overlay: bool,
    pub uid: u32,
    /// `/run` is writable by `uid`; else s6-overlay's preinit fixes it
    /// with its setuid helper, which no-new-privileges disables.
    pub run_writable: bool,
    pub no_new_privs: bool,
    /// `/run` is mounted noexec: s6-overlay runs its boot scripts there.
    pub run_noexec: bool,
    /// [`MODE_ENV`], when set and not empty.
    pub forced: Option<String>,
}

impl Facts {
    /// This process, this image.
    pub fn gather() -> Facts {
        let comm = fs::read_to_string("/proc/1/comm").unwrap_or_default();
        let pid1 = Some(comm.trim_end()).filter(|c| !c.is_empty());
        Facts {
            pid: std::process::id(),
            pid1: pid1.unwrap_or("unknown").to_string(),
            overlay: Path::new(OVERLAY_INIT).is_file() && Path::new(OVERLAY_PACKAGE).is_dir(),
            uid: nix::unistd::getuid().as_raw(),
            run_writable: nix::unistd::access("/run", nix::unistd::AccessFlags::W_OK).is_ok(),
            no_new_privs: fs::read_to_string("/proc/self/status").is_ok_and(|s| {
                s.lines()
                    .any(|l| l.split_whitespace().eq(["NoNewPrivs:", "1"]))
            }),
            run_noexec: nix::sys::statvfs::statvfs("/run")
                .is_ok_and(|v| v.flags().contains(nix::sys::statvfs::FsFlags::ST_NOEXEC)),
            forced: std::env::var(MODE_ENV).ok().filter(|v| !v.is_empty()),
        }
    }
}

/// The mode, and the reason the boot line gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Exec s6-overlay's `/init`: nothing changes.
    Overlay(String),
    /// svkit-init runs s6-svscan and carries out the stages itself.
    Portable(String),
}

/// Picks the mode; an unknown [`MODE_ENV`] value, or `overlay` where it
/// cannot work, is an error (the container must not start on a guess).
pub fn decide(f: &Facts) -> Result<Mode, String> {
    match f.forced.as_deref() {
        None => {}
        Some("s6") => return Ok(Mode::Portable(format!("{MODE_ENV}=s6"))),
        Some("overlay") if !f.overlay => {
            return Err(format!(
                "{MODE_ENV}=overlay, but this image has no s6-overlay ({OVERLAY_INIT} and {OVERLAY_PACKAGE})"
            ))
        }
        Some("overlay") if f.pid != 1 => {
            return Err(format!(
                "{MODE_ENV}=overlay, but s6-overlay's {OVERLAY_INIT} can only run as PID 1 (PID 1 is {})",
                f.pid1
            ))
        }
        Some("overlay") => return Ok(Mode::Overlay(format!("{MODE_ENV}=overlay"))),
        Some(other) => {
            return Err(format!(
                "{MODE_ENV} must be s6 or overlay (or unset, to choose by itself), not '{}'",
                crate::msg::escape(other)
            ))
        }
    }
    if !f.overlay {
        return Ok(Mode::Portable(format!(
            "no s6-overlay in this image (no {OVERLAY_INIT})"
        )));
    }
    if f.pid != 1 {
        return Ok(Mode::Portable(format!("not PID 1 (PID 1 is {})", f.pid1)));
    }
    if f.run_noexec {
        return Ok(Mode::Portable(format!(
            "s6-overlay's {OVERLAY_INIT} cannot run: /run is mounted noexec"
        )));
    }
    if f.uid != 0 && !f.run_writable && f.no_new_privs {
        return Ok(Mode::Portable(format!(
            "s6-overlay's {OVERLAY_INIT} cannot run as uid {}: /run is not writable, and no-new-privileges disables its setuid helper",
            f.uid
        )));
    }
    Ok(Mode::Overlay("PID 1 with s6-overlay".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            pid: 1,
            pid1: String::new(),
            overlay: true,
            uid: 0,
            run_writable: true,
            no_new_privs: false,
            run_noexec: false,
            forced: None,
        }
    }

    #[test]
    fn pid_1_of_an_overlay_image_hands_over_to_init() {
        assert!(matches!(decide(&facts()), Ok(Mode::Overlay(_))));
        // Not writable: s6-overlay's setuid helper fixes /run.
        let nonroot = Facts {
            uid: 10001,
            run_writable: false,
            ..facts()
        };
        assert!(
            matches!(decide(&nonroot), Ok(Mode::Overlay(_))),
            "{nonroot:?}"
        );
    }

    #[test]
    fn anywhere_else_svkit_init_supervises_and_says_why() {
        let cases = [
            (
                Facts {
                    pid: 7,
                    pid1: "docker-init".into(),
                    ..facts()
                },
                "not PID 1 (PID 1 is docker-init)",
            ),
            (
                Facts {
                    overlay: false,
                    ..facts()
                },
                "no s6-overlay in this image (no /init)",
            ),
            (
                Facts {
                    uid: 10000,
                    run_writable: false,
                    no_new_privs: true,
                    ..facts()
                },
                "s6-overlay's /init cannot run as uid 10000: /run is not writable, and no-new-privileges disables its setuid helper",
            ),
            (
                Facts {
                    run_noexec: true,
                    ..facts()
                },
                "s6-overlay's /init cannot run: /run is mounted noexec",
            ),
            (
                Facts {
                    forced: Some("s6".into()),
                    ..facts()
                },
                "SVKIT_INIT=s6",
            ),
        ];
        for (f, why) in cases {
            assert_eq!(decide(&f), Ok(Mode::Portable(why.to_string())), "{f:?}");
        }
    }

    #[test]
    fn a_forced_mode_that_cannot_work_is_refused() {
        let bad = Facts {
            forced: Some("tini".into()),
            ..facts()
        };
        let e = decide(&bad).expect_err("unknown value");
        assert!(e.contains("must be s6 or overlay"), "{e}");
        let none = Facts {
            forced: Some("overlay".into()),
            overlay: false,
            ..facts()
        };
        assert!(decide(&none).is_err());
        let not1 = Facts {
            forced: Some("overlay".into()),
            pid: 9,
            pid1: "tini".into(),
            ..facts()
        };
        assert!(decide(&not1)
            .expect_err("not pid 1")
            .contains("PID 1 is tini"));
    }
}
