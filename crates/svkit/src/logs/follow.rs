//! Following an s6-log dir across rotations, by file identity.
//!
//! s6-log rotates `current` in this order (its `rotator`): rename `current`
//! to `previous`; create a new `current`, the only file it writes from then
//! on; with a processor, run it from `previous` into `processed` and unlink
//! `previous`; link the file (`previous` or `processed`) to `@<tai64n>.s`
//! when it is not empty; unlink that name; delete the oldest archives
//! beyond `keep`. So the files of a dir, oldest first, are always: archives
//! in name order, the file being archived (`previous`, of which
//! `processed` is a copy), `current`.
//!
//! The follower reads that sequence in order. It holds the file it reads
//! open: once `current` names another inode, s6-log will never write to it
//! again, so it is read to its end and the follower moves on to the files
//! after it. What it knows of the dir is a [`Position`]:
//!
//! - `held`: the file it reads, open;
//! - `floor`: every archive named at or below it is older than `held`, or
//!   was read;
//! - `pending`: files read whose archive s6-log has not made (or the
//!   follower has not seen) yet, open so that their inode cannot be reused
//!   by a new file: an archive with one of their inodes is skipped.
//!
//! Lines are lost only when s6-log deletes files before the follower gets
//! to them (more rotations than `keep` between two looks); that is seen
//! when the file the follower held was deleted, not only renamed, and is
//! reported in [`Step::gap`].

use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{archive_names, found, ino_at, open_file, read_final, read_rest, Current, Ino};
use crate::s6::wait::{nap, Watch};

/// Looks taken again when `current` rotates during one; past this the last
/// look is used as it is (an archive of the `current` it opened is then
/// recognized by inode).
const LOOK_ATTEMPTS: usize = 100;

/// The files of a log dir at one moment, the archives above a floor.
pub(super) struct Look {
    /// Names above the floor, oldest first (opened when read: a dir may
    /// hold thousands).
    pub archives: Vec<String>,
    pub previous: Option<Current>,
    pub processed: Option<Current>,
    pub current: Option<Current>,
}

impl Look {
    /// The file being archived: `previous`, or `processed` alone once s6-log
    /// unlinked `previous` (`processed` stays behind as a copy of
    /// `previous` when both exist).
    pub fn take_between(&mut self) -> Option<Current> {
        self.previous.take().or_else(|| self.processed.take())
    }
}

/// One consistent look: `current`, `previous` and `processed` are opened
/// first and checked again after the listing, so every file listed is
/// older than `current` and none of the three names changed meanwhile.
/// (s6-log links `previous` as an archive and unlinks it right after it
/// creates the new `current`: opened after the listing, `previous` could
/// be gone while its archive was not listed yet, and its lines would come
/// after newer ones.)
pub(super) fn look(dir: &Path, floor: Option<&str>) -> io::Result<Look> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let current = open_file(dir, "current")?;
        let previous = open_file(dir, "previous")?;
        let processed = open_file(dir, "processed")?;
        let archives = archive_names(dir, floor)?;
        let l = Look {
            archives,
            previous,
            processed,
            current,
        };
        let ino = |f: &Option<Current>| f.as_ref().map(|c| c.ino);
        let same = ino_at(dir, "current")? == ino(&l.current)
            && ino_at(dir, "previous")? == ino(&l.previous)
            && ino_at(dir, "processed")? == ino(&l.processed);
        if same || attempt >= LOOK_ATTEMPTS {
            return Ok(l);
        }
    }
}

/// Where a reader of a log dir stands; see the module's doc.
#[derive(Default)]
pub struct Position {
    pub(super) held: Option<Current>,
    pub(super) floor: Option<String>,
    pub(super) pending: Vec<Pending>,
}

/// A file read already, open so that its inode is not reused.
pub(super) struct Pending {
    pub file: Current,
    /// Its archive (or its processed copy) is known: only `previous` or
    /// `processed` may still name it.
    pub done: bool,
}

impl Pending {
    pub fn new(file: Current) -> Pending {
        Pending { file, done: false }
    }
}

impl Position {
    pub(super) fn knows(&self, ino: Ino) -> bool {
        self.pending.iter().any(|p| p.file.ino == ino)
    }
}

/// What one [`Follower::step`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Bytes copied.
    pub bytes: usize,
    /// s6-log deleted the file being read before the follower got past
    /// it: it fell `keep` archives behind, and lines after what was copied
    /// before this point may be missing.
    pub gap: bool,
}

/// Follows a log dir across rotations.
pub struct Follower {
    dir: PathBuf,
    pos: Position,
    /// A `processed` file was seen: the dir has a processor, whose archives
    /// are copies with inodes of their own.
    processor: bool,
    /// Processed copies of files read, to come and to skip.
    copies: usize,
    watch: Option<Watch>,
}

