//! Entries of a scandir that stop s6-svscan's scan.
//!
//! s6-svscan stats every visible name in its scandir, in directory order.
//! A name it cannot stat (a dangling symlink: a `services.d` link whose
//! target went away, a removed volume) is not skipped: the scan stops
//! there, says `unable to stat NAME` once, and is tried again a few
//! seconds later, and again. Until the name is gone, no service after it
//! starts, whichever was added. (Seen on s6-overlay 3.2.3.0's s6.)
//! So svkit refuses to add slots it knows would not start, and names the
//! entry to remove.

use std::fs;
use std::io;
use std::path::Path;

/// One entry s6-svscan cannot stat, and why.
#[derive(Debug)]
pub struct Blocker {
    pub name: String,
    pub why: io::Error,
}

/// The visible names in `scandir` that s6-svscan cannot stat (following
/// symlinks, as it does). A service's `log` that is missing is fine (s6
/// only pairs what is there); one that cannot be stated otherwise blocks.
pub fn blockers(scandir: &Path) -> io::Result<Vec<Blocker>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(scandir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        match fs::metadata(entry.path()) {
            Err(why) => out.push(Blocker { name, why }),
            Ok(m) if m.is_dir() => match fs::metadata(entry.path().join("log")) {
                Err(why) if why.kind() != io::ErrorKind::NotFound => out.push(Blocker {
                    name: format!("{name}/log"),
                    why,
                }),
                _ => {}
            },
            Ok(_) => {}
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn only_what_cannot_be_stated_blocks() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path();
        fs::create_dir_all(d.join("ok/log")).expect("mkdir");
        fs::create_dir(d.join("nolog")).expect("mkdir");
        fs::write(d.join("plain-file"), "").expect("write");
        symlink(d.join("ok"), d.join("linked")).expect("ln");
        symlink("/nonexistent/svkit-test", d.join(".hidden-dangling")).expect("ln");
        assert!(blockers(d).expect("read").is_empty());
        // A log that is not there is no logger, to s6 as here.
        symlink("/nonexistent/svkit-test", d.join("nolog/log")).expect("ln");
        assert!(blockers(d).expect("read").is_empty());
        symlink("/nonexistent/svkit-test", d.join("dangling")).expect("ln");
        fs::remove_file(d.join("nolog/log")).expect("rm");
        symlink("log", d.join("nolog/log")).expect("ln: a loop");
        let b = blockers(d).expect("read");
        let names: Vec<&str> = b.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["dangling", "nolog/log"]);
        assert_eq!(b[0].why.kind(), io::ErrorKind::NotFound);
        assert!(blockers(&d.join("nope")).is_err());
    }
}
