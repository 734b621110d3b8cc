//! `svkit say WORD...`: what a slot's `run` script says in the slot's log
//! (`svkit: slot web waits for db (ready)`), through `msg::say`, so a full
//! log pipe never holds the start up: the line then goes to the
//! container's own output, or is dropped.

use std::process::ExitCode;

use svkit::msg::{self, exit, Said};

/// 0 when the line went somewhere, 1 when it was dropped.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    let words: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    ExitCode::from(match msg::say(&words.join(" ")) {
        Said::Log | Said::Container => exit::OK,
        Said::Dropped => exit::NOT_OK,
    })
}
