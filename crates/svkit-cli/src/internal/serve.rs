//! `svkit serve`: the HTTP endpoint (`svkit-serve`), lent the CLI's one
//! config loader.

use std::process::ExitCode;

use crate::config::Policy;

pub fn main(args: std::env::ArgsOs) -> ExitCode {
    svkit_serve::main(
        args,
        svkit_serve::Hooks {
            load: |dir| {
                (crate::config::load(dir, Policy::Lenient).ok())
                    .flatten()
                    .map(|v| v.model)
            },
        },
    )
}
