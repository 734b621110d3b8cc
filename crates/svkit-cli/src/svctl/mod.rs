//! `svctl`: the operator's command. A thin shell over the svkit library:
//! argument parsing and verbs live here; behaviour, messages and exit codes
//! (`svkit::msg`) there. [`main`] is the whole program, and `svkit-docgen`
//! renders completions and man pages from [`cli::Cli`].
//!
//! Exit codes follow s6: 0 ok, 1 the checked thing is not ok (invalid
//! config), 100 bad usage, 111 system error; verbs add their own
//! (`svkit::msg::exit::svctl`).

pub mod args;
pub mod cli;
mod top;
pub(crate) mod verbs;

use std::process::ExitCode;

use svkit::msg;

/// The whole program: parses argv, runs the verb, returns its exit code.
pub fn main() -> ExitCode {
    msg::init("svctl");
    match verbs::run(crate::clapmsg::parse::<cli::Cli>()) {
        Ok(code) => ExitCode::from(code),
        Err(f) => f.report(),
    }
}