impl Follower {
    /// Starts where [`super::tail`] stopped (or, with a default position,
    /// at the first file of the dir).
    pub fn new(dir: &Path, pos: Position) -> Follower {
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
            pos,
            processor: false,
            copies: 0,
            watch,
        }
    }

    /// Copies whatever is new to `out`, across any number of rotations.
    pub fn step(&mut self, out: &mut dyn Write) -> io::Result<Step> {
        let mut step = Step::default();
        loop {
            if let Some(h) = self.pos.held.as_mut() {
                copy(read_rest(h)?, out, &mut step)?;
                let held = h.ino;
                if ino_at(&self.dir, "current")? == Some(held) {
                    // A rotation still under way: see what became of the
                    // files read before (a processor's copy has an inode
                    // of its own, which must be known before its archive
                    // shows up).
                    if self.pos.pending.iter().all(|p| p.done) {
                        break;
                    }
                    let Some(look) = self.look()? else {
                        break;
                    };
                    if look.current.as_ref().map(|c| c.ino) == Some(held) {
                        self.advance(look, false, out, &mut step)?;
                        break;
                    }
                }
                if let Some(h) = self.pos.held.as_mut() {
                    // Rotated: s6-log writes a file only while it is
                    // `current`, so this one is complete; read what came
                    // since the read above.
                    copy(read_final(h)?, out, &mut step)?;
                }
            }
            let Some(look) = self.look()? else {
                break;
            };
            if !self.advance(look, true, out, &mut step)? {
                break;
            }
        }
        out.flush()?;
        Ok(step)
    }

    /// None when the dir does not exist (yet, or any more).
    fn look(&self) -> io::Result<Option<Look>> {
        found(look(&self.dir, self.pos.floor.as_deref()))
    }

    /// Brings the position up to `look`. With `moved` (the held file is no
    /// longer `current`), copies the files newer than the held one, in
    /// order, and holds the new `current`: false when there is none. Else
    /// only learns what became of the files read already.
    fn advance(
        &mut self,
        mut look: Look,
        moved: bool,
        out: &mut dyn Write,
        step: &mut Step,
    ) -> io::Result<bool> {
        self.processor |= look.processed.is_some();
        let pos = &mut self.pos;
        let held = if moved { pos.held.take() } else { None };
        if let Some(h) = held {
            pos.pending.push(Pending::new(h));
        }
        let names = [&look.previous, &look.processed].map(|f| f.as_ref().map(|f| f.ino));
        let named = |ino: Ino| names.contains(&Some(ino));
        // Files read and since deleted without an archive seen: with a
        // processor, their copy (another inode) is still to come; without,
        // s6-log deleted their archive because `keep` newer ones were made
        // while the follower did not look, and newer files may have gone
        // the same way. With `keep` 0 no archive is left and none is read:
        // nothing to report.
        let mut gone = false;
        let mut kept = Vec::with_capacity(pos.pending.len());
        for p in pos.pending.drain(..) {
            let m = p.file.file.metadata()?;
            if m.nlink() > 0 {
                kept.push(p);
            } else if !p.done && m.len() > 0 {
                if self.processor {
                    self.copies += 1;
                } else {
                    gone = true;
                }
            }
        }
        pos.pending = kept;
        if gone && moved && !look.archives.is_empty() {
            step.gap = true;
        }
        // `processed` is known before the archives are: it may be linked
        // as one already.
        if let Some(p) = look.processed.take() {
            let previous = look.previous.as_ref().map(|p| p.ino);
            if let Some(prev) = pos
                .pending
                .iter_mut()
                .find(|f| Some(f.file.ino) == previous)
            {
                prev.done = true; // what it becomes is known: this copy
            }
            let copy_of_read = previous.is_some() || self.copies > 0;
            if !pos.knows(p.ino) && copy_of_read {
                // A copy of `previous`, or alone: of a file read whose
                // name went.
                if previous.is_none() {
                    self.copies -= 1;
                }
                pos.pending.push(Pending::new(p));
            } else if !pos.knows(p.ino) {
                look.processed = Some(p); // a file not read yet
            }
        }
        let cur = look.current.as_ref().map(|c| c.ino);
        for name in &look.archives {
            pos.floor = Some(name.clone());
            let Some(mut a) = open_file(&self.dir, name)? else {
                continue; // deleted by s6-log's cleanup since the listing
            };
            if let Some(p) = pos.pending.iter_mut().find(|p| p.file.ino == a.ino) {
                p.done = true;
                continue;
            }
            if Some(a.ino) == cur {
                continue; // `current` rotated during the look: held next
            }
            if self.copies > 0 {
                self.copies -= 1; // a processed copy of a file read
                continue;
            }
            if !moved {
                // Older than the held `current`, not read: the processed
                // copy of a file read whose name went before we looked.
                self.processor = true;
                continue;
            }
            copy(read_final(&mut a)?, out, step)?;
            pos.pending.push(Pending {
                file: a,
                done: true,
            });
        }
        if let Some(mut b) = look.take_between() {
            if !pos.knows(b.ino) {
                if moved {
                    copy(read_final(&mut b)?, out, step)?;
                }
                pos.pending.push(Pending::new(b));
            }
        }
        // Archived (below the floor now) and no longer `previous` or
        // `processed`: no name can show them again.
        pos.pending.retain(|p| !p.done || named(p.file.ino));
        if moved {
            pos.held = look.current;
        }
        Ok(pos.held.is_some())
    }

    /// Follows until `out` fails (e.g. a closed pipe) or `until` passes;
    /// `on_gap` is told each time lines may have been lost.
    pub fn run(
        &mut self,
        out: &mut dyn Write,
        until: Option<Instant>,
        on_gap: &mut dyn FnMut(),
    ) -> io::Result<()> {
        loop {
            if self.step(out)?.gap {
                on_gap();
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return Ok(());
            }
            if nap(&mut self.watch, until).is_err() {
                self.watch = None;
            }
        }
    }
}

fn copy(bytes: Vec<u8>, out: &mut dyn Write, step: &mut Step) -> io::Result<()> {
    step.bytes += bytes.len();
    out.write_all(&bytes)
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
