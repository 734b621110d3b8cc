//! `svctl liveness` (internal): the watcher a slot's `run` starts before it
//! execs the program (see `svkit::liveness`). `--detach` starts it in the
//! background, in its own process group, and returns: the watcher is then
//! no child of the program (no zombie for it to reap) and outlives this
//! process only as long as the program runs.

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

use svkit::liveness::{self, Watcher};
use svkit::msg::exit::OK;
use svkit::msg::Fatal;
use svkit::probe::Probe;

use crate::svctl::args::LivenessArgs;

/// Its stderr is the slot's log pipe: its own failures are said without
/// blocking on it (`msg::say`), as every line of the watcher is.
pub fn run(args: &LivenessArgs) -> Result<u8, Fatal> {
    match watch(args) {
        Ok(code) => Ok(code),
        Err(f) => {
            svkit::msg::say_fatal(&f);
            Ok(f.code)
        }
    }
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
            "svctl liveness",
            "needs one of --tcp, --http or -- ARGV",
        ));
    };
    // Opened before anything else: the process it names cannot be another.
    let pid = liveness::pidfd(args.pid)
        .map_err(|e| Fatal::system(format!("unable to watch pid {}", args.pid), e))?;
    if args.detach {
        let exe =
            std::env::current_exe().map_err(|e| Fatal::system("unable to find svctl itself", e))?;
        // argv[0] kept: the multi-call binary knows its tool by that name.
        let mut again: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let arg0 = if again.is_empty() {
            "svctl".into()
        } else {
            again.remove(0)
        };
        again.retain(|a| a != "--detach");
        Command::new(exe)
            .arg0(arg0)
            .args(again)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| Fatal::system("unable to start the liveness watcher", e))?;
        return Ok(OK);
    }
    let slot_dir = std::fs::canonicalize(&args.slot_dir)
        .map_err(|e| Fatal::system(format!("unable to watch {}", args.slot_dir.display()), e))?;
    let w = Watcher {
        slot: slot_dir,
        probe,
        interval: args.interval,
        timeout: args.timeout,
        failures: args.failures.max(1),
    };
    liveness::watch(&w, &pid).map_err(|e| Fatal::system("liveness watcher", e))?;
    Ok(OK)
}
