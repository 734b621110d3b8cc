//! `svkit-wrap`, the image's CMD wrapper:
//! `ENTRYPOINT ["/init", "svkit-wrap", "--"]`. [`main`] is the whole
//! program, and `svkit-docgen` builds the man page from [`HELP`].
//!
//! Routes argv, then either redirects it into its supervised slot and stays
//! alive in-process, or execs it in the foreground (its exit code is the
//! container's). Argument parsing is by hand (everything after an optional
//! `--` belongs to the wrapped command, flags included), so there is no
//! clap definition to share.

mod foreground;

use crate::config::Policy;
use std::path::Path;
use svkit::config::{self, Model};
use svkit::container;
use svkit::msg::{self, exit, strerror};
use svkit::redirect::{self, Decision, Facts};
use svkit::slotenv::oneoff::OneOff;

/// What `svkit-wrap --help` prints (followed by a newline).
pub const HELP: &str = "svkit-wrap: run the container's command, supervised when the config says so

Usage: svkit-wrap [--] [ARGV...]

Routing: no ARGV runs default_program; an ARGV[0] found on PATH runs as is;
otherwise default_program is prepended (`gateway run` -> `app gateway run`).

A routed command matching a redirect in the config is started in its s6
slot instead, and the process stays alive until the container is stopped
(128+signal): svkit-wrap execs s6-overlay's s6-pause in its place. It runs in the foreground when the redirect's opt-out
flag is given (and removed), its opt-out variable is truthy (1/true/yes),
the slot's sentinel variable is set (a supervised child never redirects),
or s6-overlay is not running (with one warning). Opted out, it runs as its
slot would (user, cwd, env, env files, secrets), after the slot's
depends_on when s6 runs (120 s for them all). Run as the CMD under
s6-overlay, a foreground command is recorded in /run/svkit/foreground:
at docker stop the stop hook sends it its slot's down_signal (else TERM)
and waits up to its stop_timeout_ms (else 5 s); an opt-out's slot does not
start while it runs (svctl start refuses, exit 5). Words after a redirect's
match are refused (100), never dropped: the slot runs its own command.

Exit codes: the foreground command's own; 128+N after signal N while
holding a redirect; 1 invalid config, or a depends_on that never came; 78
an env file or secret refused; 100 nothing to run (no ARGV and no
default_program), or words after a redirect's match; 111 system error; 126
command not executable; 127 command not found.

Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_SCANDIR
(default /run/service), SVKIT_S6_BIN.";

/// What `svkit-wrap --version` prints after `svkit-wrap `.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The config, when there is one (without: nothing to redirect; plain
/// routing still works).
fn load_model(dir: &Path) -> Option<Model> {
    match crate::config::load(dir, Policy::IfPresent) {
        Ok(v) => v.map(|v| v.model),
        Err(f) => {
            f.report();
            std::process::exit(i32::from(f.code))
        }
    }
}

/// The whole program. It never returns: it execs the foreground command,
/// or holds the redirect until a stop signal, or exits.
pub fn main() -> std::process::ExitCode {
    msg::init("svkit-wrap");
    // Internal: the keep-alive after a redirect (see exec_keep_alive).
    if std::env::args_os().nth(1).is_some_and(|a| a == "--hold") {
        std::process::exit(redirect::keep_alive());
    }
    let args = crate::clapmsg::hand_parsed("svkit-wrap", HELP);
    // Started by svkit-init, whose signals stay blocked (read from a
    // signalfd), this process inherited that mask: the CMD must not.
    svkit::init::unblock_all();
    let config_dir = config::config_dir_from_env();
    let model = load_model(&config_dir);
    let default_program = model.as_ref().and_then(|m| m.default_program.as_deref());
    let on_path = |name: &std::ffi::OsStr| container::find_program(Path::new(name)).is_some();
    let routed = redirect::route(&args, default_program, on_path)
        .unwrap_or_else(|e| msg::die(exit::USAGE, e));
    let facts = Facts {
        process_env: container::utf8_env(),
        container_env: container::read_env_dir(Path::new(container::CONTAINER_ENV_DIR))
            .unwrap_or_default(),
        s6_missing: container::supervision_missing(),
    };
    let s6_running = facts.s6_missing.is_none();
    let Some(model) = model else {
        foreground::record(None, s6_running);
        let one = OneOff {
            argv: routed,
            ..OneOff::default()
        };
        foreground::exec(&one, &facts.container_env)
    };
    match redirect::decide(&model, &routed, &facts) {
        Decision::Foreground {
            argv,
            warning,
            as_slot,
            displaces,
        } => {
            if let Some(w) = warning {
                msg::warn(w);
            }
            let slot = as_slot.as_deref().and_then(|n| model.slot(n));
            // Recorded before the slot is stopped: from then on no start
            // of the slot (its `run`, `svctl start`) runs a second copy.
            foreground::record(slot, s6_running);
            if let Some(slot) = &displaces {
                match redirect::displace(&model, slot, &container::scandir()) {
                    Ok(true) => msg::info(format_args!(
                        "slot {slot} runs the same program: stopped it (not remembered) so that only this foreground run does; it does not start again while this run lives"
                    )),
                    Ok(false) => {}
                    Err(e) => msg::die(
                        exit::SYSTEM,
                        format_args!("unable to stop slot {slot} before running in the foreground: {e}"),
                    ),
                }
            }
            let one = match slot {
                Some(slot) => foreground::as_slot(&model, slot, argv, displaces.is_some()),
                None => OneOff {
                    argv,
                    user: model.user.clone(),
                    ..OneOff::default()
                },
            };
            foreground::exec(&one, &facts.container_env)
        }
        Decision::Refused { rule, extra } => {
            let command = model.slot(&rule.slot).map(|s| s.command.as_slice());
            msg::die(
                exit::USAGE,
                redirect::refusal(&routed, &rule, &extra, command),
            )
        }
        Decision::Redirect { rule } => {
            let scandir = container::scandir();
            match redirect::execute(&model, &rule, &scandir) {
                Ok(started) => msg::info(redirect::breadcrumb(&routed, &rule, &started)),
                Err(e) => {
                    // A config past s6-svscan's limit is the config's
                    // fault (1, as an invalid one); the rest, the system's.
                    let code = match &e {
                        redirect::RedirectError::Reconcile(r) => r.exit_code(),
                        _ => exit::SYSTEM,
                    };
                    msg::die(
                        code,
                        format_args!("unable to redirect to slot {}: {e}", rule.slot),
                    )
                }
            }
            let err = redirect::exec_keep_alive(&rule.slot);
            msg::warn(format_args!(
                "unable to re-exec the keep-alive ({}); holding in-process",
                strerror(&err)
            ));
            std::process::exit(redirect::keep_alive())
        }
    }
}
