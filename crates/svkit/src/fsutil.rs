//! Small filesystem primitives shared by the modules that persist state.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Write};
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
    via_temp(path, bytes, mode, owner, true)
}

/// [`write_atomic`] that never replaces: when `path` exists (even as a
/// dangling symlink) it fails with `AlreadyExists` and writes nothing.
/// The temp file is hard-linked into place, so of two writers racing for
/// the same new path exactly one wins, whole.
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    via_temp(path, bytes, mode, None, false)
}

fn via_temp(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
    replace: bool,
) -> io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy());
    let name = name.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
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
        if replace {
            fs::rename(&tmp, path)
        } else {
            fs::hard_link(&tmp, path)?;
            fs::remove_file(&tmp)
        }
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // Make the rename durable too; losing that loses only durability.
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(Ok(d)) = dir.map(File::open) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` over the file at `path` in place, in one write: made
/// 0644 when missing, never through a symlink. For a small record
/// rewritten at every start, where a temp file would cost a new inode each
/// time; its readers cope with catching it empty or half written.
pub fn overwrite(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(bytes)
}

/// A small record file (`.svkit-program`, the foreground record, ...),
/// read without trusting what is at `path`: never through a symlink,
/// never waiting on a FIFO put in its place (anything but a regular file
/// is an error), at most `max` bytes. Its metadata tells who owns it.
pub fn read_record(path: &Path, max: u64) -> io::Result<(String, fs::Metadata)> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a file"));
    }
    let mut text = String::new();
    io::Read::take(f, max).read_to_string(&mut text)?;
    Ok((text, meta))
}

/// Runs `f` with the filesystem identity of `owner` (uid, gid) when we are
/// root: files it creates are the owner's, and a path the owner controls
/// (a symlink swapped into their state dir) can only lead where the owner
/// could write anyway. Linux's fsuid is per thread and restored after.
pub fn as_owner<T>(owner: Option<(u32, u32)>, f: impl FnOnce() -> T) -> T {
    use nix::unistd::{setfsgid, setfsuid, Gid, Uid};
    match owner {
        Some((uid, gid)) if nix::unistd::geteuid().is_root() => {
            let old_gid = setfsgid(Gid::from_raw(gid));
            let old_uid = setfsuid(Uid::from_raw(uid));
            let out = f();
            setfsuid(old_uid);
            setfsgid(old_gid);
            out
        }
        _ => f(),
    }
}

/// Takes an exclusive flock on `file`, waiting at most `timeout` for the
/// process that holds it to let go ([`crate::clock::poll_until`]):
/// `Ok(None)` when it did not in time. The one way svkit waits for a lock
/// (the scandir's, a slot's), so every such wait is bounded alike; the
/// lock goes with the returned value.
pub fn flock_within(
    file: File,
    timeout: std::time::Duration,
) -> io::Result<Option<nix::fcntl::Flock<File>>> {
    use nix::fcntl::{Flock, FlockArg};
    let mut file = Some(file);
    let mut got = Ok(None);
    crate::clock::poll_until(timeout, || {
        let Some(f) = file.take() else {
            return true;
        };
        match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
            Err((f, nix::errno::Errno::EWOULDBLOCK)) => file = Some(f),
            Ok(lock) => got = Ok(Some(lock)),
            Err((_, e)) => got = Err(e.into()),
        }
        file.is_none()
    });
    got
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

    #[test]
    fn write_new_never_replaces_and_leaves_no_temp_file() {
        let t = tempfile::tempdir().expect("tempdir");
        let path = t.path().join("file");
        write_new(&path, b"first", 0o644).expect("new path");
        let e = write_new(&path, b"second", 0o644).expect_err("exists");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&path).expect("read"), "first");
        // A dangling symlink is something there too: not followed, kept.
        let link = t.path().join("link");
        std::os::unix::fs::symlink(t.path().join("nowhere"), &link).expect("symlink");
        let e = write_new(&link, b"x", 0o644).expect_err("a link is there");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(!t.path().join("nowhere").exists());
        let left: Vec<_> = fs::read_dir(t.path()).expect("dir").flatten().collect();
        assert_eq!(left.len(), 2, "no temp file left");
    }

    #[test]
    fn as_owner_cannot_write_where_the_owner_cannot() {
        if !svkit_testkit::root_or_skip(
            "as_owner_cannot_write_where_the_owner_cannot",
            "writes as another user",
        ) {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        // A root-only dir, as /etc is: nobody cannot write there.
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
        let r = as_owner(Some((65534, 65534)), || {
            write_atomic(&t.path().join("f"), b"x", 0o644, None)
        });
        assert!(r.is_err());
        assert!(!t.path().join("f").exists());
        // Back to root afterwards.
        write_atomic(&t.path().join("g"), b"x", 0o644, None).expect("root again");
        // In a dir the owner owns, the file is created as the owner.
        let mine = t.path().join("mine");
        fs::create_dir(&mine).expect("mkdir");
        std::os::unix::fs::chown(&mine, Some(65534), Some(65534)).expect("chown");
        as_owner(Some((65534, 65534)), || {
            write_atomic(&mine.join("f"), b"x", 0o644, None)
        })
        .expect("write");
        let m = fs::metadata(mine.join("f")).expect("meta");
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&m), 65534);
    }
}
