//! Counting the services s6-svscan would supervise besides a config's
//! slots: what is in the scandir that svkit did not make, and what
//! s6-overlay's `services-up` will link in from `services.d` after the
//! cont-init hooks. Read as s6-svscan reads its scandir: `.`-led names
//! skipped, symlinks followed, a service and its `log/` one each.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::slot::owner::is_ours;

/// s6-overlay's scandir, which `services-up` links `services.d` into.
pub const OVERLAY_SCANDIR: &str = "/run/service";

/// s6-svscan skips a name longer than its `-L` (default 251): no service.
const NAME_MAX: usize = 251;

/// A dir s6-svscan would supervise: 1, plus 1 for its `log/`.
fn services_of(dir: &Path) -> u32 {
    1 + u32::from(crate::slot::logger::has_logger(dir))
}

fn visible(name: &str) -> bool {
    !name.starts_with('.') && name.len() <= NAME_MAX
}

/// Names in `dir` that s6-svscan would supervise (dirs, symlinks to dirs).
fn service_dirs(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        // A name that is not UTF-8 is still a service to s6-svscan.
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if visible(&name) && path.is_dir() {
            out.push((name, path));
        }
    }
    Ok(out)
}

/// In `scandir`: the services not made by svkit and not named like one
/// of `declared` (svkit's own are replaced by the config's, or deleted),
/// and every visible name (made by svkit or not).
pub fn foreign(scandir: &Path, declared: &BTreeSet<&str>) -> io::Result<(u32, BTreeSet<String>)> {
    let mut n = 0;
    let mut names = BTreeSet::new();
    for (name, path) in service_dirs(scandir)? {
        if !declared.contains(name.as_str()) && !is_ours(&path) {
            n += services_of(&path);
        }
        names.insert(name);
    }
    Ok((n, names))
}

/// The `services.d` that s6-overlay's `services-up` copies from, under
/// `root`: `/etc/cont-profile.d/PROFILE/services.d` with
/// `S6_RUNTIME_PROFILE`, else `/etc/services.d`.
pub fn services_d(root: &Path, profile: Option<&str>) -> PathBuf {
    let etc = root.join("etc");
    match profile.filter(|p| !p.is_empty()) {
        Some(p) => etc.join("cont-profile.d").join(p).join("services.d"),
        None => etc.join("services.d"),
    }
}

/// The services of `dir` (a `services.d`) not yet in the scandir
/// (`present`) nor named like a slot: what `services-up` will still add.
/// An unreadable or missing dir adds none, as `services-up` finds none.
pub fn legacy(dir: &Path, present: &BTreeSet<String>, declared: &BTreeSet<&str>) -> u32 {
    service_dirs(dir)
        .unwrap_or_default()
        .iter()
        .filter(|(name, _)| !present.contains(name) && !declared.contains(name.as_str()))
        .map(|(_, path)| services_of(path))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkdirs(base: &Path, rels: &[&str]) {
        for r in rels {
            fs::create_dir_all(base.join(r)).expect("mkdir");
        }
    }

    #[test]
    fn the_scandir_is_read_as_s6_svscan_reads_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let sd = t.path().join("service");
        let elsewhere = t.path().join("elsewhere");
        mkdirs(
            &sd,
            &[
                "plain",
                "logged/log",
                ".hidden/log",
                "mine/log",
                "declared-foreign",
                &"x".repeat(252),
            ],
        );
        mkdirs(&elsewhere, &["linked/log"]);
        fs::write(sd.join("mine/.svkit"), "").expect("marker");
        fs::write(sd.join("a-file"), "").expect("write");
        std::os::unix::fs::symlink(elsewhere.join("linked"), sd.join("linked")).expect("ln");
        std::os::unix::fs::symlink(t.path().join("dangling"), sd.join("dangling")).expect("ln");
        let declared = BTreeSet::from(["declared-foreign"]);
        let (n, names) = foreign(&sd, &declared).expect("read");
        // plain 1, logged 2, linked 2 (its log/ through the link).
        assert_eq!(n, 5, "{names:?}");
        assert!(names.contains("mine") && names.contains("declared-foreign"));
        assert!(!names.contains(".hidden") && !names.contains("a-file"));
        assert!(foreign(&t.path().join("none"), &declared).is_err());
    }

    #[test]
    fn services_d_counts_what_services_up_has_not_linked_yet() {
        let t = tempfile::tempdir().expect("tempdir");
        mkdirs(
            t.path(),
            &[
                "etc/services.d/nginx/log",
                "etc/services.d/cron",
                "etc/services.d/linked",
                "etc/services.d/.skipped",
                "etc/services.d/gw",
                "etc/cont-profile.d/dev/services.d/one",
            ],
        );
        fs::write(t.path().join("etc/services.d/README"), "").expect("write");
        let dir = services_d(t.path(), None);
        let present = BTreeSet::from(["linked".to_string()]);
        let declared = BTreeSet::from(["gw"]);
        assert_eq!(legacy(&dir, &present, &declared), 3, "nginx 2, cron 1");
        assert_eq!(services_d(t.path(), Some("")), dir);
        let dev = services_d(t.path(), Some("dev"));
        assert_eq!(legacy(&dev, &present, &declared), 1);
        assert_eq!(legacy(&t.path().join("missing"), &present, &declared), 0);
    }
}
