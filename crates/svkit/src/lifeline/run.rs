//! The lifeline sequence: validate the state file, clear the port (reap a
//! proven stale instance), spawn, wait for readiness, record the state, and
//! at the end stop the child and drop the record.
//!
//! Readiness (`--ready`) is a probe (`tcp` or an http:// URL, see
//! [`crate::probe`]) tried until it passes, the child exits, the timeout
//! passes or a stop is asked for.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::reap::{self, MatchArgs, Matcher, ReapOutcome};
use super::spawn::{self, exit_code, Running};
use super::statefile::{self, StateRecord};
use super::{Error, Result};
use crate::clock::poll_by;
use crate::probe::{connect_addr, Probe};

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
            grace: Duration::from_secs(3),
            ready: None,
            ready_timeout: Duration::from_secs(10),
            death_signal: Signal::SIGKILL,
        }
    }

    /// Checks what can be checked before touching anything.
    pub fn validate(&self) -> Result<()> {
        let args = self.argv.len().saturating_sub(1);
        let why = match self.match_args {
            _ if self.argv.first().is_none_or(|a| a.is_empty()) => "no command given".into(),
            _ if self.port == Some(0) => "port 0 is not a port (want 1-65535)".into(),
            _ if self.state.is_some() && self.port.is_none() => {
                "--state needs --port (the record names the port)".into()
            }
            Some(_) if self.port.is_none() => "--match needs --port".into(),
            Some(MatchArgs::Prefix(n)) if n > args => {
                format!("--match={n} compares more arguments than the command has ({args})")
            }
            _ => return Ok(()),
        };
        Err(Error::Usage(why))
    }
}

/// Before spawning: refuse an unsafe state file, then, if the port is
/// held, reap the holders when all are provably stale instances.
/// `Ok(None)`: nothing to reap.
pub fn clear_port(spec: &Spec) -> Result<Option<ReapOutcome>> {
    spec.validate()?;
    let state = spec.state.as_deref().map(statefile::read).transpose()?;
    let Some(port) = spec.port else {
        return Ok(None);
    };
    let report = super::port::inspect_port(port, Some(spec.bind))?;
    if report.is_free() {
        return Ok(None);
    }
    let matcher = spec
        .match_args
        .map(|m| Matcher::new(&spec.argv, m))
        .transpose()?;
    let owners = reap::classify(&report, state.flatten().as_ref(), matcher.as_ref())?;
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
    let stopped = match &spec.ready {
        Some(probe) => wait_ready(&mut running, probe, spec.ready_timeout, stop_requested),
        None => Ok(false),
    };
    let recorded = stopped.and_then(|stopped| {
        if let (false, Some(path), Some(port)) = (stopped, &spec.state, spec.port) {
            let rec = StateRecord {
                port,
                pid: running.pid,
                start_time: running.start_time,
                cmdline: (spec.argv.iter())
                    .map(|a| a.to_string_lossy().into())
                    .collect(),
            };
            statefile::write(path, &rec)?;
        }
        Ok(stopped)
    });
    match recorded {
        Ok(false) => Ok((Launched::Ready(running), reaped)),
        Ok(true) => Ok((Launched::StopRequested(running), reaped)),
        Err(e) => {
            let _ = running.stop(spec.grace);
            Err(e)
        }
    }
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

/// Parses `--ready`: `tcp` (needs the port; connects where `bind` listens)
/// or an `http://HOST[:PORT][/PATH]` URL ([`Probe::http`]).
pub fn parse_ready(spec: &str, port: Option<u16>, bind: IpAddr) -> Result<Probe> {
    if spec == "tcp" {
        let port = port.ok_or_else(|| Error::Usage("--ready tcp needs --port".into()))?;
        return Ok(Probe::Tcp(connect_addr(bind, port)));
    }
    let bad = |why: &str| Error::Usage(format!("--ready {spec:?}: {why}"));
    if !spec.starts_with("http://") {
        return Err(bad("want `tcp` or an http:// URL"));
    }
    Probe::http(spec).map_err(|why| bad(&why))
}

/// Polls `probe` until it passes (`Ok(false)`), `stop_requested` says so
/// (`Ok(true)`), the child exits or `timeout` passes. Does not stop the
/// child: the caller does.
pub fn wait_ready(
    child: &mut Running,
    probe: &Probe,
    timeout: Duration,
    stop_requested: &mut dyn FnMut() -> bool,
) -> Result<bool> {
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no attempt");
    let mut outcome = None;
    poll_by(deadline, Duration::from_millis(100), || {
        let left = deadline.saturating_duration_since(Instant::now());
        outcome = match child.try_exit() {
            _ if stop_requested() => Some(Ok(true)),
            Err(e) => Some(Err(e)),
            Ok(Some(status)) => {
                let status = match status.code() {
                    Some(c) => format!("exited with code {c}"),
                    None => format!("was killed by signal {}", exit_code(status) - 128),
                };
                let target = probe.target();
                Some(Err(Error::ExitedBeforeReady { target, status }))
            }
            Ok(None) if left.is_zero() => None,
            // Each attempt capped, so a child that accepts but never
            // answers cannot hide its own exit or a stop request for long.
            Ok(None) => match probe.attempt(left.min(Duration::from_millis(500))) {
                Ok(()) => Some(Ok(false)),
                Err(why) => {
                    last = why;
                    None
                }
            },
        };
        outcome.is_some()
    });
    outcome.unwrap_or_else(|| {
        Err(Error::ReadyTimeout {
            target: probe.target(),
            waited_ms: timeout.as_millis(),
            last,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn lo() -> IpAddr {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    }

    #[test]
    fn parses_ready() {
        assert_eq!(
            parse_ready("tcp", Some(80), lo()).unwrap(),
            Probe::Tcp("127.0.0.1:80".parse().unwrap())
        );
        assert_eq!(
            parse_ready("tcp", Some(80), "::".parse().unwrap()).unwrap(),
            Probe::Tcp("[::1]:80".parse().unwrap())
        );
        assert!(parse_ready("tcp", None, lo()).is_err());
        assert!(matches!(
            parse_ready("http://localhost/", None, lo()),
            Ok(Probe::Http(_))
        ));
        let e = parse_ready("udp", Some(1), lo()).unwrap_err().to_string();
        assert_eq!(e, "usage: --ready \"udp\": want `tcp` or an http:// URL");
        let e = parse_ready("http://example.com/", None, lo())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "usage: --ready \"http://example.com/\": the host must be an IP address or localhost"
        );
    }
}
