//! Where svkit-init puts the scandir and its runtime files: a dir it can
//! write and exec from (s6-supervise execs `run` and `finish` there), made
//! fresh at every boot as s6-overlay's preinit makes `/run`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use nix::sys::statvfs::{statvfs, FsFlags};

use crate::container::INIT_RECORD;
use crate::msg::strerror;
use crate::slot::end::RESULTS_DIR;

/// Why `dir` cannot hold the scandir, or None when it can. It is made when
/// missing (its parent must exist).
fn unusable(dir: &Path) -> Option<String> {
    if let Err(e) = fs::create_dir_all(dir) {
        return Some(format!("{}: {}", dir.display(), strerror(&e)));
    }
    // Another tree's (an s6-overlay in the same mount namespace): never
    // wiped.
    if crate::s6::control::listening(&dir.join("service/.s6-svscan/control")) {
        return Some(format!(
            "{} holds a scandir another s6-svscan runs",
            dir.display()
        ));
    }
    match statvfs(dir) {
        Ok(v) if v.flags().contains(FsFlags::ST_NOEXEC) => {
            return Some(format!("{} is mounted noexec", dir.display()))
        }
        Ok(v) if v.flags().contains(FsFlags::ST_RDONLY) => {
            return Some(format!("{} is read-only", dir.display()))
        }
        Ok(_) => {}
        Err(e) => return Some(format!("{}: {}", dir.display(), e.desc())),
    }
    // Writable by us, not only by its mode's word: make and remove a file.
    let probe = dir.join(format!(".svkit-init-probe.{}", std::process::id()));
    match fs::File::create(&probe) {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!("{}: {}", dir.display(), strerror(&e))),
    }
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
