//! The record: what apply last verified on disk, so that a no-op apply can
//! conclude "unchanged" from one `lstat` per managed file and dir instead
//! of reading every file.
//!
//! Kept in `<scandir>/.svkit/record` (never inside a slot). For each slot,
//! the bytes and modes svkit rendered, and the stamp (dev, inode, size,
//! mode, owner, mtime, ctime) of every managed file and dir, taken by a
//! scan that then read those files (listed those dirs) and found them equal
//! to the render. [`super::seal`] only records a stamp whose ctime is older
//! than a moment taken before that scan, so any later change to the inode
//! (content, mode, owner, or for a dir an entry added, removed or renamed)
//! carries a newer ctime, which nobody can set back short of changing the
//! clock. A slot is confirmed unchanged only when its render equals the
//! recorded bytes and modes (for a file that counts by its presence alone,
//! [`live::presence_only`], its name) and every stamp is still the same.
//! Anything else (no record, a corrupt one, one stamp off) is a full
//! compare: a record can make a plan slower, never wrong.

use super::live::{self, MARKER, OWNER_UID};
use super::DesiredSlot;
use nix::sys::stat::{FileStat, SFlag};
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::ops::Range;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The record's name inside the scandir's `.svkit` dir.
pub const RECORD: &str = "record";
const MAGIC: &str = "svkit-record 2";

