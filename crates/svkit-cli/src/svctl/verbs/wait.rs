//! `svctl wait up|ready|down|done SLOT...`: exit 0 met, 1 timeout, 2 a slot gone
//! or permanently failed. The waiting itself is `svkit::slot::wait`.

use std::path::Path;

use svkit::msg::{self, Fatal};
use svkit::s6::status::Status;
use svkit::slot::end::End;
use svkit::slot::wait::{self, name_of, wait_for, Target, WaitEnd, Watched};

use super::control::said;
use super::ctx::Ctx;
use crate::svctl::args::{WaitArgs, WaitFor};

pub fn run(args: &WaitArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let target = match args.what {
        WaitFor::Up => Target::Up,
        WaitFor::Ready => Target::Ready,
        WaitFor::Down => Target::Down,
        WaitFor::Done => Target::Done,
    };
    let sl = ctx.slots();
    // A name that cannot be a slot dir is simply "gone" (exit 2). A slot
    // the config declares but the scandir has not got yet (the boot hook
    // has not made it) is "not yet", like any other state not reached;
    // with --forever, so is every slot gone or not supervised yet.
    let slots: Vec<Watched> = args
        .slots
        .iter()
        .map(|n| {
            let n = if n.contains('/') || n.starts_with('.') || n.is_empty() {
                ".invalid"
            } else {
                n.as_str()
            };
            let mut w = Watched::new(sl.dir(n));
            w.patient = args.forever || sl.slot(n).is_some();
            w
        })
        .collect();
    if args.forever {
        let failed = |dir: &Path, st: &Status| args.give_up && sl.failed(&name_of(dir), st);
        let outcome = wait::wait(&slots, target, false, None, &failed)
            .map_err(|e| Fatal::system("unable to wait", e))?;
        if let WaitEnd::Failed(dir) = outcome {
            // For the run script that waited: what keeps its slot from starting.
            let n = name_of(&dir);
            let why = match svkit::slot::end::read(&dir) {
                Some(End::Failed(w)) => w,
                _ => String::new(),
            };
            msg::out(format!("dependency {n} failed for good: {why}\n"))?;
            return Ok(svkit::msg::exit::svctl::GONE_OR_FAILED);
        }
        return Ok(svkit::msg::exit::OK);
    }
    let waited = wait_for(&sl, &slots, target, args.any, args.timeout)
        .map_err(|e| Fatal::system("unable to wait", e))?;
    Ok(said(waited))
}
