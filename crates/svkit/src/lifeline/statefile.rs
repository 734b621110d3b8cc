//! The state file: who the running child is, so that the next lifeline can
//! prove a squatter on the port is a stale instance of ours.
//!
//! It is written only after the child is ready, atomically (a temp file in
//! the same directory, then `rename`), with mode 0600, and removed on stop
//! only while it still names our child (a newer lifeline may have replaced
//! it meanwhile). A state file is a kill licence, so a symlink, a
//! non-regular file or a file owned by another uid is refused outright
//! rather than followed or trusted.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Error, Result};

/// Upper bound on what we read: a real state file is ~100 bytes.
const MAX_STATE_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateRecord {
    pub port: u16,
    pub pid: i32,
    /// Field 22 of `/proc/PID/stat` when the child was recorded.
    pub start_time: u64,
    pub cmdline: Vec<String>,
}

fn refuse(path: &Path, why: impl Into<String>) -> Error {
    Error::StateRefused {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

fn check_metadata(path: &Path, meta: &fs::Metadata) -> Result<()> {
    if !meta.file_type().is_file() {
        return Err(refuse(path, "not a regular file"));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(refuse(
            path,
            format!("owned by uid {}, not by us (uid {me})", meta.uid()),
        ));
    }
    Ok(())
}

/// Reads and validates the state file; `Ok(None)` if it does not exist.
pub fn read(path: &Path) -> Result<Option<StateRecord>> {
    // O_NONBLOCK: opening a FIFO planted at the path must not hang us.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(refuse(path, "it is a symlink"));
        }
        Err(e) => return Err(Error::io(format!("unable to open {}", path.display()), e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("unable to stat {}", path.display()), e))?;
    check_metadata(path, &meta)?;
    let mut text = String::new();
    (&mut file)
        .take(MAX_STATE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| refuse(path, format!("unreadable: {e}")))?;
    if text.len() as u64 > MAX_STATE_BYTES {
        return Err(refuse(path, format!("larger than {MAX_STATE_BYTES} bytes")));
    }
    let rec: StateRecord =
        serde_json::from_str(&text).map_err(|e| refuse(path, format!("malformed JSON: {e}")))?;
    if rec.port == 0 || rec.pid <= 0 {
        return Err(refuse(path, "port and pid must be positive"));
    }
    Ok(Some(rec))
}

/// Writes the record atomically with mode 0600; refuses to replace
/// anything at `path` we would refuse to read.
pub fn write(path: &Path, rec: &StateRecord) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(refuse(path, "it is a symlink")),
        Ok(meta) => check_metadata(path, &meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(format!("unable to stat {}", path.display()), e)),
    }
    let mut body = serde_json::to_vec(rec)
        .map_err(|e| Error::io("unable to encode state", io::Error::other(e)))?;
    body.push(b'\n');
    crate::fsutil::write_atomic(path, &body, 0o600, None)
        .map_err(|e| Error::io(format!("unable to write state file {}", path.display()), e))
}

/// Removes the state file if it still names `pid`/`start_time`. Returns
/// whether it removed it. A file naming someone else is left alone: a newer
/// lifeline owns it now.
pub fn remove_if_ours(path: &Path, pid: i32, start_time: u64) -> Result<bool> {
    match read(path)? {
        Some(rec) if rec.pid == pid && rec.start_time == start_time => {
            match fs::remove_file(path) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(Error::io(format!("unable to remove {}", path.display()), e)),
            }
        }
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn rec() -> StateRecord {
        StateRecord {
            port: 8080,
            pid: 42,
            start_time: 7,
            cmdline: vec!["node".into(), "x.js".into()],
        }
    }

    #[test]
    fn round_trip_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("side.json");
        write(&p, &rec()).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read(&p).unwrap(), Some(rec()));
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
        assert!(!remove_if_ours(&p, 43, 7).unwrap());
        assert!(p.exists());
        assert!(remove_if_ours(&p, 42, 7).unwrap());
        assert!(!p.exists());
        assert_eq!(read(&p).unwrap(), None);
    }

    #[test]
    fn refuses_symlink_fifo_and_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        write(&real, &rec()).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(read(&link), Err(Error::StateRefused { .. })));
        assert!(matches!(
            write(&link, &rec()),
            Err(Error::StateRefused { .. })
        ));
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());

        let fifo = dir.path().join("fifo.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(matches!(read(&fifo), Err(Error::StateRefused { .. })));

        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\"port\": 1,").unwrap();
        let err = read(&bad).unwrap_err().to_string();
        assert!(err.contains("malformed JSON"), "{err}");
        fs::write(&bad, r#"{"port":0,"pid":1,"start_time":1,"cmdline":[]}"#).unwrap();
        assert!(matches!(read(&bad), Err(Error::StateRefused { .. })));
    }
}
