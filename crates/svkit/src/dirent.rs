//! Listing a directory with one buffer for the whole walk and no
//! allocation per entry (and, in procfs, one `getdents64` fewer than libc's
//! `readdir`): the /proc walk and the no-op apply list thousands of entries.

use nix::fcntl::{openat, OFlag};
use nix::libc;
use nix::sys::stat::Mode;
use nix::NixPath;
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Opens a directory (`at` = None: `path` from the cwd or absolute).
pub fn open_dir(at: Option<RawFd>, path: &(impl NixPath + ?Sized)) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let raw = openat(at, path, flags, Mode::empty()).map_err(io::Error::from)?;
    // SAFETY: raw is a fresh descriptor from openat that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Room for a listing's entries per `getdents64`: 32 KiB, as glibc uses.
const DENTS_WORDS: usize = 4096;
/// The largest entry `getdents64` returns from procfs: header, a 255-byte
/// name, NUL, padding.
const MAX_DIRENT: usize = 280;

/// Calls `f` with every name in the directory `dir` but `.` and `..`, and
/// its type as the listing says (`DT_*`; `DT_UNKNOWN` on filesystems that
/// do not say). Any filesystem: the listing ends at the call that returns
/// nothing.
pub fn each_entry(dir: &OwnedFd, f: impl FnMut(&CStr, u8)) -> io::Result<()> {
    list(dir, false, f)
}

/// As [`each_entry`], for a dir of procfs, which fills the buffer while it
/// has entries: a call that leaves more than an entry's room unused ends
/// the listing, one system call sooner, which a walk of every process's
/// `fd` dir makes thousands of times. Not for other filesystems: FUSE, for
/// one, hands out a page of entries a call.
pub fn each_proc_entry(dir: &OwnedFd, f: impl FnMut(&CStr, u8)) -> io::Result<()> {
    list(dir, true, f)
}

fn list(dir: &OwnedFd, short_is_end: bool, mut f: impl FnMut(&CStr, u8)) -> io::Result<()> {
    let mut buf = vec![0u64; DENTS_WORDS];
    let bytes = DENTS_WORDS * 8;
    loop {
        // SAFETY: the kernel writes at most `bytes` into our buffer.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.as_raw_fd(),
                buf.as_mut_ptr(),
                bytes,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: u64 words viewed as the bytes the kernel wrote.
        let raw = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
        let mut off = 0;
        // struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
        while off + 19 < n {
            let reclen = u16::from_ne_bytes([raw[off + 16], raw[off + 17]]) as usize;
            let Some(rec) = raw.get(off + 19..off + reclen) else {
                break;
            };
            if let Ok(name) = CStr::from_bytes_until_nul(rec) {
                let b = name.to_bytes();
                if b != b"." && b != b".." {
                    f(name, raw[off + 18]);
                }
            }
            off += reclen.max(1);
        }
        if n == 0 || short_is_end && n + MAX_DIRENT <= bytes {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn listing(dir: &std::path::Path) -> BTreeMap<String, u8> {
        let fd = open_dir(None, dir).expect("open");
        let mut seen = BTreeMap::new();
        each_entry(&fd, |name, t| {
            let name = name.to_string_lossy().into_owned();
            assert!(seen.insert(name, t).is_none(), "listed twice");
        })
        .expect("list");
        seen
    }

    #[test]
    fn lists_every_name_once_with_its_type() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(tmp.path().join("d")).expect("mkdir");
        std::fs::write(tmp.path().join("f"), "").expect("write");
        std::os::unix::fs::symlink("d", tmp.path().join("l")).expect("symlink");
        let seen = listing(tmp.path());
        let names: Vec<&str> = seen.keys().map(String::as_str).collect();
        assert_eq!(names, ["d", "f", "l"], "no . or ..");
        // A filesystem may say DT_UNKNOWN; when it says, it says right.
        for (name, want) in [
            ("d", libc::DT_DIR),
            ("f", libc::DT_REG),
            ("l", libc::DT_LNK),
        ] {
            let t = seen[name];
            assert!(t == want || t == libc::DT_UNKNOWN, "{name}: {t}");
        }
    }

    /// More than one buffer's worth: the listing goes on past a full one.
    #[test]
    fn lists_past_one_buffer() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let long = "x".repeat(200);
        let n = 3 * DENTS_WORDS * 8 / 220;
        for i in 0..n {
            std::fs::write(tmp.path().join(format!("{i:04}{long}")), "").expect("write");
        }
        let seen = listing(tmp.path());
        assert_eq!(seen.len(), n);
        let fd = open_dir(None, tmp.path()).expect("open");
        let mut count = 0;
        each_proc_entry(&fd, |_, _| count += 1).expect("list");
        assert_eq!(count, n, "a full buffer is never taken for the end");
        assert!((0..n).all(|i| seen.contains_key(&format!("{i:04}{long}"))));
    }

    #[test]
    fn a_missing_dir_is_an_error() {
        let err = open_dir(None, "/nonexistent/svkit-dirent").expect_err("missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
