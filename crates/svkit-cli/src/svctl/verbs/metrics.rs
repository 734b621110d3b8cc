//! `svctl metrics [SLOT...] [--all]`: Prometheus text exposition of
//! slots (`svkit::slot::metrics`).

use std::time::SystemTime;

use svkit::msg::{self, exit, Fatal};
use svkit::slot::metrics::{collect, exposition};

use super::ctx::Ctx;
use crate::svctl::args::MetricsArgs;

pub fn run(args: &MetricsArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let names = if args.slots.is_empty() {
        ctx.list(args.all)?
    } else {
        ctx.resolve(&args.slots, false)?
    };
    let judge = ctx.judge();
    let now = SystemTime::now();
    let mut slots = Vec::new();
    let mut hidden = Vec::new();
    for n in &names {
        match collect(&judge, n, now) {
            Ok(m) => slots.push(m),
            Err(e) if e.is_denied() => hidden.push(n.as_str()),
            Err(e) => return Err(Fatal::system(format!("unable to read status of {n}"), e)),
        }
    }
    judge.mark_stalled(
        slots
            .iter_mut()
            .filter(|m| m.st.is_some())
            .map(|m| (m.name.as_str(), &mut m.v.log)),
    );
    msg::out(exposition(&slots, now))?;
    if !hidden.is_empty() {
        msg::warn(format_args!(
            "left out {}: status unreadable as uid {} (its supervise/ belongs to another user; root sees every slot)",
            hidden.join(", "),
            nix::unistd::geteuid()
        ));
    }
    Ok(exit::OK)
}
