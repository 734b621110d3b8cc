//! `svctl status`: the state of slots, read natively (a few syscalls per
//! slot, no process per slot: this is also a container health check). The
//! snapshot and its rendering are `svkit::slot`'s; here, where it goes.

use svkit::msg::{self, Fatal};

use super::ctx::{warn_orphans, Ctx};
use crate::svctl::args::StatusArgs;

pub fn run(args: &StatusArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let mut snap = ctx.slots().snapshot(&args.slots, args.all)?;
    snap.measure();
    if let Some(e) = &snap.orphans_error {
        warn_orphans(e);
    }
    msg::out(if args.json {
        snap.json()
    } else {
        snap.text(want_colour())
    })?;
    for w in snap.warnings() {
        msg::warn(w);
    }
    Ok(snap.exit_code())
}

/// Colour only on a terminal, and never with NO_COLOR set (no-color.org).
pub(crate) fn want_colour() -> bool {
    use std::io::IsTerminal as _;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}
