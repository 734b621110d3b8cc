//! Socket inode → owning pids, by walking `/proc/PID/fd`.
//!
//! This is what `lsof` does, minus everything `lsof` does besides: one
//! `readdir` of `/proc`, one of each `fd` directory, one `readlink` per
//! descriptor, and nothing is stat'ed. A process whose `fd` directory we may
//! not read (another user's, without privilege) is reported as unreadable so
//! that "no visible owner" can be told apart from "no owner".

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
    scan_root("/proc", wanted)
}

/// As [`scan`], over a proc tree mounted at `root` (tests, other mounts).
pub fn scan_root(root: &str, wanted: &BTreeSet<u64>) -> io::Result<Scan> {
    let mut out = Scan::default();
    if wanted.is_empty() {
        return Ok(out);
    }
    for entry in fs::read_dir(root)? {
        let entry = match entry {
            Ok(e) => e,
            Err(_) => continue,
        };
        let name = entry.file_name();
        let Some(pid) = std::str::from_utf8(name.as_bytes())
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let fd_dir = format!("{root}/{pid}/fd");
        let fds = match fs::read_dir(&fd_dir) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                out.unreadable.insert(pid);
                continue;
            }
            // Gone since the readdir, or a kernel thread: nothing to see.
            Err(_) => continue,
        };
        for fd in fds.flatten() {
            let Ok(target) = fs::read_link(fd.path()) else {
                continue;
            };
            if let Some(inode) = socket_inode(target.as_os_str().as_bytes()) {
                if wanted.contains(&inode) {
                    out.owners.entry(inode).or_default().insert(pid);
                }
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
