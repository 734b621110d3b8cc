//! `svctl`: the operator's command. A thin shell over the svkit library:
//! argument parsing, exit codes and messages live here, behaviour there.
//!
//! Exit codes follow s6: 0 ok, 1 the checked thing is not ok (invalid
//! config), 100 bad usage, 111 system error.

mod exit;
mod verbs;

// The command line lives in the library (`src/lib.rs`) so that
// `svkit-docgen` can render completions and man pages from it.
use svctl::{args, cli};

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => exit::USAGE,
            };
            // clap's own rendering is the clearest usage message.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match verbs::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("svctl: fatal: {f}");
            ExitCode::from(f.code)
        }
    }
}
