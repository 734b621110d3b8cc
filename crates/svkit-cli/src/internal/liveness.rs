//! `svkit liveness`: the watcher a slot's `run` starts before it
//! execs the program (see `svkit::liveness`). `--detach` starts it in the
//! background, in its own process group, and returns: the watcher is then
//! no child of the program (no zombie for it to reap) and outlives this
//! process only as long as the program runs.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use svkit::liveness::{self, Watcher};
use svkit::msg::exit::OK;
use svkit::msg::Fatal;
use svkit::probe::Probe;

/// Its own failures are said as every line of the watcher is: on its
/// stderr, never into the slot's pipe, without blocking (`msg::say_beside`).
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    let args: LivenessArgs = super::parse("liveness", args);
    ExitCode::from(match watch(&args) {
        Ok(code) => code,
        Err(f) => {
            svkit::msg::say_beside("fatal", &f);
            f.code
        }
    })
}

fn watch(args: &LivenessArgs) -> Result<u8, Fatal> {
    let probe = if let Some(addr) = args.tcp {
        Probe::Tcp(addr)
    } else if let Some(url) = &args.http {
        Probe::http(url).map_err(|e| Fatal::usage(format!("--http {url}"), e))?
    } else if !args.exec.is_empty() {
        Probe::Exec(args.exec.clone())
    } else {
        return Err(Fatal::usage(
            "svkit liveness",
            "needs one of --tcp, --http or -- ARGV",
        ));
    };
    // Opened before anything else: the process it names cannot be another.
    let pid = svkit::sys::pidfd_open(args.pid)
        .map_err(|e| Fatal::system(format!("unable to watch pid {}", args.pid), e))?;
    if args.detach {
        super::detach_again()
            .map_err(|e| Fatal::system("unable to start the liveness watcher", e))?;
        return Ok(OK);
    }
    let slot_dir = std::fs::canonicalize(&args.slot_dir)
        .map_err(|e| Fatal::system(format!("unable to watch {}", args.slot_dir.display()), e))?;
    // Who it is, pid and start time, for a KILL that must hit no other.
    let Some(program) = svkit::stray::Copy::of(args.pid) else {
        // It ended already: nothing to watch.
        return Ok(OK);
    };
    let w = Watcher {
        slot: slot_dir,
        program,
        probe,
        interval: args.interval,
        timeout: args.timeout,
        failures: args.failures.max(1),
    };
    liveness::watch(&w, &pid).map_err(|e| Fatal::system("liveness watcher", e))?;
    Ok(OK)
}

/// Rendered into a slot's `run` when it has a `liveness` check.
#[derive(Debug, Parser)]
pub struct LivenessArgs {
    /// The slot dir
    #[arg(long, value_name = "DIR")]
    pub slot_dir: std::path::PathBuf,
    /// The process to watch (the run script, which execs the program)
    #[arg(long)]
    pub pid: i32,
    /// Start the watcher in the background and return at once
    #[arg(long)]
    pub detach: bool,
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis)]
    pub interval: Duration,
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis)]
    pub timeout: Duration,
    #[arg(long, value_name = "N")]
    pub failures: u32,
    /// `IP:port` to connect to
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["http", "exec"])]
    pub tcp: Option<std::net::SocketAddr>,
    /// URL that must answer 2xx
    #[arg(long, value_name = "URL", conflicts_with = "exec")]
    pub http: Option<String>,
    /// A command that must exit 0
    #[arg(last = true, value_name = "ARGV")]
    pub exec: Vec<String>,
}
