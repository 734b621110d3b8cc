//! `svkit`: the five programs in one executable, busybox-style. Installed
//! as `svkit` with `svkit-init`, `svkit-reconcile`, `svkit-wrap`, `svctl`
//! and `svkit-lifeline` as symlinks to it; the name it is run as picks the
//! program. `svkit TOOL ARGS...` runs TOOL the same way.
//!
//! Why one file: statically linked, each program carries its own copy of
//! libc and of Rust's standard library (about 1 MB each), so four separate
//! binaries cannot be small; one shares them (docs/PERFORMANCE.md).
#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::ExitCode;

use svkit::msg::{self, exit, strerror};

type Program = fn() -> ExitCode;

/// Every program, by the name it answers to.
const PROGRAMS: [(&str, Program); 5] = [
    ("svctl", svkit_cli::svctl::main),
    ("svkit-init", svkit_cli::init::main),
    ("svkit-lifeline", svkit_cli::lifeline::main),
    ("svkit-reconcile", svkit_cli::reconcile::main),
    ("svkit-wrap", svkit_cli::wrap::main),
];

/// What rendered scripts run, not people: never linked, not in `--list`
/// (docs/config.md, `env_file`, `secrets` and `log.format`).
const INTERNAL: [(&str, Internal); 14] = [
    ("foreground-stop", svkit::foreground::main),
    ("job", svkit_cli::internal::job::main),
    ("liveness", svkit_cli::internal::liveness::main),
    ("log-claim", svkit::claim::log_main),
    ("log-stdout", svkit::logs::stdout::main),
    ("log-watch", svkit::logs::watch::main),
    ("say", svkit_cli::internal::say::main),
    ("serve", svkit_cli::internal::serve::main),
    ("slot-claim", svkit::claim::main),
    ("slot-end", svkit_cli::internal::slot_end::main),
    ("slot-env", svkit::slotenv::main),
    ("stop-budget", svkit::stopbudget::main),
    ("stop-leftovers", svkit::leftovers::main),
    ("unblocked", svkit::init::unblocked_main),
];

type Internal = fn(std::env::ArgsOs) -> ExitCode;

fn program(name: &OsStr) -> Option<Program> {
    let base = Path::new(name).file_name()?;
    PROGRAMS
        .iter()
        .find(|(n, _)| OsStr::new(n) == base)
        .map(|&(_, p)| p)
}

fn names() -> String {
    PROGRAMS.map(|(n, _)| n).join(", ")
}

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    if let Some(run) = program(&argv0) {
        return run();
    }
    msg::init("svkit");
    let Some(tool) = args.next() else {
        msg::fatal(format_args!(
            "usage: svkit TOOL [ARGS...], or run it through a link named TOOL; TOOL is one of {}",
            names()
        ));
        return ExitCode::from(exit::USAGE);
    };
    if let Some((_, run)) = INTERNAL.iter().find(|(n, _)| OsStr::new(n) == tool) {
        return run(args);
    }
    if tool == "--list" {
        return match msg::out(format!("{}\n", names().replace(", ", "\n"))) {
            Ok(()) => ExitCode::SUCCESS,
            Err(f) => f.report(),
        };
    }
    if program(&tool).is_none() || Path::new(&tool).file_name() != Some(tool.as_os_str()) {
        msg::fatal(format_args!(
            "unknown tool {}: it is one of {}",
            tool.to_string_lossy(),
            names()
        ));
        return ExitCode::from(exit::USAGE);
    }
    // Run again under the tool's name: its argv[0] (what ps shows, what
    // clap's usage and its re-execs use) is then the same as through a link.
    let err = std::process::Command::new("/proc/self/exe")
        .arg0(&tool)
        .args(args)
        .exec();
    msg::fatal(format_args!(
        "unable to run {}: {}",
        tool.to_string_lossy(),
        strerror(&err)
    ));
    ExitCode::from(exit::SYSTEM)
}
