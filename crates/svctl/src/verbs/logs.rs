//! `svctl logs SLOT [-n N] [-f]`: the slot's s6-log dir (its `log.dir` in
//! the config), last lines across archives and `current`, optionally
//! followed across rotations. The reading is `svkit::logs`.

use std::io::{self, Write};

use svkit::logs::{tail, Follower};

use super::ctx::{errno_text, unknown, Ctx};
use crate::args::LogsArgs;
use crate::exit::{Fatal, NOT_OK, OK};

pub fn run(args: &LogsArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at);
    let name = &args.slot;
    if !ctx.known(name) && ctx.slot(name).is_none() {
        return Err(unknown(name));
    }
    let Some(dir) = ctx.log_dir(name) else {
        let why = if ctx.model.is_some() {
            "the slot has no log dir in the config (its output goes to docker logs)"
        } else {
            "the config could not be loaded"
        };
        eprintln!("svctl: fatal: unable to show the log of {name}: {why}");
        return Ok(NOT_OK);
    };
    let dir = std::path::PathBuf::from(dir);
    let sys = |e: io::Error| {
        Fatal::system(
            format!("unable to read log dir {}", dir.display()),
            errno_text(&e),
        )
    };
    let (head, cur) = match tail(&dir, args.lines) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            eprintln!(
                "svctl: warning: log dir {} does not exist yet",
                dir.display()
            );
            (Vec::new(), None)
        }
        Err(e) => return Err(sys(e)),
    };
    let mut out = io::stdout().lock();
    let written = out.write_all(&head).and_then(|()| out.flush());
    if let Err(e) = written {
        return closed(e);
    }
    if !args.follow {
        return Ok(OK);
    }
    let mut f = Follower::new(&dir, cur);
    match f.run(&mut out, None) {
        Ok(()) => Ok(OK),
        Err(e) if is_stdout_error(&e) => closed(e),
        Err(e) => Err(sys(e)),
    }
}

fn is_stdout_error(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// A reader that went away (`svctl logs -f | head`) is not an error.
fn closed(e: io::Error) -> Result<u8, Fatal> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(OK)
    } else {
        Err(Fatal::system("unable to write to stdout", errno_text(&e)))
    }
}
