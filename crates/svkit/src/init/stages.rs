//! What s6-overlay's preinit and stage 2 do besides running the CMD, as
//! svkit-init does it: the run dir that holds the scandir and the runtime
//! files (a dir it can write and exec from, as s6-supervise execs `run`
//! and `finish` there, made fresh at every boot as s6-overlay's preinit
//! makes `/run`); the hook dirs (`/etc/cont-init.d`,
//! `/etc/cont-finish.d`), the legacy services (`/etc/services.d`), and the
//! s6-rc services it cannot run without s6-overlay.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::sys::statvfs::{statvfs, FsFlags};

use crate::container::INIT_RECORD;
use crate::msg::strerror;
use crate::slot::end::RESULTS_DIR;

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
    let mut found: Vec<String> = (RC_USER_BUNDLES.iter())
        .flat_map(|bundle| hooks(&sources.join(bundle).join("contents.d")))
        .filter_map(|e| Some(e.file_name()?.to_str()?.to_string()))
        .collect();
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

/// Why `dir` cannot hold the scandir, or None when it can. It is made when
/// missing (its parent must exist).
fn unusable(dir: &Path) -> Option<String> {
    let d = dir.display();
    if let Err(e) = fs::create_dir_all(dir) {
        return Some(format!("{d}: {}", strerror(&e)));
    }
    // Another tree's (an s6-overlay in the same mount namespace): never
    // wiped.
    if crate::s6::control::listening(&dir.join("service/.s6-svscan/control")) {
        return Some(format!("{d} holds a scandir another s6-svscan runs"));
    }
    match statvfs(dir) {
        Ok(v) if v.flags().contains(FsFlags::ST_NOEXEC) => {
            return Some(format!("{d} is mounted noexec"))
        }
        Ok(v) if v.flags().contains(FsFlags::ST_RDONLY) => {
            return Some(format!("{d} is read-only"))
        }
        Ok(_) => {}
        Err(e) => return Some(format!("{d}: {}", e.desc())),
    }
    // Writable by us, not only by its mode's word: make and remove a file.
    let probe = dir.join(format!(".svkit-init-probe.{}", std::process::id()));
    let made = fs::File::create(&probe);
    let _ = fs::remove_file(&probe);
    made.err().map(|e| format!("{d}: {}", strerror(&e)))
}

/// The first of `candidates` that can hold the scandir; else every
/// reason, for the one line that names the fix.
pub fn choose(candidates: &[&Path]) -> Result<PathBuf, Vec<String>> {
    let mut why = Vec::new();
    for dir in candidates {
        match unusable(dir) {
            None => return Ok(dir.to_path_buf()),
            Some(w) => why.push(w),
        }
    }
    Err(why)
}

/// The fatal line when no candidate will do.
pub fn no_place(why: &[String]) -> String {
    format!(
        "no directory to run the slots from ({}): s6 must write and exec its service dirs there. \
         Give it one: a tmpfs at /tmp with exec (docker run --tmpfs /tmp:exec), or a writable \
         tmpfs volume at /run (docker volume create --opt type=tmpfs --opt device=tmpfs --opt o=mode=1777; \
         Kubernetes: an emptyDir with medium: Memory at /run); docs/image.md, \"Where it runs\"",
        why.join("; ")
    )
}

/// What a boot finds in the run dir from an earlier run of this container
/// (`docker restart` keeps it unless it is a tmpfs) goes: the scandir, the
/// records, the exit code. Then the dirs are made anew, empty.
pub fn fresh(run: &Path, scandir: &Path) -> io::Result<()> {
    let results = run.join(RESULTS_DIR);
    let svkit = run.join("svkit");
    for dir in [scandir, &svkit, &results] {
        let said =
            |e: io::Error| io::Error::new(e.kind(), format!("{}: {}", dir.display(), strerror(&e)));
        match fs::remove_dir_all(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(said(e)),
            _ => fs::create_dir_all(dir).map_err(said)?,
        }
    }
    // An empty code: a requested stop ends the container with 0.
    fs::write(results.join("exitcode"), "")?;
    Ok(())
}

/// Writes svkit-init's record (`svkit status`, `svctl` and the stop hooks
/// find the tree by it).
pub fn record(run: &Path, pid: u32) -> io::Result<()> {
    crate::fsutil::write_atomic(
        &run.join(INIT_RECORD),
        format!("{pid}\n").as_bytes(),
        0o644,
        None,
    )
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

    #[test]
    fn the_first_usable_dir_wins_and_a_missing_parent_is_said() {
        let t = tempfile::tempdir().expect("tempdir");
        let bad = t.path().join("no/such/parent/at/all");
        let file = t.path().join("file");
        fs::write(&file, "").expect("write");
        let under_file = file.join("run");
        let good = t.path().join("run");
        let got = choose(&[&under_file, &good, &bad]).expect("one is usable");
        assert_eq!(got, good);
        let e = choose(&[&under_file]).expect_err("under a file");
        assert!(e[0].contains("Not a directory"), "{e:?}");
        let line = no_place(&e);
        assert!(line.contains("--tmpfs /tmp:exec"), "{line}");
    }

    #[test]
    fn a_boot_starts_from_empty_dirs() {
        let t = tempfile::tempdir().expect("tempdir");
        let scandir = t.path().join("service");
        fs::create_dir_all(scandir.join("old-slot")).expect("mkdir");
        fs::create_dir_all(t.path().join(RESULTS_DIR)).expect("mkdir");
        fs::write(t.path().join(RESULTS_DIR).join("exitcode.svkit"), "78\n").expect("write");
        fresh(t.path(), &scandir).expect("fresh");
        assert_eq!(fs::read_dir(&scandir).expect("scandir").count(), 0);
        assert!(!t.path().join(RESULTS_DIR).join("exitcode.svkit").exists());
        assert_eq!(
            fs::read(t.path().join(RESULTS_DIR).join("exitcode")).expect("code"),
            b""
        );
        record(t.path(), 42).expect("record");
        assert_eq!(
            fs::read_to_string(t.path().join(INIT_RECORD)).expect("record"),
            "42\n"
        );
    }
}
