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
///
/// The walk costs a few system calls per process and per descriptor; on
/// machines where system calls are slow (VMs) that dominates, so the pids
/// are split across the available CPUs.
pub fn scan_root(root: &str, wanted: &BTreeSet<u64>) -> io::Result<Scan> {
    if wanted.is_empty() {
        return Ok(Scan::default());
    }
    let pids: Vec<i32> = fs::read_dir(root)?
        .flatten()
        .filter_map(|e| {
            std::str::from_utf8(e.file_name().as_bytes())
                .ok()
                .and_then(|s| s.parse::<i32>().ok())
        })
        .collect();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    // Below a few hundred processes a thread costs more than it saves.
    if workers <= 1 || pids.len() < 256 {
        return Ok(scan_pids(root, &pids, wanted));
    }
    let chunk = pids.len().div_ceil(workers);
    let parts: Vec<Scan> = std::thread::scope(|sc| {
        let handles: Vec<_> = pids
            .chunks(chunk)
            .map(|c| sc.spawn(move || scan_pids(root, c, wanted)))
            .collect();
        // A worker that panicked is a bug, but falling back to scanning its
        // share here keeps the answer complete instead of silently partial.
        handles
            .into_iter()
            .zip(pids.chunks(chunk))
            .map(|(h, c)| h.join().unwrap_or_else(|_| scan_pids(root, c, wanted)))
            .collect()
    });
    let mut out = Scan::default();
    for part in parts {
        for (inode, holders) in part.owners {
            out.owners.entry(inode).or_default().extend(holders);
        }
        out.unreadable.extend(part.unreadable);
    }
    Ok(out)
}

fn scan_pids(root: &str, pids: &[i32], wanted: &BTreeSet<u64>) -> Scan {
    let mut out = Scan::default();
    let mut path = String::with_capacity(64);
    for &pid in pids {
        path.clear();
        use std::fmt::Write;
        let _ = write!(path, "{root}/{pid}/fd");
        let fds = match fs::read_dir(&path) {
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
    out
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
