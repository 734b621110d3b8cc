//! Who holds a port: the listening sockets that would stop a `bind`, from
//! `/proc/net/tcp` and `/proc/net/tcp6`, and the processes whose
//! descriptors point at them, from `/proc/PID/fd`.
//!
//! The tables are the kernel's own view of the network namespace we run in,
//! so reading them needs no privilege and no external tool (`ss`, `lsof`).
//! Addresses are printed as hex words in *host* byte order (the kernel prints
//! each `__be32` word with `%08X` as a native integer), so decoding goes
//! through `to_ne_bytes`, which is right on both little- and big-endian hosts.
//!
//! The descriptor walk is what `lsof` does, minus everything `lsof` does
//! besides: a container's tens of processes, listed and read with plain
//! `std::fs`. A process whose `fd` directory we may not read (another
//! user's, without privilege) is reported as unreadable so that "no visible
//! owner" can be told apart from "no owner".

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::ffi::OsStrExt;

use super::identity::{self, Identity};
use super::Error;
use crate::msg::At;

/// TCP state `0A` in the tables: a listening socket.
pub const TCP_LISTEN: u8 = 0x0A;

/// One row of `/proc/net/tcp{,6}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpEntry {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub state: u8,
    /// Effective uid of the process that created the socket.
    pub uid: u32,
    /// Socket inode: `/proc/PID/fd/N -> socket:[inode]` for its holders.
    pub inode: u64,
}

impl TcpEntry {
    pub fn is_listening(&self) -> bool {
        self.state == TCP_LISTEN
    }
}

/// Why a table line could not be parsed, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {why}")]
pub struct ParseError {
    pub at: At,
    pub why: String,
}

fn parse_addr(field: &str) -> Result<SocketAddr, String> {
    let (ip_hex, port_hex) = field
        .split_once(':')
        .ok_or_else(|| format!("address {field:?} has no ':'"))?;
    let port = u16::from_str_radix(port_hex, 16).map_err(|_| format!("bad port {port_hex:?}"))?;
    let n = ip_hex.len();
    if n != 8 && n != 32 {
        return Err(format!(
            "address {ip_hex:?} has {n} hex digits, want 8 or 32"
        ));
    }
    // One native-endian word per 8 hex digits, as the kernel printed it.
    let mut b = [0u8; 16];
    for (i, chunk) in b.chunks_mut(4).take(n / 8).enumerate() {
        let word = (ip_hex.get(i * 8..i * 8 + 8)).and_then(|h| u32::from_str_radix(h, 16).ok());
        let word = word.ok_or_else(|| format!("bad ip {ip_hex:?}"))?;
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    let ip = match n {
        8 => IpAddr::from([b[0], b[1], b[2], b[3]]),
        _ => IpAddr::from(b),
    };
    Ok(SocketAddr::new(ip, port))
}

/// Parses one data line (not the header).
pub fn parse_line(line: &str) -> Result<TcpEntry, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 10 {
        return Err(format!("{} fields, want at least 10", fields.len()));
    }
    let bad = |what: &str, i: usize| format!("bad {what} {:?}", fields[i]);
    Ok(TcpEntry {
        local: parse_addr(fields[1])?,
        remote: parse_addr(fields[2])?,
        state: u8::from_str_radix(fields[3], 16).map_err(|_| bad("state", 3))?,
        uid: fields[7].parse().map_err(|_| bad("uid", 7))?,
        inode: fields[9].parse().map_err(|_| bad("inode", 9))?,
    })
}

/// Parses a whole table read from `path` (the first line is the header).
pub fn parse_table(path: &str, text: &str) -> Result<Vec<TcpEntry>, ParseError> {
    (text.lines().enumerate().skip(1))
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            parse_line(line).map_err(|why| ParseError {
                at: At::line(path, i + 1),
                why,
            })
        })
        .collect()
}

