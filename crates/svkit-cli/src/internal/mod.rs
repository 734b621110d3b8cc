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
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

/// Parses an internal mode's argv (after its name) with clap, the way the
/// tools do: bad usage is one line and exit 100.
fn parse<P: clap::Parser>(name: &str, args: std::env::ArgsOs) -> P {
    let argv = std::iter::once(OsString::from(format!("svkit {name}"))).chain(args);
    P::try_parse_from(argv)
        .unwrap_or_else(|e| std::process::exit(i32::from(crate::clapmsg::clap_error(&e))))
}

/// Starts this `svkit` again with the same arguments less `--detach`: a
/// watcher that outlives its caller, in a process group of its own and
/// without stdin; from its own path, named `svkit` for `ps`.
fn detach_again() -> std::io::Result<()> {
    let again = std::env::args_os().skip(1).filter(|a| a != "--detach");
    Command::new(std::env::current_exe()?)
        .arg0("svkit")
        .args(again)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .map(drop)
}
