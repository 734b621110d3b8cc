//! What s6-overlay's stage 2 does besides running the CMD, as svkit-init
//! does it: the hook dirs (`/etc/cont-init.d`, `/etc/cont-finish.d`), the
//! legacy services (`/etc/services.d`), and the s6-rc services it cannot
//! run without s6-overlay.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// s6-overlay's hook and service dirs.
pub const CONT_INIT: &str = "/etc/cont-init.d";
pub const CONT_FINISH: &str = "/etc/cont-finish.d";
pub const SERVICES: &str = "/etc/services.d";
/// The s6-rc source dir of an s6-overlay image, and the bundles that name
/// the user's services in it.
pub const RC_SOURCES: &str = "/etc/s6-overlay/s6-rc.d";
const RC_USER_BUNDLES: [&str; 2] = ["user", "user2"];

/// The hooks of `dir` in name order, as s6-overlay runs them (every
/// entry but dot names; a missing dir has none).
pub fn hooks(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<_> = rd
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| !n.as_encoded_bytes().starts_with(b"."))
        .collect();
    names.sort();
    names.into_iter().map(|n| dir.join(n)).collect()
}

/// The services the s6-rc `user` bundles name under `sources`: s6-overlay's
/// stage 2 compiles and starts them, which svkit-init cannot.
pub fn rc_user_services(sources: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for bundle in RC_USER_BUNDLES {
        for entry in hooks(&sources.join(bundle).join("contents.d")) {
            if let Some(n) = entry.file_name().and_then(|n| n.to_str()) {
                found.push(n.to_string());
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Copies each service dir of `from` to `copies/NAME` and links it into
/// `scandir`, as s6-overlay does with `/etc/services.d`; the names copied.
pub fn copy_services(from: &Path, copies: &Path, scandir: &Path) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for dir in hooks(from) {
        if !dir.is_dir() {
            continue;
        }
        let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            continue;
        };
        let copy = copies.join(&name);
        let _ = fs::remove_dir_all(&copy);
        copy_tree(&dir, &copy)?;
        let link = scandir.join(&name);
        let _ = fs::remove_file(&link);
        symlink(&copy, &link)?;
        names.push(name);
    }
    Ok(names)
}

/// `from` to `to`, modes kept, symlinks copied as links (s6-hiercopy).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let mode = fs::symlink_metadata(from)?.permissions().mode();
    fs::DirBuilder::new().mode(mode & 0o7777).create(to)?;
    fs::set_permissions(to, fs::Permissions::from_mode(mode & 0o7777))?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            symlink(fs::read_link(&src)?, &dst)?;
        } else if kind.is_file() {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_run_in_name_order_without_dot_names() {
        let t = tempfile::tempdir().expect("tempdir");
        for n in ["50-b", "10-a", ".hidden", "99-z"] {
            fs::write(t.path().join(n), "").expect("write");
        }
        let got: Vec<_> = hooks(t.path())
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["10-a", "50-b", "99-z"]);
        assert!(hooks(&t.path().join("missing")).is_empty());
    }

    #[test]
    fn user_rc_services_are_found_in_both_bundles() {
        let t = tempfile::tempdir().expect("tempdir");
        assert!(rc_user_services(t.path()).is_empty());
        for (b, n) in [("user", "nginx"), ("user2", "php"), ("user", "php")] {
            let d = t.path().join(b).join("contents.d");
            fs::create_dir_all(&d).expect("mkdir");
            fs::write(d.join(n), "").expect("write");
        }
        assert_eq!(rc_user_services(t.path()), ["nginx", "php"]);
    }

    #[test]
    fn services_are_copied_with_their_modes_and_linked() {
        let t = tempfile::tempdir().expect("tempdir");
        let from = t.path().join("services.d");
        fs::create_dir_all(from.join("web/log")).expect("mkdir");
        fs::write(from.join("web/run"), "#!/bin/sh\n").expect("write");
        fs::set_permissions(from.join("web/run"), fs::Permissions::from_mode(0o755))
            .expect("chmod");
        fs::write(from.join("web/log/run"), "").expect("write");
        fs::write(from.join("not-a-service"), "").expect("write");
        let (copies, scandir) = (t.path().join("legacy"), t.path().join("service"));
        fs::create_dir_all(&copies).expect("mkdir");
        fs::create_dir_all(&scandir).expect("mkdir");
        assert_eq!(
            copy_services(&from, &copies, &scandir).expect("copy"),
            ["web"]
        );
        let run = fs::metadata(scandir.join("web/run")).expect("through the link");
        assert_eq!(run.permissions().mode() & 0o777, 0o755);
        assert!(scandir.join("web/log/run").is_file());
        // Again (a restart of the stage): the same result, no error.
        assert_eq!(
            copy_services(&from, &copies, &scandir).expect("again"),
            ["web"]
        );
    }
}
