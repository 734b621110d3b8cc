//! An `http` probe: `GET` must answer 2xx.
//!
//! The client is a dozen lines over `std::net::TcpStream` on purpose: it
//! only ever talks to a local program, needs no TLS, redirects or
//! keep-alive, and a full client crate would dwarf the rest of svkit.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::why;

/// A parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// As written (what a rendered script passes on).
    pub url: String,
    pub addr: SocketAddr,
    /// The `Host` header: the URL's authority.
    pub host: String,
    /// Path and query, `/`-led.
    pub path: String,
}

impl HttpTarget {
    /// `http://HOST[:PORT][/PATH]`, HOST an IP literal or `localhost`.
    pub fn parse(url: &str) -> Result<HttpTarget, String> {
        let rest = url.strip_prefix("http://").ok_or("want an http:// URL")?;
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err("the path may not hold spaces or control characters".into());
        }
        if authority.contains('@') {
            return Err("user info is not supported".into());
        }
        let (host, port_str) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("unclosed '['")?;
            (h, after.strip_prefix(':'))
        } else {
            (authority.rsplit_once(':')).map_or((authority, None), |(h, p)| (h, Some(p)))
        };
        let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            host.parse()
                .map_err(|_| "the host must be an IP address or localhost")?
        };
        let port = port_str.map_or(Some(80), |p| p.parse().ok().filter(|p| *p != 0));
        let port = port.ok_or("bad port")?;
        Ok(HttpTarget {
            url: url.to_string(),
            addr: SocketAddr::new(ip, port),
            host: authority.to_string(),
            path,
        })
    }

    pub fn target(&self) -> String {
        format!("http://{}{}", self.host, self.path)
    }

    /// One GET, bounded by `timeout`; only the status line is read.
    pub fn get(&self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let mut s =
            TcpStream::connect_timeout(&self.addr, timeout).map_err(|e| why(&e, timeout))?;
        let left = || {
            deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        };
        s.set_write_timeout(Some(left()))
            .map_err(|e| e.to_string())?;
        let req = format!(
            "GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: svkit-lifeline\r\nConnection: close\r\n\r\n",
            self.path, self.host
        );
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
        let proto = parts.next().filter(|p| p.starts_with("HTTP/"));
        let Some(code) = proto.and_then(|_| parts.next()) else {
            return Err(format!("no HTTP status line (got {line:?})"));
        };
        match code.parse::<u16>() {
            Ok(c) if (200..300).contains(&c) => Ok(()),
            Ok(c) => Err(format!("HTTP status {c}")),
            Err(_) => Err(format!("bad HTTP status {code:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{connect_addr, Probe};
    use super::*;

    fn http(addr: &str, host: &str, path: &str, url: &str) -> Probe {
        Probe::Http(HttpTarget {
            url: url.into(),
            addr: addr.parse().unwrap(),
            host: host.into(),
            path: path.into(),
        })
    }

    #[test]
    fn parses_probes() {
        assert_eq!(
            connect_addr("::".parse().unwrap(), 80),
            "[::1]:80".parse::<SocketAddr>().unwrap()
        );
        let u = "http://127.0.0.1:8080/healthz?x=1";
        assert_eq!(
            Probe::http(u).unwrap(),
            http("127.0.0.1:8080", "127.0.0.1:8080", "/healthz?x=1", u)
        );
        let u = "http://[::1]:9";
        assert_eq!(Probe::http(u).unwrap(), http("[::1]:9", "[::1]:9", "/", u));
        let u = "http://localhost?a";
        assert_eq!(
            Probe::http(u).unwrap(),
            http("127.0.0.1:80", "localhost", "/?a", u)
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
            assert!(Probe::http(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_http_check_that_gets_no_answer_says_it_timed_out() {
        // Accepts (the backlog does) but never answers.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let p = Probe::http(&url).unwrap();
        let e = p.attempt(Duration::from_millis(50)).unwrap_err();
        assert_eq!(e, "reading response: timed out after 50 ms");
    }
}