/// What an `lstat` says of an inode, down to its last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: i64,
    /// `st_mode`: type and permission bits.
    pub mode: u32,
    pub uid: u32,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl Stamp {
    // The field types of `stat` differ between architectures.
    #[allow(clippy::unnecessary_cast)]
    pub fn of(st: &FileStat) -> Stamp {
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as i64,
            mode: st.st_mode as u32,
            uid: st.st_uid as u32,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// Every field, as bytes: hashed in one go, not field by field.
    pub fn push_bytes(&self, out: &mut Vec<u8>) {
        for n in [self.dev, self.ino] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for n in [
            self.size,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for n in [self.mode, self.uid] {
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    pub fn is_dir(&self) -> bool {
        SFlag::from_bits_truncate(self.mode) & SFlag::S_IFMT == SFlag::S_IFDIR
    }

    fn encode(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {}",
            self.dev,
            self.ino,
            self.size,
            self.mode,
            self.uid,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1
        )
    }

    /// The nine numbers `encode` writes, from `fields`.
    fn decode<'a>(fields: &mut impl Iterator<Item = &'a str>) -> Option<Stamp> {
        let mut next = || fields.next();
        Some(Stamp {
            dev: next()?.parse().ok()?,
            ino: next()?.parse().ok()?,
            size: next()?.parse().ok()?,
            mode: next()?.parse().ok()?,
            uid: next()?.parse().ok()?,
            mtime: (next()?.parse().ok()?, next()?.parse().ok()?),
            ctime: (next()?.parse().ok()?, next()?.parse().ok()?),
        })
    }
}

/// One slot as last verified, borrowed from the record: every dir walked
/// and every managed file (in the order the render lists them, with the
/// bytes it held).
#[derive(Debug, Default)]
pub struct SlotRecord<'a> {
    pub dirs: Vec<(&'a str, Stamp)>,
    pub files: Vec<(&'a str, Stamp, &'a [u8])>,
}

impl SlotRecord<'_> {
    /// Whether this record is of `slot` as rendered: whole (every dir on
    /// the way to each file recorded), the same files, bytes and modes, and
    /// root's files when ownership matters (`uid_matters`: we are root).
    fn holds(&self, slot: &DesiredSlot, uid_matters: bool) -> bool {
        // Whole by construction; checked so no record can skip a dir.
        let has_dir = |rel: &str| self.dirs.iter().any(|(d, _)| *d == rel);
        let whole = has_dir("")
            && self.files.iter().all(|(rel, _, _)| {
                let mut up = Path::new(rel).ancestors().skip(1);
                up.all(|d| d.to_str().is_some_and(has_dir))
            });
        whole
            && self.files.len() == slot.files.len()
            && self.files.iter().any(|f| f.0 == MARKER)
            && self
                .files
                .iter()
                .zip(&slot.files)
                .all(|((rel, stamp, bytes), want)| {
                    want.rel.as_os_str().as_bytes() == rel.as_bytes()
                        && *bytes == want.bytes.as_slice()
                        && (live::presence_only(&want.rel)
                            || stamp.mode & 0o7777 == want.mode
                                && (!uid_matters || stamp.uid == OWNER_UID))
                })
    }

    /// [`Self::holds`] as the running user sees it.
    pub fn holds_render_of(&self, slot: &DesiredSlot) -> bool {
        self.holds(slot, nix::unistd::geteuid().is_root())
    }

    /// Whether the slot is provably as rendered: the render is what was
    /// verified (same files, bytes, modes, owner) and nothing was touched
    /// since (every stamp the same). `scandir_fd` is the open scandir.
    pub fn confirms(&self, scandir_fd: RawFd, slot: &DesiredSlot, uid_matters: bool) -> bool {
        if !self.holds(slot, uid_matters) {
            return false;
        }
        // One lstat per inode, named from the scandir: no descriptor per
        // slot. Every dir on the way is stamped too, so a dir swapped for a
        // symlink shows as a change of its parent's stamp.
        let mut path = String::with_capacity(slot.name.len() + 32);
        let mut unchanged = |rel: &str, stamp: &Stamp, kind: SFlag| {
            path.clear();
            path.push_str(&slot.name);
            if !rel.is_empty() {
                path.push('/');
                path.push_str(rel);
            }
            live::lstat_at(scandir_fd, Path::new(&path))
                .is_ok_and(|st| live::file_kind(&st) == kind && Stamp::of(&st) == *stamp)
        };
        self.dirs
            .iter()
            .all(|(rel, stamp)| unchanged(rel, stamp, SFlag::S_IFDIR))
            && self
                .files
                .iter()
                .all(|(rel, stamp, _)| unchanged(rel, stamp, SFlag::S_IFREG))
    }

    /// The slot's section of the record: `slot NAME`, its `dir STAMP REL`
    /// lines, its `file STAMP LEN REL` lines each followed by exactly LEN
    /// bytes and a newline. LEN is that of the bytes rendered, which a file
    /// that counts by its presence alone need not have on disk. Names and
    /// paths are last on their line.
    pub fn encode(&self, name: &str) -> Vec<u8> {
        let mut out = format!("slot {name}\n").into_bytes();
        for (rel, stamp) in &self.dirs {
            out.extend_from_slice(format!("dir {} {rel}\n", stamp.encode()).as_bytes());
        }
        for (rel, stamp, bytes) in &self.files {
            let len = bytes.len();
            out.extend_from_slice(format!("file {} {len} {rel}\n", stamp.encode()).as_bytes());
            out.extend_from_slice(bytes);
            out.push(b'\n');
        }
        out
    }

    /// Parses one section (as [`Record::section`] returns it).
    pub fn decode(section: &[u8]) -> Option<SlotRecord<'_>> {
        let mut cur = Cursor {
            bytes: section,
            pos: 0,
        };
        cur.line()?.strip_prefix("slot ")?;
        let mut out = SlotRecord::default();
        while cur.pos < section.len() {
            match entry_line(cur.line()?)? {
                (stamp, None, rel) => out.dirs.push((rel, stamp)),
                (stamp, Some(len), rel) => {
                    let bytes = cur.take(len)?;
                    (cur.take(1)? == b"\n").then_some(())?;
                    out.files.push((rel, stamp, bytes));
                }
            }
        }
        Some(out)
    }
}