/// Would a listener on `held` make `bind(want)` fail with EADDRINUSE?
///
/// Follows Linux semantics without `SO_REUSEPORT`, erring towards "conflict"
/// where the table cannot tell (an IPv6 wildcard listener may or may not be
/// `IPV6_V6ONLY`, so it is taken to cover IPv4 too). `want = None` means "any
/// address" (the `--which-port` query).
pub fn conflicts(held: &SocketAddr, want: Option<IpAddr>, port: u16) -> bool {
    if held.port() != port {
        return false;
    }
    let Some(want) = want else { return true };
    // `::ffff:a.b.c.d` is a.b.c.d.
    let want = want.to_canonical();
    if held.ip().to_canonical() == want || want.is_unspecified() {
        return true;
    }
    match (held.ip(), want) {
        // 0.0.0.0 covers every IPv4 address, :: every address (dual stack).
        (IpAddr::V4(h), IpAddr::V4(_)) => h.is_unspecified(),
        (IpAddr::V6(h), _) => h.is_unspecified(),
        (IpAddr::V4(_), IpAddr::V6(_)) => false,
    }
}

/// Listening sockets that would stop us binding `want:port`.
pub fn listeners_blocking(entries: &[TcpEntry], want: Option<IpAddr>, port: u16) -> Vec<TcpEntry> {
    entries
        .iter()
        .filter(|e| e.is_listening() && conflicts(&e.local, want, port))
        .cloned()
        .collect()
}

