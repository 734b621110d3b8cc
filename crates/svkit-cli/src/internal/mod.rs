//! What rendered scripts run, not people: `svkit NAME ARGS...`, never
//! linked under a name of their own and not in `svkit --list` (the
//! library's own internal modes, such as `slot-env`, are reached the same
//! way; `main.rs` holds the one table).

pub mod job;
pub mod liveness;
pub mod say;
pub mod serve;
pub mod slot_end;

use std::ffi::OsString;
use std::process::ExitCode;

/// Parses an internal mode's argv (after its name) with clap, the way the
/// tools do: bad usage is one line and exit 100.
fn parse<P: clap::Parser>(name: &str, args: std::env::ArgsOs) -> Result<P, ExitCode> {
    let argv = std::iter::once(OsString::from(format!("svkit {name}"))).chain(args);
    P::try_parse_from(argv).map_err(|e| ExitCode::from(crate::clapmsg::clap_error(&e)))
}