/// `dir STAMP REL` or `file STAMP LEN REL` → the stamp, LEN for a file,
/// and REL.
fn entry_line(line: &str) -> Option<(Stamp, Option<usize>, &str)> {
    let (kind, rest) = line.split_once(' ')?;
    let file = match kind {
        "dir" => false,
        "file" => true,
        _ => return None,
    };
    let mut fields = rest.splitn(if file { 11 } else { 10 }, ' ');
    let stamp = Stamp::decode(&mut fields)?;
    let len = match file {
        true => Some(fields.next()?.parse().ok()?),
        false => None,
    };
    Some((stamp, len, fields.next()?))
}

/// The LEN of a `file` line: all that indexing needs.
fn file_len(line: &str) -> Option<usize> {
    line.strip_prefix("file ")?.split(' ').nth(9)?.parse().ok()
}

/// The bytes of a file of ours in the scandir's `.svkit` dir, or `None`
/// unless it is a regular file (not a symlink) owned by us and writable by
/// no one else: anything else cannot be trusted to say what we wrote.
pub(super) fn read_trusted(path: &Path) -> Option<Vec<u8>> {
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    let euid = nix::unistd::geteuid().as_raw();
    if !meta.file_type().is_file() || meta.uid() != euid || meta.mode() & 0o022 != 0 {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?.saturating_add(1));
    f.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The record as read: its bytes and where each slot's section lies. A
/// section is parsed only when its slot is looked at.
#[derive(Debug, Default)]
pub struct Record {
    bytes: Vec<u8>,
    index: BTreeMap<String, Range<usize>>,
}

impl Record {
    /// The record of `scandir`, or an empty one when there is none or it
    /// cannot be trusted (not a regular file of ours, unreadable, corrupt).
    pub fn load(scandir: &Path) -> Record {
        Record::read(&scandir.join(".svkit").join(RECORD)).unwrap_or_default()
    }

    fn read(path: &Path) -> Option<Record> {
        Record::index(read_trusted(path)?)
    }

    /// Finds the sections; `None` unless the whole file is well formed
    /// down to the byte counts (each section is parsed in full when used).
    pub fn index(bytes: Vec<u8>) -> Option<Record> {
        let mut index = BTreeMap::new();
        let mut cur = Cursor {
            bytes: &bytes,
            pos: 0,
        };
        if cur.line()? != MAGIC {
            return None;
        }
        let mut open: Option<(String, usize)> = None;
        loop {
            let start = cur.pos;
            let line = cur.line()?;
            if line == "end" || line.starts_with("slot ") {
                if let Some((name, from)) = open.take() {
                    index.insert(name, from..start);
                }
                match line.strip_prefix("slot ") {
                    Some(name) => open = Some((name.to_string(), start)),
                    None => break,
                }
            } else if line.starts_with("dir ") {
                open.as_ref()?;
            } else {
                open.as_ref()?;
                cur.take(file_len(line)?.checked_add(1)?)?;
            }
        }
        (cur.pos == bytes.len()).then_some(Record { bytes, index })
    }

    /// The section of slot `name`, as [`SlotRecord::decode`] takes it.
    pub fn section(&self, name: &str) -> Option<&[u8]> {
        self.bytes.get(self.index.get(name)?.clone())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    /// A whole record from its sections, by slot name.
    pub fn encode<S: AsRef<[u8]>>(sections: &BTreeMap<&str, S>) -> Vec<u8> {
        let mut out = format!("{MAGIC}\n").into_bytes();
        for section in sections.values() {
            out.extend_from_slice(section.as_ref());
        }
        out.extend_from_slice(b"end\n");
        out
    }
}
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// The next line, without its newline; `None` at the end or if not UTF-8.
    fn line(&mut self) -> Option<&'a str> {
        let rest = self.bytes.get(self.pos..)?;
        let len = rest.iter().position(|&b| b == b'\n')?;
        let line = self.take(len)?;
        self.take(1)?;
        std::str::from_utf8(line).ok()
    }
}
