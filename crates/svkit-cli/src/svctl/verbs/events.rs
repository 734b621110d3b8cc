//! `svctl events [--json] [SLOT...]`: state changes as s6 announces them.
//! The stream itself is `svkit::slot::events`.

use std::os::fd::AsFd;

use svkit::msg::{self, exit, Fatal};
use svkit::slot::events::{follow, json_line, text_line, Event, EventsError, Followed, Sink};

use super::ctx::Ctx;
use crate::svctl::args::EventsArgs;

struct Out {
    json: bool,
    /// A write error other than a reader that went away.
    failed: Option<Fatal>,
}

impl Sink for Out {
    fn event(&mut self, e: &Event) -> bool {
        let mut line = if self.json {
            json_line(e)
        } else {
            text_line(e)
        };
        line.push('\n');
        match msg::out(line) {
            Ok(()) => !msg::stdout_closed(),
            Err(f) => {
                self.failed = Some(f);
                false
            }
        }
    }
}

pub fn run(args: &EventsArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let scope = if args.slots.is_empty() {
        Followed::Ours
    } else {
        Followed::Named(ctx.resolve(&args.slots, false)?)
    };
    let mut out = Out {
        json: args.json,
        failed: None,
    };
    let stdout = std::io::stdout();
    let r = follow(&ctx.slots(), &scope, Some(stdout.as_fd()), &mut out);
    if let Some(f) = out.failed {
        return Err(f);
    }
    // A signal or a reader that went away is how a stream ends.
    r.map(|_| exit::OK)
        .map_err(|e: EventsError| Fatal::system(e.to_string(), ""))
}
