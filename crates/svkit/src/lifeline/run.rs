//! The lifeline sequence: validate the state file, clear the port (reap a proven stale instance),
//! spawn, wait for readiness, record the state, and at the end stop the
//! child and drop the record.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::error::{Error, Result};
use super::ready::{self, ReadyOrStop};
use super::reap::{self, MatchArgs, Matcher, ReapOutcome};
use super::spawn::{self, Running};
use super::statefile::{self, StateRecord};
use crate::probe::Probe;

/// Default grace between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3);
/// Default bound on readiness.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything lifeline needs to run one child.
#[derive(Debug, Clone)]
pub struct Spec {
    pub argv: Vec<OsString>,
    pub port: Option<u16>,
    pub bind: IpAddr,
    pub state: Option<PathBuf>,
    pub match_args: Option<MatchArgs>,
    pub grace: Duration,
    pub ready: Option<Probe>,
    pub ready_timeout: Duration,
    pub death_signal: Signal,
}

impl Spec {
    /// A spec with the documented defaults: bind 127.0.0.1, grace 3 s,
    /// readiness timeout 10 s, SIGKILL as the child's death signal.
    pub fn new(argv: Vec<OsString>) -> Spec {
        Spec {
            argv,
            port: None,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            state: None,
            match_args: None,
            grace: DEFAULT_GRACE,
            ready: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            death_signal: Signal::SIGKILL,
        }
    }

    /// Checks what can be checked before touching anything.
    pub fn validate(&self) -> Result<()> {
        if self.argv.is_empty() || self.argv[0].is_empty() {
            return Err(Error::Usage("no command given".into()));
        }
        if self.port == Some(0) {
            return Err(Error::Usage("port 0 is not a port (want 1-65535)".into()));
        }
        if self.state.is_some() && self.port.is_none() {
            return Err(Error::Usage(
                "--state needs --port (the record names the port)".into(),
            ));
        }
        if self.match_args.is_some() && self.port.is_none() {
            return Err(Error::Usage("--match needs --port".into()));
        }
        if let Some(MatchArgs::Prefix(n)) = self.match_args {
            if n > self.argv.len() - 1 {
                return Err(Error::Usage(format!(
                    "--match={n} compares more arguments than the command has ({})",
                    self.argv.len() - 1
                )));
            }
        }
        Ok(())
    }
}

/// Before spawning: refuse an unsafe state file, then, if the port is
/// held, reap the holders when all are provably stale instances.
/// `Ok(None)`: nothing to reap.
pub fn clear_port(spec: &Spec) -> Result<Option<ReapOutcome>> {
    spec.validate()?;
    let state = match &spec.state {
        Some(p) => statefile::read(p)?,
        None => None,
    };
    let Some(port) = spec.port else {
        return Ok(None);
    };
    let report = reap::inspect_port(port, Some(spec.bind))?;
    if report.is_free() {
        return Ok(None);
    }
    let matcher = spec
        .match_args
        .map(|m| Matcher::new(&spec.argv, m))
        .transpose()?;
    let owners = reap::classify(&report, state.as_ref(), matcher.as_ref())?;
    reap::reap(&owners, port, Some(spec.bind), spec.grace).map(Some)
}

/// A child that was started.
#[derive(Debug)]
pub enum Launched {
    /// Ready (or no readiness asked) and recorded in the state file.
    Ready(Running),
    /// A stop was requested while waiting for readiness.
    StopRequested(Running),
}

/// Clears the port, spawns, waits for readiness, writes the state file.
/// On any failure after the spawn the child is stopped before returning.
pub fn launch(
    spec: &Spec,
    stop_requested: &mut dyn FnMut() -> bool,
) -> Result<(Launched, Option<ReapOutcome>)> {
    let reaped = clear_port(spec)?;
    let mut running = spawn::spawn(spec)?;
    if let Some(probe) = &spec.ready {
        match ready::wait_ready(&mut running, probe, spec.ready_timeout, stop_requested) {
            Ok(ReadyOrStop::Ready) => {}
            Ok(ReadyOrStop::StopRequested) => {
                return Ok((Launched::StopRequested(running), reaped))
            }
            Err(e) => {
                let _ = running.stop(spec.grace);
                return Err(e);
            }
        }
    }
    if let (Some(path), Some(port)) = (&spec.state, spec.port) {
        let rec = StateRecord {
            port,
            pid: running.pid,
            start_time: running.start_time,
            cmdline: spec
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into())
                .collect(),
        };
        if let Err(e) = statefile::write(path, &rec) {
            let _ = running.stop(spec.grace);
            return Err(e);
        }
    }
    Ok((Launched::Ready(running), reaped))
}

/// Ends a launched child: stops it (close stdin, TERM the group, grace,
/// KILL), or what is left of its group if it exited by itself; then
/// removes the state file if it still names this child.
pub fn finish(spec: &Spec, running: &mut Running) -> Result<ExitStatus> {
    let status = running.stop(spec.grace);
    if let Some(path) = &spec.state {
        statefile::remove_if_ours(path, running.pid, running.start_time)?;
    }
    status
}
