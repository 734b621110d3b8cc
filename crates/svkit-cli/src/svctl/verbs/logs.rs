//! `svctl logs SLOT [-n N] [-f]`: the slot's s6-log dir, last lines across
//! archives and `current`, optionally followed across rotations. The
//! reading is `svkit::logs`.

use std::io;

use svkit::logs::{tail, Follower, Position};
use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, Fatal};

use super::ctx::{unknown, Ctx};
use crate::svctl::args::LogsArgs;

pub fn run(args: &LogsArgs) -> Result<u8, Fatal> {
    // An invalid config is a warning here: the live slot says where its
    // logger writes.
    let ctx = Ctx::load(&args.at)?;
    let name = &args.slot;
    if !ctx.slots().known(name) && ctx.slots().slot(name).is_none() {
        return Err(unknown(name));
    }
    let Some(dir) = svkit::logs::dir_of(&ctx.slots(), name) else {
        msg::fatal(format_args!(
            "unable to show the log of {name}: the slot has no log dir (its output goes to docker logs)"
        ));
        return Ok(NOT_OK);
    };
    let sys = |e: io::Error| Fatal::io(format!("unable to read log dir {}", dir.display()), &e);
    let (head, pos) = match tail(&dir, args.lines) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            msg::warn(format_args!("log dir {} does not exist yet", dir.display()));
            (Vec::new(), Position::default())
        }
        Err(e) => return Err(sys(e)),
    };
    msg::out(&head)?;
    if !args.follow || msg::stdout_closed() {
        return Ok(OK);
    }
    // Follows until the reader goes away (`svctl logs -f | head`): EPIPE
    // is the only error of the writer, a quiet end.
    let keep = (ctx.slots().slot(name))
        .and_then(|s| s.log.as_ref())
        .map_or(0, |l| l.keep);
    let mut gap = || {
        msg::warn(format_args!(
            "lines of {name} may be missing here: s6-log deleted log files before they could be read (it keeps {keep} archives; more rotated while following)"
        ))
    };
    let mut f = Follower::new(&dir, pos);
    match f.run(&mut io::stdout().lock(), None, &mut gap) {
        Ok(()) => Ok(OK),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => msg::out_error(e).map(|()| OK),
        Err(e) => Err(sys(e)),
    }
}
