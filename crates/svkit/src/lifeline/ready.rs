//! Readiness probes: a TCP connect, or an HTTP/1.0 GET that must answer 2xx.
//!
//! The HTTP client is a dozen lines over `std::net::TcpStream` on purpose:
//! it only ever talks to a loopback child, needs no TLS, redirects or
//! keep-alive, and a full client crate would dwarf the rest of lifeline.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::spawn::{exit_code, Running};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Tcp(SocketAddr),
    Http {
        addr: SocketAddr,
        host: String,
        path: String,
    },
}

/// Where `tcp` readiness connects for a bind address: the unspecified
/// addresses mean "every interface", so loopback answers for them.
pub fn connect_addr(bind: IpAddr, port: u16) -> SocketAddr {
    let ip = match bind {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, port)
}

impl Probe {
    /// Parses `tcp` (needs the port) or `http://HOST[:PORT][/PATH]`, where
    /// HOST is an IP literal (`[::1]` for IPv6) or `localhost`; no DNS.
    pub fn parse(spec: &str, port: Option<u16>, bind: IpAddr) -> Result<Probe> {
        if spec == "tcp" {
            let port = port.ok_or_else(|| Error::Usage("--ready tcp needs --port".into()))?;
            return Ok(Probe::Tcp(connect_addr(bind, port)));
        }
        let bad = |why: &str| Error::Usage(format!("--ready {spec:?}: {why}"));
        let rest = spec
            .strip_prefix("http://")
            .ok_or_else(|| bad("want `tcp` or an http:// URL"))?;
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(bad("the path may not hold spaces or control characters"));
        }
        if authority.contains('@') {
            return Err(bad("user info is not supported"));
        }
        let (host, port_str) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            (h, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            host.parse()
                .map_err(|_| bad("the host must be an IP address or localhost"))?
        };
        let port = match port_str {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| bad("bad port"))?,
            None => 80,
        };
        Ok(Probe::Http {
            addr: SocketAddr::new(ip, port),
            host: authority.to_string(),
            path,
        })
    }

    pub fn target(&self) -> String {
        match self {
            Probe::Tcp(a) => format!("tcp {a}"),
            Probe::Http { host, path, .. } => format!("http://{host}{path}"),
        }
    }

    /// One attempt, bounded by `timeout`. `Err` says why it did not pass.
    pub fn attempt(&self, timeout: Duration) -> std::result::Result<(), String> {
        let timeout = timeout.max(Duration::from_millis(1));
        match self {
            Probe::Tcp(addr) => TcpStream::connect_timeout(addr, timeout)
                .map(|_| ())
                .map_err(|e| why(&e, timeout)),
            Probe::Http { addr, host, path } => http_get(addr, host, path, timeout),
        }
    }
}

/// A socket timeout says so (its errno, EAGAIN, reads "Resource
/// temporarily unavailable").
fn why(e: &std::io::Error, timeout: Duration) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("timed out after {} ms", timeout.as_millis())
        }
        _ => e.to_string(),
    }
}

fn http_get(
    addr: &SocketAddr,
    host: &str,
    path: &str,
    timeout: Duration,
) -> std::result::Result<(), String> {
    let deadline = Instant::now() + timeout;
    let mut s = TcpStream::connect_timeout(addr, timeout).map_err(|e| why(&e, timeout))?;
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    s.set_write_timeout(Some(left()))
        .map_err(|e| e.to_string())?;
    let req = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: svkit-lifeline\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes())
        .map_err(|e| format!("sending request: {}", why(&e, timeout)))?;
    // Only the status line matters; read until its end or 1 KiB.
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 256];
    while !buf.contains(&b'\n') && buf.len() < 1024 {
        s.set_read_timeout(Some(left()))
            .map_err(|e| e.to_string())?;
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("reading response: {}", why(&e, timeout))),
        }
    }
    let line = String::from_utf8_lossy(&buf);
    let line = line.lines().next().unwrap_or("").trim();
    let mut parts = line.split_whitespace();
    let (Some(proto), Some(code)) = (parts.next(), parts.next()) else {
        return Err(format!("no HTTP status line (got {line:?})"));
    };
    if !proto.starts_with("HTTP/") {
        return Err(format!("no HTTP status line (got {line:?})"));
    }
    match code.parse::<u16>() {
        Ok(c) if (200..300).contains(&c) => Ok(()),
        Ok(c) => Err(format!("HTTP status {c}")),
        Err(_) => Err(format!("bad HTTP status {code:?}")),
    }
}

/// Outcome of waiting for readiness, when nothing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
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
) -> Result<Readiness> {
    let start = Instant::now();
    let deadline = start + timeout;
    let mut pause = Duration::from_millis(5);
    let mut last = String::from("no attempt");
    loop {
        if stop_requested() {
            return Ok(Readiness::StopRequested);
        }
        if let Some(status) = child.try_exit()? {
            let status = match status.code() {
                Some(c) => format!("exited with code {c}"),
                None => format!("was killed by signal {}", exit_code(status) - 128),
            };
            return Err(Error::ExitedBeforeReady {
                target: probe.target(),
                status,
            });
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::ReadyTimeout {
                target: probe.target(),
                waited_ms: timeout.as_millis(),
                last,
            });
        }
        // Cap each attempt so a child that accepts but never answers cannot
        // hide its own exit or a stop request for long.
        match probe.attempt((deadline - now).min(Duration::from_millis(500))) {
            Ok(()) => return Ok(Readiness::Ready),
            Err(why) => last = why,
        }
        let now = Instant::now();
        if now < deadline {
            std::thread::sleep(pause.min(deadline - now));
        }
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lo() -> IpAddr {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    }

    #[test]
    fn parses_probes() {
        assert_eq!(
            Probe::parse("tcp", Some(80), lo()).unwrap(),
            Probe::Tcp("127.0.0.1:80".parse().unwrap())
        );
        assert_eq!(
            Probe::parse("tcp", Some(80), "::".parse().unwrap()).unwrap(),
            Probe::Tcp("[::1]:80".parse().unwrap())
        );
        assert!(Probe::parse("tcp", None, lo()).is_err());
        let p = Probe::parse("http://127.0.0.1:8080/healthz?x=1", None, lo()).unwrap();
        assert_eq!(
            p,
            Probe::Http {
                addr: "127.0.0.1:8080".parse().unwrap(),
                host: "127.0.0.1:8080".into(),
                path: "/healthz?x=1".into()
            }
        );
        let p = Probe::parse("http://[::1]:9", None, lo()).unwrap();
        assert_eq!(
            p,
            Probe::Http {
                addr: "[::1]:9".parse().unwrap(),
                host: "[::1]:9".into(),
                path: "/".into()
            }
        );
        let p = Probe::parse("http://localhost?a", None, lo()).unwrap();
        assert_eq!(
            p,
            Probe::Http {
                addr: "127.0.0.1:80".parse().unwrap(),
                host: "localhost".into(),
                path: "/?a".into()
            }
        );
        for bad in [
            "https://127.0.0.1/",
            "http://example.com/",
            "http://127.0.0.1:0/",
            "http://127.0.0.1:99999/",
            "http://[::1/",
            "http://u@127.0.0.1/",
            "http://127.0.0.1/a b",
            "udp",
        ] {
            assert!(Probe::parse(bad, Some(1), lo()).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_http_check_that_gets_no_answer_says_it_timed_out() {
        // Accepts (the backlog does) but never answers.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let p = Probe::parse(&url, None, lo()).unwrap();
        let e = p.attempt(Duration::from_millis(50)).unwrap_err();
        assert_eq!(e, "reading response: timed out after 50 ms");
    }
}
