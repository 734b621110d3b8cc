//! A directory opened relative to another and listed through its own
//! descriptor, so a scan stats, lists and reads exactly the inode it opened
//! (and resolves short relative names, not whole paths from `/`).

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
use nix::sys::stat::Mode;
use std::ffi::{CStr, CString};
use std::os::fd::RawFd;
use std::path::Path;
use std::ptr::NonNull;

pub struct DirFd(NonNull<libc::DIR>);

impl DirFd {
    /// Opens `name` under `parent` as a directory; a symlink to one only
    /// if `follow`.
    pub fn open(parent: RawFd, name: &Path, follow: bool) -> nix::Result<DirFd> {
        let mut flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        if !follow {
            flags |= OFlag::O_NOFOLLOW;
        }
        let fd = nix::fcntl::openat(Some(parent), name, flags, Mode::empty())?;
        // SAFETY: `fd` is a fresh descriptor nothing else owns; on success
        // the DIR stream owns it (closedir closes it).
        let dir = unsafe { libc::fdopendir(fd) };
        match NonNull::new(dir) {
            Some(dir) => Ok(DirFd(dir)),
            None => {
                let e = Errno::last();
                // SAFETY: fdopendir failed, so `fd` is still ours to close.
                unsafe { libc::close(fd) };
                Err(e)
            }
        }
    }

    pub fn fd(&self) -> RawFd {
        // SAFETY: the stream is open until drop.
        unsafe { libc::dirfd(self.0.as_ptr()) }
    }

    /// Every name in the directory but `.` and `..`.
    pub fn names(&mut self) -> nix::Result<Vec<CString>> {
        let mut out = Vec::new();
        loop {
            Errno::clear();
            // SAFETY: the stream is open; the entry returned stays valid
            // until the next readdir on it, and is copied out before that.
            let entry = unsafe { libc::readdir64(self.0.as_ptr()) };
            if entry.is_null() {
                return match Errno::last_raw() {
                    0 => Ok(out),
                    _ => Err(Errno::last()),
                };
            }
            // SAFETY: d_name is a NUL-terminated name inside the entry.
            let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            if name != c"." && name != c".." {
                out.push(name.to_owned());
            }
        }
    }
}

impl Drop for DirFd {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed exactly once, here.
        unsafe { libc::closedir(self.0.as_ptr()) };
    }
}
