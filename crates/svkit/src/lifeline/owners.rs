//! Socket inode → owning pids, by walking `/proc/PID/fd`.
//!
//! This is what `lsof` does, minus everything `lsof` does besides: a
//! container's tens of processes, listed and read with plain `std::fs`. A
//! process whose `fd` directory we may not read (another user's, without
//! privilege) is reported as unreadable so that "no visible owner" can be
//! told apart from "no owner".

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;

/// Result of one scan.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    /// For each wanted inode, the pids holding a descriptor to it.
    pub owners: BTreeMap<u64, BTreeSet<i32>>,
    /// Pids whose descriptors we were not allowed to read.
    pub unreadable: BTreeSet<i32>,
}

impl Scan {
    pub fn pids(&self) -> BTreeSet<i32> {
        self.owners.values().flatten().copied().collect()
    }
}

/// `socket:[12345]` → 12345.
pub fn socket_inode(link: &[u8]) -> Option<u64> {
    let rest = link.strip_prefix(b"socket:[")?;
    let digits = rest.strip_suffix(b"]")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Finds the holders of the given socket inodes among all visible processes.
pub fn scan(wanted: &BTreeSet<u64>) -> io::Result<Scan> {
    let mut out = Scan::default();
    if wanted.is_empty() {
        return Ok(out);
    }
    for entry in fs::read_dir("/proc")? {
        let Some(pid) = entry?.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let fds = match fs::read_dir(format!("/proc/{pid}/fd")) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                out.unreadable.insert(pid);
                continue;
            }
            // Gone since the listing, or a kernel thread: nothing to see.
            Err(_) => continue,
        };
        // A descriptor closed since the listing, or not a socket: skipped.
        for link in fds.flatten().filter_map(|fd| fs::read_link(fd.path()).ok()) {
            match socket_inode(link.as_os_str().as_bytes()) {
                Some(inode) if wanted.contains(&inode) => {
                    out.owners.entry(inode).or_default().insert(pid);
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::os::unix::fs::MetadataExt;

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
        let scan = scan(&BTreeSet::from([ino])).unwrap();
        assert!(scan.owners[&ino].contains(&(std::process::id() as i32)));
    }
}
