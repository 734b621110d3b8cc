//! `svctl say` (internal): what a slot's `run` script says in the slot's
//! log (`svkit: slot web waits for db (ready)`), through `msg::say`, so a
//! full log pipe never holds the start up: the line then goes to the
//! container's own output, or is dropped.

use svkit::msg::{self, exit, Said};

use crate::svctl::args::SayArgs;

/// 0 when the line went somewhere, 1 when it was dropped.
pub fn run(args: &SayArgs) -> u8 {
    match msg::say(&args.words.join(" ")) {
        Said::Log | Said::Container => exit::OK,
        Said::Dropped => exit::NOT_OK,
    }
}
