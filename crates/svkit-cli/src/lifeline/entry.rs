//! `svkit-lifeline`: a thin main over `svkit::lifeline`.

use std::net::IpAddr;
use std::process::ExitCode;

use nix::sys::signal::Signal;
use nix::sys::signalfd::{SfdFlags, SignalFd};

use crate::lifeline::cli::Cli;
use svkit::lifeline::spawn::{Running, Wake};
use svkit::lifeline::{self, Error, Launched, Spec, StopSources};
use svkit::msg::{self, exit, exit::lifeline::PORT_FREE};

fn usage(what: &str) -> ExitCode {
    msg::fatal(format_args!("usage: {what}"));
    ExitCode::from(exit::USAGE)
}

/// The whole program: returns its exit code (the child's, once one ran).
pub fn main() -> ExitCode {
    // Read first: the longer we wait, the likelier a dead parent has already
    // been replaced by a reaper as our parent.
    let parent = nix::unistd::getppid();
    msg::init("svkit-lifeline");
    let cli: Cli = crate::clapmsg::parse();
    let code = match cli.which_port {
        Some(_) if !cli.cmd.is_empty() => return usage("--which-port takes no command"),
        Some(port) => which_port(port, cli.bind),
        None => run(cli, parent),
    };
    code.unwrap_or_else(|e| {
        msg::fatal(&e);
        ExitCode::from(e.exit_code())
    })
}

fn which_port(port: u16, bind: Option<IpAddr>) -> Result<ExitCode, Error> {
    let report = lifeline::inspect_port(port, bind)?;
    let mut text = String::new();
    for id in &report.owners {
        let (pid, euid, start) = (id.pid, id.euid, id.start_time);
        text += &format!("{pid}\t{euid}\t{start}\t{}\n", id.command_line());
    }
    for s in &report.unowned {
        text += &format!(
            "-\t{}\t-\tno visible process holds {} (socket inode {})\n",
            s.uid, s.local, s.inode
        );
    }
    if let Err(f) = msg::out(text) {
        return Ok(f.report());
    }
    Ok(if report.is_free() {
        ExitCode::from(PORT_FREE)
    } else {
        ExitCode::SUCCESS
    })
}

fn run(cli: Cli, parent: nix::unistd::Pid) -> Result<ExitCode, Error> {
    if cli.cmd.is_empty() {
        return Ok(usage(
            "no command given (svkit-lifeline [OPTIONS] -- CMD ARGS...)",
        ));
    }
    let bind = cli.bind.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
    let mut spec = Spec::new(cli.cmd.clone());
    spec.port = cli.port;
    spec.bind = bind;
    spec.state = cli.state.clone();
    spec.match_args = cli.match_args;
    spec.grace = cli.grace;
    spec.ready_timeout = cli.ready_timeout;
    spec.death_signal = cli.child_deathsig;
    if let Some(r) = &cli.ready {
        spec.ready = Some(lifeline::parse_ready(r, cli.port, bind)?);
    }
    spec.validate()?;

    // Signals are blocked before anything else so a SIGTERM that arrives
    // while reaping or probing is queued, not fatal: it is read from the
    // signalfd and turned into an orderly stop.
    let mask = lifeline::spawn::block_signals(&[Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP])?;
    let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(|e| Error::nix("unable to create a signalfd", e))?;
    // A parent outside our PID namespace shows as pid 0: `docker exec`'s
    // runtime, which may exit the moment we start (`docker exec -d`) or
    // live on long after. Its death says nothing about ours, so there is
    // nothing to bind to.
    let outside = parent.as_raw() == 0;
    if outside && !cli.no_parent_deathsig {
        msg::info(
            "parent is outside this PID namespace (docker exec?): \
             not bound to it; stop lifeline with SIGTERM",
        );
    }
    if !cli.no_parent_deathsig && !outside {
        // TERM (not KILL) so the parent's death goes through the orderly
        // stop below; it arrives through the signalfd like any SIGTERM.
        nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)
            .map_err(|e| Error::nix("unable to set PR_SET_PDEATHSIG", e))?;
        if nix::unistd::getppid() != parent {
            msg::fatal("parent exited before lifeline started: nothing spawned");
            return Ok(ExitCode::from(exit::SYSTEM));
        }
    }
    let mut stop = StopSources::new(signals, cli.watch_stdin);

    let (launched, reaped) = lifeline::run::launch(&spec, &mut || stop.requested())?;
    if let Some(r) = reaped.filter(|r| !r.terminated.is_empty()) {
        msg::info(format_args!(
            "reaped stale instance(s) on port {}: pids {:?} (SIGKILL needed for {:?})",
            spec.port.unwrap_or(0),
            r.terminated,
            r.killed
        ));
    }
    // Then the child, or what is left of its group, is stopped.
    let mut running = match launched {
        Launched::Ready(mut r) => {
            run_until_stop(&mut r, &mut stop);
            r
        }
        Launched::StopRequested(r) => r,
    };
    let status = lifeline::run::finish(&spec, &mut running)?;
    // The child's code (128+N for signal N).
    Ok(ExitCode::from(
        lifeline::exit_code(status).clamp(0, 255) as u8
    ))
}

/// Until the child exits or a stop is asked for.
fn run_until_stop(running: &mut Running, stop: &mut StopSources) {
    loop {
        let event = {
            let fds = stop.fds();
            running.wait_event(&fds)
        };
        match event {
            Ok(Wake::Exited(_)) => return,
            Ok(Wake::Fd(i)) if stop.drain(i) => return,
            Ok(Wake::Fd(_)) => {}
            Err(e) => {
                msg::warn(format_args!("{e}: stopping the child"));
                return;
            }
        }
    }
}
