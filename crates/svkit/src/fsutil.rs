//! Small filesystem primitives shared by the modules that persist state.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Writes `bytes` to `path` atomically: a `.`-led temp file in the same
/// dir (created exclusively, never through a symlink), fsynced, chmod'ed,
/// chowned to `owner` (uid, gid) when given, then renamed over `path`. A
/// symlink planted at `path` is replaced, not followed. On error the temp
/// file is removed and `path` is untouched.
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?
        .to_string_lossy()
        .into_owned();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        // Explicit: the umask must not decide the mode.
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // Make the rename durable too; losing that loses only durability.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_a_planted_symlink_without_following_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let target = t.path().join("target");
        fs::write(&target, "keep").expect("write");
        let path = t.path().join("file");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        write_atomic(&path, b"new", 0o640, None).expect("write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "keep");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
        let meta = fs::symlink_metadata(&path).expect("lstat");
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
        let left: Vec<_> = fs::read_dir(t.path()).expect("dir").flatten().collect();
        assert_eq!(left.len(), 2, "no temp file left");
        assert!(write_atomic(&t.path().join("missing/dir/file"), b"x", 0o644, None).is_err());
    }
}
