//! svkit-wrap: the image's CMD wrapper. `ENTRYPOINT ["/init", "svkit-wrap", "--"]`.
//!
//! Routes argv, then either redirects it into its supervised slot and stays
//! alive in-process, or execs it in the foreground (its exit code is the
//! container's). Argument parsing is by hand: everything after an optional
//! `--` belongs to the wrapped command, flags included.

use crate::config::Policy;
use crate::wrap::{foreground, HELP, VERSION};
use std::path::Path;
use svkit::config::{self, Model};
use svkit::container;
use svkit::msg::{self, exit, strerror};
use svkit::redirect::{self, Decision, Facts};
use svkit::slotenv::oneoff::OneOff;

/// Prints to stdout (`--help`, `--version`) and exits.
fn print_and_exit(text: String) -> ! {
    match msg::out(text) {
        Ok(()) => std::process::exit(i32::from(exit::OK)),
        Err(f) => msg::die(f.code, f),
    }
}

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
    // Bytes, not strings: an argument that is not UTF-8 is passed through.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match args.first().and_then(|a| a.to_str()) {
        Some("--") => {
            args.remove(0);
        }
        Some("--help") | Some("-h") => print_and_exit(format!("{HELP}\n")),
        // Internal: the keep-alive after a redirect (see exec_keep_alive).
        Some("--hold") => std::process::exit(redirect::keep_alive()),
        Some("--version") | Some("-V") => print_and_exit(format!("svkit-wrap {VERSION}\n")),
        _ => {}
    }
    // Started by svkit-init, whose signals stay blocked (read from a
    // signalfd), this process inherited that mask: the CMD must not.
    svkit::init::unblock_all();
    let config_dir = config::config_dir_from_env();
    let model = load_model(&config_dir);
    let default_program = model.as_ref().and_then(|m| m.default_program.as_deref());
    let routed = match redirect::route(&args, default_program, foreground::on_path) {
        Ok(r) => r,
        Err(e) => msg::die(exit::USAGE, e),
    };
    let facts = Facts {
        process_env: container::utf8_env(),
        container_env: container::read_env_dir(Path::new(container::CONTAINER_ENV_DIR))
            .unwrap_or_default(),
        s6_missing: container::supervision_missing(),
    };
    let s6_running = facts.s6_missing.is_none();
    let Some(model) = model else {
        foreground::record(None, s6_running);
        foreground::exec(
            &OneOff {
                argv: routed,
                ..OneOff::default()
            },
            &facts.container_env,
        )
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
