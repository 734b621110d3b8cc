//! One probe: how svkit asks whether a program is ready or alive. A slot's
//! readiness (`notification_fd`, or a check command), its liveness check
//! (`exec`, `tcp`, `http`) and `svkit-lifeline --ready` (`tcp`, an http://
//! URL) are each a [`Probe`]; what decides when to run one and what follows
//! from it (readiness, liveness, lifeline) lives with them.
//!
//! Imports nothing of svkit's domain: config validates its URLs here.

mod exec;
mod http;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

pub use http::HttpTarget;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The program writes a newline to this fd when ready (s6's
    /// `notification-fd`): s6 sees it; nothing is attempted.
    Notification(u32),
    /// A command that passes by exiting 0 within the timeout (argv, with
    /// the privilege drop in front when the slot has a user).
    Exec(Vec<String>),
    /// A TCP connect succeeds.
    Tcp(SocketAddr),
    /// A GET answers 2xx.
    Http(HttpTarget),
}

/// Where `tcp` connects for a bind address: the unspecified addresses mean
/// "every interface", so loopback answers for them.
pub fn connect_addr(bind: IpAddr, port: u16) -> SocketAddr {
    let ip = match bind {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, port)
}

impl Probe {
    /// `http://HOST[:PORT][/PATH]`, where HOST is an IP literal (`[::1]` for
    /// IPv6) or `localhost`; no DNS. `Err` says what is wrong with it.
    pub fn http(url: &str) -> Result<Probe, String> {
        HttpTarget::parse(url).map(Probe::Http)
    }

    /// What it checks, for messages: `tcp ADDR`, the URL, the command.
    pub fn target(&self) -> String {
        match self {
            Probe::Notification(fd) => format!("notification fd {fd}"),
            Probe::Exec(argv) => argv.join(" "),
            Probe::Tcp(a) => format!("tcp {a}"),
            Probe::Http(h) => h.target(),
        }
    }

    /// One attempt, bounded by `timeout`. `Err` says why it did not pass.
    pub fn attempt(&self, timeout: Duration) -> Result<(), String> {
        let timeout = timeout.max(Duration::from_millis(1));
        match self {
            Probe::Notification(fd) => Err(format!(
                "readiness on notification fd {fd} is s6's to see, not a check to run"
            )),
            Probe::Exec(argv) => exec::run(argv, timeout),
            Probe::Tcp(addr) => std::net::TcpStream::connect_timeout(addr, timeout)
                .map(|_| ())
                .map_err(|e| why(&e, timeout)),
            Probe::Http(h) => h.get(timeout),
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
