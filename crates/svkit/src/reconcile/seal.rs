//! Writing the record at the end of an apply (see [`super::record`] for
//! what it proves and why a record can never make a plan wrong).
//!
//! Every stamp recorded must predate a moment after which svkit looked at
//! the inode, so that any change since, even one in the same clock tick as
//! svkit's own write, shows in the ctime. Slots the record confirmed keep
//! their entries. A new slot is stamped as built, in svkit's own temp dir,
//! and the clock ticks before it is renamed into place; its slot dir,
//! which the rename changes, is then stamped and listed after a second
//! tick. Any other declared slot (updated, or found unchanged by a full
//! compare) is scanned again after that tick: a scan reads files after
//! stamping them, so a stamp older than the tick belongs to the bytes read.
//!
//! Best effort: the record is a cache of what svkit verified, so failing
//! to write it costs the next apply a full compare and nothing else.

use super::dirfd::DirFd;
use super::live;
use super::plan::{compare, Action};
use super::record::{Record, SlotRecord, Stamp, RECORD};
use super::DesiredSlot;
use nix::sys::stat::fstat;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long to wait for the filesystem clock to tick (1 s covers the
/// coarsest common granularity; tmpfs and ext4 tick in milliseconds).
const TICK_BOUND: Duration = Duration::from_secs(2);

/// A filesystem time: ctime seconds and nanoseconds.
pub type Time = (i64, i64);

/// The record a plan used and the slots it confirmed unchanged with it.
pub struct Recorded {
    pub record: Record,
    pub confirmed: BTreeSet<String>,
}

/// A new slot built in its temp dir, with the stamps of what was made.
pub struct Built {
    pub name: String,
    pub tmp: PathBuf,
    /// Every rendered file, in render order, stamped right after writing.
    pub files: Vec<(PathBuf, Stamp)>,
    /// Every dir inside the slot, stamped once all in it was made.
    pub dirs: Vec<(PathBuf, Stamp)>,
}

/// Brings the record up to date after an apply; returns the new record
/// when it wrote one (`None`: the old one still stands). `clock` is the clock
/// started once everything was written and the time it ticked to before
/// the slots in `built` were renamed into place; without one, only the
/// entries the plan confirmed are kept.
pub fn reseal(
    scandir: &Path,
    desired: &[DesiredSlot],
    old: &Recorded,
    built: &[Built],
    clock: Option<(Clock, Time)>,
) -> Option<Record> {
    let mut sections: BTreeMap<&str, Cow<[u8]>> = BTreeMap::new();
    for slot in desired.iter().filter(|d| old.confirmed.contains(&d.name)) {
        if let Some(s) = old.record.section(&slot.name) {
            sections.insert(&slot.name, Cow::Borrowed(s));
        }
    }
    let record = &old.record;
    let same_as_old = |sections: &BTreeMap<&str, Cow<[u8]>>| {
        sections.len() == record.names().count()
            && sections
                .iter()
                .all(|(name, s)| record.section(name) == Some(s.as_ref()))
    };
    let dir = scandir.join(".svkit");
    let tmp = dir.join(format!(".{RECORD}.tmp"));
    let written = (|| -> std::io::Result<Option<Vec<u8>>> {
        let mut file = match clock {
            Some((clock, visible_from)) => {
                if let (Some(now), Ok(dir)) = (clock.tick(), File::open(scandir)) {
                    let fd = dir.as_raw_fd();
                    let built: BTreeMap<&str, &Built> =
                        built.iter().map(|b| (b.name.as_str(), b)).collect();
                    let todo = desired.iter().filter(|d| !old.confirmed.contains(&d.name));
                    for slot in todo {
                        let section = match built.get(slot.name.as_str()) {
                            Some(b) => seal_built(fd, slot, b, visible_from, now, clock.dev),
                            None => seal_scanned(scandir, fd, slot, now, clock.dev),
                        };
                        if let Some(s) = section {
                            sections.insert(&slot.name, Cow::Owned(s));
                        }
                    }
                }
                clock.file
            }
            None if same_as_old(&sections) => return Ok(None),
            None => create(&tmp)?,
        };
        if same_as_old(&sections) {
            return Ok(None);
        }
        let bytes = Record::encode(&sections);
        file.write_all(&bytes)?;
        fs::rename(&tmp, dir.join(RECORD))?;
        Ok(Some(bytes))
    })();
    // Gone whether it became the record, was not needed, or failed (an
    // old record left in place is still true, merely less useful).
    let _ = fs::remove_file(&tmp);
    written.ok().flatten().and_then(Record::index)
}

fn create(path: &Path) -> std::io::Result<File> {
    let _ = fs::remove_file(path);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// The filesystem's own clock, read off the record's temp file: its ctime
/// is stamped like every change on the scandir's filesystem, at its
/// granularity.
pub struct Clock {
    file: File,
    dev: u64,
}

impl Clock {
    /// `None` if the temp file cannot be made: then nothing is recorded.
    pub fn start(scandir: &Path) -> Option<Clock> {
        let file = create(&scandir.join(".svkit").join(format!(".{RECORD}.tmp"))).ok()?;
        let dev = file.metadata().ok()?.dev();
        Some(Clock { file, dev })
    }

    /// A change now, stamped: chmod to the same mode moves only the ctime.
    fn now(&self) -> Option<Time> {
        self.file
            .set_permissions(fs::Permissions::from_mode(0o600))
            .ok()?;
        let m = self.file.metadata().ok()?;
        Some((m.ctime(), m.ctime_nsec()))
    }

    /// A filesystem time strictly later than every change made before the
    /// call: any change after it is stamped no earlier. `None` if the clock
    /// does not move within the bound.
    pub fn tick(&self) -> Option<Time> {
        let before = self.now()?;
        let start = Instant::now();
        loop {
            let t = self.now()?;
            if t > before {
                return Some(t);
            }
            if start.elapsed() > TICK_BOUND {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The section of a slot found exactly as rendered by a scan made after
/// `now`, every stamp older than `now`.
fn seal_scanned(
    scandir: &Path,
    fd: RawFd,
    slot: &DesiredSlot,
    now: Time,
    dev: u64,
) -> Option<Vec<u8>> {
    let uid_matters = nix::unistd::geteuid().is_root();
    let scan = live::scan(scandir, fd, slot, uid_matters).ok()?;
    if compare(slot, &scan.files, uid_matters) != Action::Unchanged {
        return None;
    }
    let sound = |s: &Stamp| s.ctime < now && s.dev == dev;
    let mut record = SlotRecord::default();
    for (rel, stamp) in &scan.stamps {
        let rel = rel.to_str().filter(|r| encodable(r))?;
        if !sound(stamp) {
            return None;
        }
        if stamp.is_dir() {
            record.dirs.push((rel, *stamp));
        }
    }
    for f in &slot.files {
        let (rel, stamp) = scan.stamps.iter().find(|(rel, _)| *rel == f.rel)?;
        record.files.push((rel.to_str()?, *stamp, &f.bytes));
    }
    encodable(&slot.name).then(|| record.encode(&slot.name))
}

/// The section of a slot svkit just built: what it wrote and stamped in
/// its temp dir before `visible_from`, and its slot dir, which the rename
/// into place changed, stamped and listed now, after `now`.
fn seal_built(
    fd: RawFd,
    slot: &DesiredSlot,
    built: &Built,
    visible_from: Time,
    now: Time,
    dev: u64,
) -> Option<Vec<u8>> {
    let early = |s: &Stamp| s.ctime < visible_from && s.dev == dev;
    let mut dir = DirFd::open(fd, Path::new(&slot.name), false).ok()?;
    let top = Stamp::of(&fstat(dir.fd()).ok()?);
    if !(top.ctime < now && top.dev == dev) {
        return None;
    }
    // Listed after the stamp: nothing but what svkit made.
    let made: BTreeSet<&std::ffi::OsStr> = slot
        .files
        .iter()
        .filter_map(|f| f.rel.components().next())
        .map(|c| c.as_os_str())
        .collect();
    let names = dir.names().ok()?;
    let listed: BTreeSet<&std::ffi::OsStr> = names
        .iter()
        .map(|n| <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(n.to_bytes()))
        .filter(|n| !live::supervisor_owned(Path::new(n)))
        .collect();
    if listed != made {
        return None;
    }
    let mut record = SlotRecord::default();
    record.dirs.push(("", top));
    for (rel, stamp) in &built.dirs {
        let rel = rel.to_str().filter(|r| encodable(r))?;
        early(stamp).then_some(())?;
        record.dirs.push((rel, *stamp));
    }
    if built.files.len() != slot.files.len() {
        return None;
    }
    for ((rel, stamp), f) in built.files.iter().zip(&slot.files) {
        let rel = rel.to_str().filter(|r| encodable(r))?;
        (f.rel == Path::new(rel) && early(stamp)).then_some(())?;
        record.files.push((rel, *stamp, &f.bytes));
    }
    encodable(&slot.name).then(|| record.encode(&slot.name))
}

/// Names and paths go last on a line of the record.
fn encodable(s: &str) -> bool {
    !s.contains('\n')
}
