//! Socket inode → owning pids, by walking `/proc/PID/fd`.
//!
//! This is what `lsof` does, minus everything `lsof` does besides. Each
//! system call on `/proc` costs microseconds on a VM, so the walk makes as
//! few as it can: names are resolved relative to a directory already open
//! (`openat` of `PID/fd` from `/proc`, `readlinkat` of each descriptor from
//! there), nothing is stat'ed, a short `getdents64` ends a listing
//! without asking again, and the pids are split across the CPUs: on a quiet
//! 2-CPU machine, `--which-port` among 2,068 processes took 66-70 ms on
//! two threads and 90-97 ms on one (`bench/lifeline.sh`, medians of 7,
//! runs alternated). A process whose
//! `fd` directory we may not read (another user's, without privilege) is
//! reported as unreadable so that "no visible owner" can be told apart from
//! "no owner".

use crate::dirent;
use crate::sys;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CStr;
use std::io;
use std::os::fd::OwnedFd;

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
    if wanted.is_empty() {
        return Ok(Scan::default());
    }
    let proc = dirent::open_dir(None, root)?;
    let mut pids = Vec::new();
    dirent::each_entry(&proc, |name, _| {
        if let Some(pid) = std::str::from_utf8(name.to_bytes())
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
        {
            pids.push(pid);
        }
    })?;
    // One chunk a CPU, none under PIDS_PER_THREAD: a thread costs more
    // than it saves on a small walk.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(pids.len() / PIDS_PER_THREAD)
        .max(1);
    let chunk = pids.len().div_ceil(threads).max(1);
    let parts: Vec<Scan> = std::thread::scope(|sc| {
        let proc = &proc;
        let handles: Vec<_> = (pids.chunks(chunk).skip(1))
            .map(|c| sc.spawn(move || scan_pids(proc, c, wanted)))
            .collect();
        let mut parts = vec![scan_pids(
            proc,
            pids.chunks(chunk).next().unwrap_or(&[]),
            wanted,
        )];
        // A worker that panicked has no result: its pids are scanned again here.
        for (h, c) in handles.into_iter().zip(pids.chunks(chunk).skip(1)) {
            parts.push(h.join().unwrap_or_else(|_| scan_pids(proc, c, wanted)));
        }
        parts
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

/// Below this many processes per thread, one thread walks them all.
const PIDS_PER_THREAD: usize = 256;

fn scan_pids(proc: &OwnedFd, pids: &[i32], wanted: &BTreeSet<u64>) -> Scan {
    let mut out = Scan::default();
    let mut link = [0u8; 64];
    for &pid in pids {
        let fds: OwnedFd = match dirent::open_dir(Some(proc), format!("{pid}/fd").as_str()) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                out.unreadable.insert(pid);
                continue;
            }
            // Gone since the readdir, or a kernel thread: nothing to see.
            Err(_) => continue,
        };
        let _ = dirent::each_entry(&fds, |name: &CStr, _| {
            // A descriptor closed since the listing, or not a socket: skip.
            let Ok(len) = sys::readlink_at(&fds, name, &mut link) else {
                return;
            };
            if let Some(inode) = link.get(..len).and_then(socket_inode) {
                if wanted.contains(&inode) {
                    out.owners.entry(inode).or_default().insert(pid);
                }
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
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
