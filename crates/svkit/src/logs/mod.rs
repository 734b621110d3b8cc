//! Reading an s6-log directory: `current` plus the archives s6-log rotated
//! out of it (`@<tai64n>.s`, or `.u` when a rotation was interrupted), whose
//! names sort in time order.
//!
//! [`tail`] returns the last lines across archives and `current`, in order;
//! [`Follower`] keeps reading `current` and, when s6-log rotates it (a new
//! file with another inode takes the name), finishes the old file through
//! its open descriptor before switching, so no line is lost or repeated.

pub mod json;
pub mod watch;

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::s6::wait::{nap, Watch};

/// Whether a file name is an s6-log archive.
pub fn is_archive(name: &str) -> bool {
    name.starts_with('@') && (name.ends_with(".s") || name.ends_with(".u"))
}

/// The archives of a log dir, oldest first.
pub fn archives(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut names: Vec<String> = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        if let Ok(name) = e.file_name().into_string() {
            if is_archive(&name) && e.file_type()?.is_file() {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// `current`, open, with where reading stopped.
pub struct Current {
    pub file: File,
    pub ino: (u64, u64),
    pub pos: u64,
}

fn open_current(dir: &Path) -> io::Result<Option<Current>> {
    match File::open(dir.join("current")) {
        Ok(file) => {
            let m = file.metadata()?;
            Ok(Some(Current {
                file,
                ino: (m.dev(), m.ino()),
                pos: 0,
            }))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn read_rest(c: &mut Current) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    c.file.seek(SeekFrom::Start(c.pos))?;
    c.file.read_to_end(&mut buf)?;
    c.pos += buf.len() as u64;
    Ok(buf)
}

/// Lines of `bytes`, each with its newline (the last one may lack it).
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// The last `n` lines (bytes, newline included) across the archives and
/// `current`, oldest first, and `current` left open at its end for
/// [`Follower`]. A missing log dir is an error; a missing `current` is not.
pub fn tail(dir: &Path, n: usize) -> io::Result<(Vec<u8>, Option<Current>)> {
    // `current` first: a rotation after this only adds to what we read.
    let mut cur = open_current(dir)?;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut have = 0usize;
    if let Some(c) = cur.as_mut() {
        let body = read_rest(c)?;
        have += lines(&body).len();
        chunks.push(body);
    }
    if have < n {
        let cur_ino = cur.as_ref().map(|c| c.ino);
        for a in archives(dir)?.iter().rev() {
            let f = match File::open(a) {
                Ok(f) => f,
                // Deleted by s6-log's cleanup since the listing.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let m = f.metadata()?;
            if Some((m.dev(), m.ino())) == cur_ino {
                continue;
            }
            let mut body = Vec::new();
            Read::by_ref(&mut &f).read_to_end(&mut body)?;
            // An archive normally ends with a newline; make sure lines
            // from two files never join.
            if body.last().is_some_and(|&b| b != b'\n') {
                body.push(b'\n');
            }
            have += lines(&body).len();
            chunks.push(body);
            if have >= n {
                break;
            }
        }
    }
    let mut all: Vec<&[u8]> = Vec::new();
    for c in chunks.iter().rev() {
        all.extend(lines(c));
    }
    let start = all.len().saturating_sub(n);
    Ok((all[start..].concat(), cur))
}

/// Copies, in order, the archives newer than the one with inode `old` and
/// older than `next` (the `current` just opened, in case it was archived
/// too): under a burst s6-log may rotate several times between two looks.
/// When `old` is not an archive yet (still being renamed), no newer one
/// can exist: s6-log archives one file before it rotates the next.
fn copy_between(
    dir: &Path,
    old: (u64, u64),
    next: Option<(u64, u64)>,
    out: &mut dyn Write,
) -> io::Result<usize> {
    let mut after_old = false;
    let mut n = 0;
    for a in archives(dir)? {
        let Ok(mut f) = File::open(&a) else { continue };
        let m = f.metadata()?;
        let ino = (m.dev(), m.ino());
        if Some(ino) == next {
            break;
        }
        if after_old {
            let mut body = Vec::new();
            f.read_to_end(&mut body)?;
            n += body.len();
            out.write_all(&body)?;
        }
        after_old |= ino == old;
    }
    Ok(n)
}

/// Follows a log dir's `current` across rotations.
pub struct Follower {
    dir: PathBuf,
    cur: Option<Current>,
    watch: Option<Watch>,
}

impl Follower {
    /// Starts where [`tail`] stopped (or at the start of `current` when it
    /// did not exist yet).
    pub fn new(dir: &Path, cur: Option<Current>) -> Follower {
        let watch = Watch::new().ok().filter(|w| {
            use rustix::fs::inotify::WatchFlags;
            w.add(
                dir,
                WatchFlags::MODIFY
                    | WatchFlags::CREATE
                    | WatchFlags::MOVED_TO
                    | WatchFlags::MOVED_FROM,
            )
            .is_ok()
        });
        Follower {
            dir: dir.to_path_buf(),
            cur,
            watch,
        }
    }

    /// Copies whatever is new to `out`; handles a rotation. Returns the
    /// number of bytes copied.
    pub fn step(&mut self, out: &mut dyn Write) -> io::Result<usize> {
        let mut n = 0;
        if self.cur.is_none() {
            self.cur = open_current(&self.dir)?;
        }
        loop {
            let Some(c) = self.cur.as_mut() else {
                return Ok(n);
            };
            let new = read_rest(c)?;
            n += new.len();
            out.write_all(&new)?;
            let now = match fs::metadata(self.dir.join("current")) {
                Ok(m) => Some((m.dev(), m.ino())),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            match now {
                Some(ino) if ino != c.ino => {
                    // Rotated: drain the old file (done above, but s6-log
                    // may have written between), then catch up on files
                    // that were `current` only briefly, then switch.
                    let rest = read_rest(c)?;
                    n += rest.len();
                    out.write_all(&rest)?;
                    let old = c.ino;
                    let next = open_current(&self.dir)?;
                    n += copy_between(&self.dir, old, next.as_ref().map(|c| c.ino), out)?;
                    self.cur = next;
                }
                _ => break,
            }
        }
        out.flush()?;
        Ok(n)
    }

    /// Follows until `out` fails (e.g. a closed pipe) or `until` passes.
    pub fn run(&mut self, out: &mut dyn Write, until: Option<Instant>) -> io::Result<()> {
        loop {
            self.step(out)?;
            if until.is_some_and(|u| Instant::now() >= u) {
                return Ok(());
            }
            if nap(&mut self.watch, until).is_err() {
                self.watch = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ino(p: &Path) -> (u64, u64) {
        let m = fs::metadata(p).expect("meta");
        (m.dev(), m.ino())
    }

    #[test]
    fn rotations_between_two_looks_are_copied_in_order() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path();
        for (name, body) in [
            ("@4001.s", "old\n"),
            ("@4002.s", "b\n"),
            ("@4003.s", "c\n"),
            ("@4004.s", "next\n"),
        ] {
            fs::write(d.join(name), body).expect("write");
        }
        fs::write(d.join("current"), "").expect("write");
        let mut out = Vec::new();
        // The file we held became @4001; the `current` we just opened was
        // itself archived as @4004: copy what lies strictly between.
        let n = copy_between(
            d,
            ino(&d.join("@4001.s")),
            Some(ino(&d.join("@4004.s"))),
            &mut out,
        )
        .expect("copy");
        assert_eq!(out, b"b\nc\n");
        assert_eq!(n, 4);
        // The old file not archived yet: nothing newer can exist.
        let mut out = Vec::new();
        copy_between(d, (0, 0), Some(ino(&d.join("current"))), &mut out).expect("copy");
        assert!(out.is_empty());
    }
}