/// `socket:[12345]` → 12345.
pub fn socket_inode(link: &[u8]) -> Option<u64> {
    let rest = link.strip_prefix(b"socket:[")?;
    let digits = rest.strip_suffix(b"]")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The pids holding each of the `wanted` socket inodes, among all visible
/// processes; those whose descriptors we may not read go to `unreadable`.
fn holders(
    wanted: &BTreeSet<u64>,
    unreadable: &mut BTreeSet<i32>,
) -> io::Result<BTreeMap<u64, BTreeSet<i32>>> {
    let mut out: BTreeMap<u64, BTreeSet<i32>> = BTreeMap::new();
    for entry in fs::read_dir("/proc")? {
        let Some(pid) = entry?.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let fds = match fs::read_dir(format!("/proc/{pid}/fd")) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                unreadable.insert(pid);
                continue;
            }
            // Gone since the listing, or a kernel thread: nothing to see.
            Err(_) => continue,
        };
        // A descriptor closed since the listing, or not a socket: skipped.
        for link in fds.flatten().filter_map(|fd| fs::read_link(fd.path()).ok()) {
            match socket_inode(link.as_os_str().as_bytes()) {
                Some(inode) if wanted.contains(&inode) => {
                    out.entry(inode).or_default().insert(pid);
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Who holds a port.
#[derive(Debug, Clone, Default)]
pub struct PortReport {
    pub port: u16,
    pub bind: Option<IpAddr>,
    pub listeners: Vec<TcpEntry>,
    pub owners: Vec<Identity>,
    /// Listening sockets no visible process holds.
    pub unowned: Vec<TcpEntry>,
    /// Pids whose descriptors we could not read.
    pub unreadable: BTreeSet<i32>,
}

impl PortReport {
    pub fn is_free(&self) -> bool {
        self.listeners.is_empty()
    }
}

/// Finds the listeners blocking `bind:port` (any address when `bind` is
/// `None`) and the processes holding them.
pub fn inspect_port(port: u16, bind: Option<IpAddr>) -> super::Result<PortReport> {
    // Both tables of the current network namespace. A missing `tcp6`
    // (IPv6 disabled) is an empty table, not an error.
    let unreadable = |e| Error::io("unable to read /proc/net/tcp", e);
    let mut tables = Vec::new();
    for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match fs::read_to_string(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && path.ends_with('6') => continue,
            text => text.map_err(unreadable)?,
        };
        let rows =
            parse_table(path, &text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
        tables.extend(rows.map_err(unreadable)?);
    }
    let mut report = PortReport {
        port,
        bind,
        listeners: listeners_blocking(&tables, bind, port),
        ..Default::default()
    };
    if report.listeners.is_empty() {
        return Ok(report);
    }
    let wanted: BTreeSet<u64> = report.listeners.iter().map(|l| l.inode).collect();
    let held = holders(&wanted, &mut report.unreadable)
        .map_err(|e| Error::io("unable to scan /proc", e))?;
    for pid in held.values().flatten().collect::<BTreeSet<_>>() {
        let id = identity::read_identity(*pid);
        report
            .owners
            .extend(id.map_err(|e| Error::io(format!("unable to read /proc/{pid}"), e))?);
    }
    report.unowned = (report.listeners.iter())
        .filter(|l| !held.contains_key(&l.inode))
        .cloned()
        .collect();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::os::unix::fs::MetadataExt;

    // Sample rows as a little-endian x86_64 kernel prints them.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 123456 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 0 1 0000000000000000 20 4 30 10 -1
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   0        0 777 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  65534        0 888 1 0000000000000000 100 0 0 10 0
   2: 00000000000000000000000000000000:1F93 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   0        0 999 1 0000000000000000 100 0 0 10 0
";

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn parses_ipv4_rows() {
        let rows = parse_table("/proc/net/tcp", TCP).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].local, addr("127.0.0.1:8080"));
        assert!(rows[0].is_listening());
        assert_eq!(rows[0].uid, 1000);
        assert_eq!(rows[0].inode, 123456);
        assert_eq!(rows[1].local, addr("0.0.0.0:22"));
        assert_eq!(rows[2].remote, addr("127.0.0.1:50000"));
        assert!(!rows[2].is_listening());
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn parses_ipv6_and_v4_mapped_rows() {
        let rows = parse_table("/proc/net/tcp6", TCP6).unwrap();
        assert_eq!(rows[0].local, addr("[::1]:8081"));
        assert_eq!(rows[0].inode, 777);
        assert_eq!(rows[1].local, addr("[::ffff:127.0.0.1]:8082"));
        assert_eq!(rows[1].uid, 65534);
        assert_eq!(rows[2].local, addr("[::]:8083"));
    }

    #[test]
    fn rejects_garbage_with_line_number() {
        let err = parse_table(
            "/proc/net/tcp",
            "header\n   0: zz:1F90 00000000:0000 0A a b c 0 0 1\n",
        )
        .unwrap_err();
        assert_eq!(err.at.line, Some(2));
        assert!(err.to_string().starts_with("/proc/net/tcp:2: "), "{err}");
        assert!(parse_line("0: 0100007F:1F90").is_err());
        assert!(parse_line("0: 0100007F1F90 00000000:0000 0A a b c 0 0 1").is_err());
        assert!(parse_line("0: 0100007F:1F90 00000000:0000 0A a b c x 0 1").is_err());
        assert!(parse_line("0: 0100:1F90 00000000:0000 0A a b c 0 0 1").is_err());
    }

    #[test]
    fn conflict_rules() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let lo6: IpAddr = "::1".parse().unwrap();
        assert!(conflicts(&addr("127.0.0.1:80"), Some(lo), 80));
        assert!(!conflicts(&addr("127.0.0.1:81"), Some(lo), 80));
        assert!(conflicts(&addr("0.0.0.0:80"), Some(lo), 80));
        assert!(!conflicts(&addr("127.0.0.2:80"), Some(lo), 80));
        assert!(conflicts(&addr("[::]:80"), Some(lo), 80));
        assert!(conflicts(&addr("[::ffff:127.0.0.1]:80"), Some(lo), 80));
        assert!(conflicts(&addr("[::1]:80"), Some(lo6), 80));
        assert!(!conflicts(&addr("[::1]:80"), Some(lo), 80));
        assert!(!conflicts(&addr("127.0.0.1:80"), Some(lo6), 80));
        assert!(!conflicts(&addr("0.0.0.0:80"), Some(lo6), 80));
        assert!(conflicts(&addr("[::]:80"), Some(lo6), 80));
        assert!(conflicts(&addr("[::1]:80"), None, 80));
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn listeners_filter_by_state_and_address() {
        let rows = parse_table("/proc/net/tcp", TCP).unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let hits = listeners_blocking(&rows, Some(lo), 8080);
        assert_eq!(
            hits.len(),
            1,
            "the established row on 8080 is not a listener"
        );
        assert_eq!(hits[0].inode, 123456);
        assert_eq!(listeners_blocking(&rows, Some(lo), 22).len(), 1);
        assert!(listeners_blocking(&rows, Some(lo), 9).is_empty());
    }

    #[test]
    fn parses_socket_links() {
        assert_eq!(socket_inode(b"socket:[12345]"), Some(12345));
        assert_eq!(socket_inode(b"pipe:[12345]"), None);
        assert_eq!(socket_inode(b"socket:[12x]"), None);
        assert_eq!(socket_inode(b"socket:[12"), None);
    }

    #[test]
    fn finds_our_own_listener() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&l);
        let ino = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino();
        let held = holders(&BTreeSet::from([ino]), &mut BTreeSet::new()).unwrap();
        assert!(held[&ino].contains(&(std::process::id() as i32)));
    }
}
