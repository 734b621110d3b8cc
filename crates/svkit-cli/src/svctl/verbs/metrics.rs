//! `svctl metrics [SLOT...] [--all]`: Prometheus text exposition of
//! slots (`svkit::slot::metrics`).

use svkit::msg::{self, exit, Fatal};
use svkit::slot::metrics::{exposition, SlotMetrics};

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
    let mut readings = Vec::new();
    for r in snap
        .rows
        .into_iter()
        .filter(|r| !r.missing && r.unreadable.is_none())
    {
        let name = r.name.clone();
        let m = SlotMetrics::of(&slots, r)
            .map_err(|e| Fatal::system(format!("unable to read status of {name}"), e))?;
        readings.push(m);
    }
    msg::out(exposition(&readings, snap.now))?;
    if !hidden.is_empty() {
        msg::warn(format_args!(
            "left out {hidden}: status unreadable as uid {} (its supervise/ belongs to another user; root sees every slot)",
            nix::unistd::geteuid()
        ));
    }
    Ok(exit::OK)
}
