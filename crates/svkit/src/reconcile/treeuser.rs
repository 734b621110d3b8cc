//! Who may change a supervision tree: the user it runs as. s6-overlay's
//! preinit hands the scandir to the container's user (root, or the
//! `--user` of a non-root container), so the scandir's owner is the tree's
//! user. Root changing a non-root tree would hand the slots' files to the
//! config's `user`, and the tree's own s6-supervise could then no longer
//! write its status files: refused, like a non-root user changing a root
//! tree.

use super::error::ReconcileError;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// Refuses `euid` changing the tree of `scandir` unless it is the tree's
/// user. A scandir that does not exist yet belongs to no tree: allowed
/// (whoever creates it will own it).
pub fn check_tree_user(scandir: &Path, euid: u32) -> Result<(), ReconcileError> {
    let Ok(m) = std::fs::metadata(scandir) else {
        return Ok(());
    };
    let tree_uid = m.uid();
    if tree_uid == euid {
        return Ok(());
    }
    Err(ReconcileError::NotTreeUser {
        scandir: scandir.to_path_buf(),
        tree_uid,
        euid,
    })
}

/// The `why` of [`ReconcileError::NotTreeUser`].
pub(super) fn refusal(scandir: &Path, tree_uid: u32, euid: u32) -> String {
    if tree_uid == 0 {
        // A root tree (every image that boots /init as root).
        return "permission denied: this needs root (try as root, e.g. docker exec -u 0)".into();
    }
    let how = format!("run this as uid {tree_uid} (docker exec -u {tree_uid}, or without -u)");
    if euid == 0 {
        format!(
            "permission denied: the supervision tree of {} runs as uid {tree_uid}, not root: {how}; \
             as root this would hand the slots' files to the config's user and the tree could no longer write them",
            scandir.display()
        )
    } else {
        format!(
            "permission denied: the supervision tree of {} runs as uid {tree_uid}, not as uid {euid}: {how}",
            scandir.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scandirs_owner_may_change_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let me = nix::unistd::geteuid().as_raw();
        check_tree_user(t.path(), me).expect("the owner may");
        check_tree_user(&t.path().join("missing"), me + 1).expect("no tree yet");
        let e = check_tree_user(t.path(), me + 1).expect_err("another uid may not");
        let ReconcileError::NotTreeUser { tree_uid, euid, .. } = e else {
            panic!("{e:?}");
        };
        assert_eq!((tree_uid, euid), (me, me + 1));
    }

    #[test]
    fn refusals_say_who_may() {
        let d = Path::new("/run/service");
        assert!(refusal(d, 0, 10001).contains("this needs root"));
        let r = refusal(d, 123456, 0);
        assert!(r.starts_with("permission denied: "), "{r}");
        assert!(r.contains("runs as uid 123456, not root"), "{r}");
        assert!(r.contains("docker exec -u 123456"), "{r}");
        let r = refusal(d, 123456, 10001);
        assert!(r.contains("not as uid 10001"), "{r}");
    }
}
