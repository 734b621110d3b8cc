//! Instance sources: the only I/O validation needs, behind a trait so the
//! rest of validation stays pure (tests pass a fixed list). Validation asks
//! them for the names a `from_dir` finds and for the names registered at
//! runtime (`svctl register`, kept by `crate::state`).

use super::error::Warning;
use crate::dirent;
use nix::errno::Errno;
use nix::fcntl::AtFlags;
use nix::sys::stat::{fstatat, SFlag};
use rustix::fs::FileType;
use std::io;
use std::os::fd::AsRawFd;

/// Lists candidate instance names under a directory.
pub trait InstanceSource {
    /// Names of the subdirectories of `dir` (optionally only those holding a
    /// regular file `require_file`), unvalidated and in any order. A
    /// missing `dir` yields an empty list, not an error: a fresh volume has
    /// no profiles yet.
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>>;

    /// Names registered at runtime, under the config's `state_dir` (first
    /// argument), for the slot declared as `template` (second), unvalidated
    /// and in any order; what the source cannot read it reports in the
    /// warnings. None by default.
    fn registered(&self, _: &str, _: &str, _: &mut Vec<Warning>) -> Vec<String> {
        Vec::new()
    }
}

/// Reads the real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsInstances;

impl InstanceSource for FsInstances {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>> {
        let fd = match dirent::open_dir(None, dir) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        // Named from the open dir: one or two components to look up, not
        // the whole path again for every instance.
        let kind = |rel: &[u8]| {
            fstatat(Some(fd.as_raw_fd()), rel, AtFlags::AT_SYMLINK_NOFOLLOW)
                .map(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT)
        };
        let mut out = Vec::new();
        let mut rel = Vec::new();
        let mut failed = None;
        dirent::each_entry(&fd, |name, d_type| {
            let name = name.to_bytes();
            // Symlinked entries are not followed: an instance is a real
            // subdirectory of the declared dir.
            let is_dir = match d_type {
                FileType::Directory => true,
                // The listing does not say: ask. Gone since is not there;
                // any other failure fails the listing, as readdir's would.
                FileType::Unknown => match kind(name) {
                    Ok(k) => k == SFlag::S_IFDIR,
                    Err(Errno::ENOENT) => false,
                    Err(e) => {
                        failed.get_or_insert(e);
                        false
                    }
                },
                _ => false,
            };
            if !is_dir {
                return;
            }
            if let Some(req) = require_file {
                rel.clear();
                rel.extend_from_slice(name);
                rel.push(b'/');
                rel.extend_from_slice(req.as_bytes());
                if kind(&rel) != Ok(SFlag::S_IFREG) {
                    return;
                }
            }
            // A non-UTF-8 name is kept with its odd bytes shown as `\xNN`:
            // validation then rejects it with a warning naming it.
            out.push(crate::msg::bytes(name));
        })?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(out),
        }
    }
}

/// A fixed answer per directory, for tests and for `svctl plan` dry runs.
#[derive(Debug, Clone, Default)]
pub struct FixedInstances(pub Vec<(String, Vec<String>)>);

impl InstanceSource for FixedInstances {
    fn discover(&self, dir: &str, _require_file: Option<&str>) -> io::Result<Vec<String>> {
        Ok(self
            .0
            .iter()
            .find(|(d, _)| d == dir)
            .map(|(_, v)| v.clone())
            .unwrap_or_default())
    }
}
