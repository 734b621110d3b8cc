//! Reading an env file or a secret at slot start: a regular file (symlinks
//! are followed: a Kubernetes secret volume is made of them), bounded in
//! size, and for a secret, readable by no one but its owner and group.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use crate::config::names::MAX_ARG_STRLEN;
use crate::msg::strerror;

/// An env file larger than this is not one (it could not fit the kernel's
/// limit on a program's environment anyway).
pub const MAX_ENV_FILE_BYTES: u64 = 1 << 20;

/// What a file is read for: the checks differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    EnvFile,
    /// The variable it becomes.
    Secret,
}

/// The file's bytes, or why it is refused (never its content).
pub fn read(path: &Path, kind: Purpose, max: u64) -> Result<Vec<u8>, String> {
    // Non-blocking: a FIFO put where a file should be must not hang the
    // start; it is refused below, as anything but a regular file is.
    let f = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| strerror(&e))?;
    let meta = f.metadata().map_err(|e| strerror(&e))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mode = meta.mode() & 0o7777;
    if kind == Purpose::Secret {
        if mode & 0o004 != 0 {
            return Err(format!(
                "readable by every user (mode {mode:04o}): refused; make it unreadable to others (chmod o-r, or mount the secret with mode 0400 or 0440)"
            ));
        }
        if mode & 0o002 != 0 {
            return Err(format!(
                "writable by every user (mode {mode:04o}): refused (chmod o-w)"
            ));
        }
    }
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| strerror(&e))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(bytes)
}

/// A secret's value: its file's content less one trailing newline (what
/// `echo value > file` adds), checked to fit in `VAR=value`.
pub fn secret(var: &str, path: &Path) -> Result<Vec<u8>, String> {
    // `VAR=value` and its NUL within the kernel's limit.
    let max = MAX_ARG_STRLEN.saturating_sub(var.len() + 2);
    let mut v = read(path, Purpose::Secret, max as u64 + 1)?;
    if v.last() == Some(&b'\n') {
        v.pop();
    }
    if v.len() > max {
        return Err(format!(
            "larger than {max} bytes: the kernel passes no longer {var}=value to a program"
        ));
    }
    if v.contains(&0) {
        return Err("holds a NUL byte, which no program can receive".into());
    }
    Ok(v)
}
