//! `svctl metrics [SLOT...] [--all]`: Prometheus text exposition of
//! slots (`svkit::slot::metrics`).

use svkit::msg::{self, exit, Fatal};
use svkit::slot::metrics::of_snapshot;

use super::ctx::Ctx;
use crate::svctl::args::MetricsArgs;

pub fn run(args: &MetricsArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    // An unknown name is fatal (exit 4); declared slots not made yet are
    // no sample.
    ctx.resolve(&args.slots, false)?;
    let slots = ctx.slots();
    let mut snap = slots.snapshot(&args.slots, args.all)?;
    snap.measure();
    let hidden = snap.hidden().join(", ");
    let text = of_snapshot(&slots, snap)
        .map_err(|(name, e)| Fatal::system(format!("unable to read status of {name}"), e))?;
    msg::out(text)?;
    if !hidden.is_empty() {
        msg::warn(format_args!(
            "left out {hidden}: status unreadable as uid {} (its supervise/ belongs to another user; root sees every slot)",
            nix::unistd::geteuid()
        ));
    }
    Ok(exit::OK)
}
