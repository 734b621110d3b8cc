//! Waiting for `--ready`: the probe (`tcp` or an http:// URL, see
//! [`crate::probe`]) tried until it passes, the child exits, the timeout
//! passes or a stop is asked for.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::spawn::{exit_code, Running};
use crate::clock::poll_by;
use crate::probe::{connect_addr, Probe};

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

/// Outcome of waiting for readiness, when nothing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadyOrStop {
    Ready,
    /// `stop_requested` returned true first.
    StopRequested,
}

/// Polls `probe` until it passes, the child exits, `timeout` passes or
/// `stop_requested` says so. Does not stop the child: the caller does.
pub fn wait_ready(
    child: &mut Running,
    probe: &Probe,
    timeout: Duration,
    stop_requested: &mut dyn FnMut() -> bool,
) -> Result<ReadyOrStop> {
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no attempt");
    let mut outcome = None;
    poll_by(deadline, Duration::from_millis(100), || {
        let left = deadline.saturating_duration_since(Instant::now());
        outcome = match child.try_exit() {
            _ if stop_requested() => Some(Ok(ReadyOrStop::StopRequested)),
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
                Ok(()) => Some(Ok(ReadyOrStop::Ready)),
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
