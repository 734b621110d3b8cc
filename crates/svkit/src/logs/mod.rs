//! Reading an s6-log directory: `current` plus the archives s6-log rotated
//! out of it (`@<tai64n>.s`, or `.u` when a rotation was interrupted), whose
//! names sort in time order, and the file being archived in between
//! (`previous`, or `processed` when the dir has a processor).
//!
//! [`tail`] returns the last lines across those files, in order;
//! [`Follower`] (in `follow`) keeps reading from there across rotations;
//! [`dir_of`] says which dir a slot's logger writes to.

mod follow;
pub mod stdout;
pub mod watch;

use follow::Pending;
pub use follow::{Follower, Position, Step};

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Whether a file name is an s6-log archive.
fn is_archive(name: &str) -> bool {
    name.starts_with('@') && (name.ends_with(".s") || name.ends_with(".u"))
}

/// Archive names above `floor`, oldest first.
fn archive_names(dir: &Path, floor: Option<&str>) -> io::Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        if let Ok(name) = e.file_name().into_string() {
            if is_archive(&name)
                && floor.is_none_or(|f| name.as_str() > f)
                && e.file_type()?.is_file()
            {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Device and inode: which file a name or a descriptor is.
pub(crate) type Ino = (u64, u64);

/// A log file, open, with where reading stopped.
pub struct Current {
    pub file: File,
    pub ino: Ino,
    pub pos: u64,
}

/// Opens `dir/name`; `None` when it does not exist (s6-log renamed or
/// deleted it since the listing).
fn open_file(dir: &Path, name: &str) -> io::Result<Option<Current>> {
    let Some(file) = found(File::open(dir.join(name)))? else {
        return Ok(None);
    };
    let m = file.metadata()?;
    let ino = (m.dev(), m.ino());
    Ok(Some(Current { file, ino, pos: 0 }))
}

/// The identity of what `dir/name` names now.
fn ino_at(dir: &Path, name: &str) -> io::Result<Option<Ino>> {
    Ok(found(fs::metadata(dir.join(name)))?.map(|m| (m.dev(), m.ino())))
}

/// `r`, None when what it looked for does not exist (s6-log renamed or
/// deleted it, or the dir is not there).
fn found<T>(r: io::Result<T>) -> io::Result<Option<T>> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        r => r.map(Some),
    }
}

fn read_rest(c: &mut Current) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    c.file.seek(SeekFrom::Start(c.pos))?;
    c.file.read_to_end(&mut buf)?;
    c.pos += buf.len() as u64;
    Ok(buf)
}

/// The rest of a file that s6-log no longer writes, ending with a newline
/// so that lines of two files never join.
fn read_final(c: &mut Current) -> io::Result<Vec<u8>> {
    let mut body = read_rest(c)?;
    if body.last().is_some_and(|&b| b != b'\n') {
        body.push(b'\n');
    }
    Ok(body)
}

/// Lines of `bytes`, each with its newline (the last one may lack it).
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// The last `n` lines (bytes, newline included) across the archives,
/// `previous` and `current`, oldest first, and where reading stopped, for
/// [`Follower`]. A missing log dir is an error; a missing `current` is not.
/// Where the logger of slot `name` writes, for whoever reads its log
/// (`svctl logs`, `top`'s pane, the HTTP endpoint): the dir its live
/// `log/run` was rendered with (the config may have changed since, or not
/// load at all: exactly when one reads logs to debug), else the config's.
pub fn dir_of(slots: &crate::slot::snapshot::Slots<'_>, name: &str) -> Option<PathBuf> {
    std::fs::read_to_string(slots.dir(name).join("log/run"))
        .ok()
        .and_then(|run| crate::render::rendered_log_dir(&run))
        .or_else(|| slots.log_dir(name).map(str::to_string))
        .map(PathBuf::from)
}

pub fn tail(dir: &Path, n: usize) -> io::Result<(Vec<u8>, Position)> {
    let mut look = follow::look(dir, None)?;
    let mut pos = Position::default();
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut have = 0usize;
    let mut take = |body: Vec<u8>, have: &mut usize| {
        *have += lines(&body).len();
        chunks.push(body);
    };
    // Newest first: `current`, then the file being archived, then archives.
    if let Some(mut c) = look.current.take() {
        take(read_rest(&mut c)?, &mut have);
        pos.held = Some(c);
    }
    if let Some(mut p) = look.take_between() {
        if have < n {
            take(read_final(&mut p)?, &mut have);
        }
        // Read or older than what the caller wants: its archive is skipped.
        pos.pending.push(Pending::new(p));
    }
    if let Some(p) = look.processed {
        pos.pending.push(Pending::new(p));
    }
    pos.floor = look.archives.last().cloned();
    for name in look.archives.iter().rev() {
        if have >= n {
            break;
        }
        let Some(mut a) = open_file(dir, name)? else {
            continue; // deleted by s6-log's cleanup since the listing
        };
        if pos.held.as_ref().is_some_and(|h| h.ino == a.ino) || pos.knows(a.ino) {
            continue;
        }
        take(read_final(&mut a)?, &mut have);
    }
    let mut all: Vec<&[u8]> = Vec::new();
    for c in chunks.iter().rev() {
        all.extend(lines(c));
    }
    let start = all.len().saturating_sub(n);
    Ok((all[start..].concat(), pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_names_are_listed_oldest_first() {
        assert!(is_archive("@400000006b0d10531c38b356.s"));
        assert!(is_archive("@400000006b0d10531c38b356.u"));
        assert!(!is_archive("current"));
        assert!(!is_archive("@x.tmp"));
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path();
        for name in [
            "@400000006b0d10541c38b356.u",
            "@400000006b0d10531c38b356.s",
            "current",
            "lock",
            "state",
            "newstate",
        ] {
            fs::write(d.join(name), "").expect("write");
        }
        assert_eq!(
            archive_names(d, None).expect("list"),
            ["@400000006b0d10531c38b356.s", "@400000006b0d10541c38b356.u"]
        );
    }

    #[test]
    fn a_log_is_where_the_live_logger_writes_else_where_the_config_says() {
        let t = tempfile::tempdir().expect("tempdir");
        let json = r#"{ "state_dir": "/nonexistent/.svkit", "slots": [
          { "name": "a", "command": ["true"], "log": { "dir": "/data/logs/new" } } ] }"#;
        std::fs::write(t.path().join("10.json"), json).expect("write");
        let model = crate::config::load(t.path(), &crate::state::LiveInstances)
            .expect("valid config")
            .model;
        let slots = crate::slot::snapshot::Slots {
            scandir: t.path(),
            model: Some(&model),
        };
        assert_eq!(dir_of(&slots, "a"), Some("/data/logs/new".into()));
        // Rendered before the config changed: its logger writes there.
        std::fs::create_dir_all(t.path().join("a/log")).expect("mkdir");
        let run = "#!/bin/sh\nslot=a\ndir='/data/logs/old dir'\nexec s6-log\n";
        std::fs::write(t.path().join("a/log/run"), run).expect("write");
        assert_eq!(dir_of(&slots, "a"), Some("/data/logs/old dir".into()));
        let bare = crate::slot::snapshot::Slots {
            scandir: t.path(),
            model: None,
        };
        assert_eq!(dir_of(&bare, "b"), None);
    }
}
