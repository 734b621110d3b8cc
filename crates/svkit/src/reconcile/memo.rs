//! The memo: a no-op apply proven without validating or rendering.
//!
//! After an apply, `<scandir>/.svkit/memo` holds the digest of everything
//! the render depended on ([`super::inputs`]), the slots it declared, and
//! for each slot a digest of the stamps the record holds for its files and
//! dirs (see [`super::record`] for why a stamp proves an inode untouched),
//! but for files that count by their presence alone, which their dir's
//! stamp proves.
//! The next apply reads the same sources again; if their digest is the
//! same, the render would be too, so when nothing needs sweeping or
//! deleting and every slot's stamps still hold, there is nothing to do.
//! Anything else (no memo, a corrupt one, one input or one stamp off) is a
//! full apply: like the record, the memo can make an apply slower, never
//! wrong. It is written only while the apply still holds the scandir lock,
//! and only when the sources, read again, still say what the render used.

use super::error::ReconcileError;
use super::inputs::{digest128, DirKey, Inputs};
use super::live;
use super::lock::ScandirLock;
use super::plan::{Action, SlotPlan};
use super::record::{self, Record, SlotRecord, Stamp};
use super::{DesiredSlot, Outcome, DELETE_PREFIX, TEMP_PREFIX};
use crate::par::{self, Claims};
use crate::{dirent, fsutil};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

/// What a binary says when the memo proved a no-op.
pub const NOOP_INFO: &str =
    "nothing to do: the config, what it reads and every slot are as the last apply left them";

/// The memo's name inside the scandir's `.svkit` dir.
pub const MEMO: &str = "memo";
const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Memo<'a> {
    svkit_memo: u32,
    /// [`Inputs::digest`] of what the render used.
    inputs: String,
    /// The sources to read again, beyond the config dir.
    dirs: Vec<DirKey>,
    state_dir: String,
    env: Vec<String>,
    remember: Vec<String>,
    warnings: Vec<String>,
    /// Paths in a slot, `""` for the slot dir, as lists shared by slots.
    shapes: Vec<Vec<String>>,
    /// Borrowed from the memo's bytes: no allocation per slot.
    #[serde(borrow)]
    slots: Vec<MemoSlot<'a>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct MemoSlot<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    up: bool,
    shape: usize,
    #[serde(borrow)]
    stamps: Cow<'a, str>,
}

/// A no-op proven by the memo: what a full apply would have reported.
pub struct Noop {
    pub warnings: Vec<String>,
    pub outcome: Outcome,
}

/// `Some` when the memo proves that applying `config_dir` to `scandir`
/// would change nothing. Waits for the scandir lock like an apply; `None`
/// when there is no lock file yet (nothing was ever applied there).
pub fn confirm_noop(
    config_dir: &Path,
    scandir: &Path,
    lock_timeout: Duration,
) -> Result<Option<Noop>, ReconcileError> {
    let Some(_lock) = ScandirLock::acquire_existing(scandir, lock_timeout)? else {
        return Ok(None);
    };
    Ok(confirm_locked(config_dir, scandir))
}

fn confirm_locked(config_dir: &Path, scandir: &Path) -> Option<Noop> {
    let bytes = record::read_trusted(&scandir.join(".svkit").join(MEMO))?;
    let memo: Memo = serde_json::from_slice(&bytes).ok()?;
    if memo.svkit_memo != VERSION {
        return None;
    }
    // The sources and the scandir are read side by side: both are system
    // calls, and neither needs the other. The slots' stamps are shared out
    // as each thread gets free, so all finish together.
    let dir = dirent::open_dir(None, scandir).ok()?;
    let stamps = Claims::new(memo.slots.len(), STAMPS_PER_CLAIM);
    let all_held = || stamps_hold(dir.as_raw_fd(), &memo, &stamps);
    let (same_inputs, same_disk) = std::thread::scope(|sc| {
        let listing = sc.spawn(|| {
            if !scandir_clean(scandir, &dir, &memo) {
                stamps.stop();
            }
            all_held()
        });
        // And one more for each CPU past the first: a thread per CPU plus
        // this one. With only one per CPU, a thread started beside its
        // parent can share its CPU for the whole run while another idles
        // (measured: a quarter of runs took half as long again).
        let helpers: Vec<_> = (1..par::workers(memo.slots.len(), STAMPS_PER_WORKER))
            .map(|_| sc.spawn(all_held))
            .collect();
        let same = Inputs::read_again(
            config_dir,
            &memo.dirs,
            &memo.state_dir,
            &memo.env,
            &memo.remember,
        )
        .is_some_and(|now| now.digest() == memo.inputs);
        if !same {
            stamps.stop();
        }
        let mine = all_held();
        let theirs = helpers.into_iter().all(|h| h.join().unwrap_or(false));
        (same, mine && theirs && listing.join().unwrap_or(false))
    });
    if !(same_inputs && same_disk) {
        return None;
    }
    let plans = memo
        .slots
        .iter()
        .map(|s| SlotPlan {
            name: s.name.to_string(),
            action: Action::Unchanged,
            want_up: s.up,
        })
        .collect();
    Some(Noop {
        warnings: memo.warnings,
        outcome: Outcome {
            plans,
            swept: Vec::new(),
        },
    })
}

/// Nothing to sweep or delete in `scandir`, open as `dir`: no leftover temp
/// dir, no slot of ours that the memo does not declare. (The stamp checks
/// share `dir`: naming paths from it does not depend on where a listing is.)
fn scandir_clean(scandir: &Path, dir: &OwnedFd, memo: &Memo) -> bool {
    let declared: BTreeSet<&[u8]> = memo.slots.iter().map(|s| s.name.as_bytes()).collect();
    let mut clean = true;
    let listed = dirent::each_entry(dir, |name, _| {
        let name = name.to_bytes();
        let leftover =
            name.starts_with(TEMP_PREFIX.as_bytes()) || name.starts_with(DELETE_PREFIX.as_bytes());
        let stale = || {
            !name.starts_with(b".")
                && !declared.contains(name)
                && live::is_ours(&scandir.join(OsStr::from_bytes(name)))
        };
        if leftover || stale() {
            clean = false;
        }
    });
    listed.is_ok() && clean
}

/// Whether every slot this thread claims still carries the stamps the memo
/// has a digest of (paths named from `scandir_fd`). The first one off
/// stops every thread's claims.
fn stamps_hold(scandir_fd: RawFd, memo: &Memo, claims: &Claims) -> bool {
    while let Some(range) = claims.next() {
        let held = memo.slots.get(range).is_some_and(|slots| {
            slots.iter().all(|s| {
                memo.shapes
                    .get(s.shape)
                    .and_then(|shape| live_digest(scandir_fd, &s.name, shape))
                    .is_some_and(|d| d == s.stamps)
            })
        });
        if !held {
            claims.stop();
            return false;
        }
    }
    !claims.stopped()
}

/// Below this many slots a second thread costs more than it saves.
const STAMPS_PER_WORKER: usize = 64;
/// Slots a thread claims at a time: few enough that the threads finish
/// together, enough that claiming costs nothing.
const STAMPS_PER_CLAIM: usize = 16;

/// Writes the memo for an apply that just made `scandir` match `desired`,
/// rendered from `inputs`, with `record` the record now on disk (still
/// under the apply's lock). Best effort: no memo costs the next apply its
/// full run, nothing else.
pub(super) fn write(
    scandir: &Path,
    record: &Record,
    desired: &[DesiredSlot],
    inputs: &Inputs,
    warnings: &[String],
) {
    let path = scandir.join(".svkit").join(MEMO);
    match build(record, desired, inputs, warnings) {
        Some(bytes) => {
            if fsutil::write_atomic(&path, &bytes, 0o600, None).is_err() {
                let _ = fs::remove_file(&path);
            }
        }
        None => {
            let _ = fs::remove_file(&path);
        }
    }
}

fn build(
    record: &Record,
    desired: &[DesiredSlot],
    inputs: &Inputs,
    warnings: &[String],
) -> Option<Vec<u8>> {
    let dirs: Vec<DirKey> = inputs.discovered.keys().cloned().collect();
    let env: Vec<String> = inputs.env.keys().cloned().collect();
    let remember: Vec<String> = inputs.remembered.keys().cloned().collect();
    // The sources changed while this apply ran: its render vouches for
    // neither the old nor the new ones.
    let again = Inputs::read_again(
        &inputs.config_dir,
        &dirs,
        &inputs.state_dir,
        &env,
        &remember,
    )?;
    if again != *inputs {
        return None;
    }
    let mut shapes: Vec<Vec<String>> = Vec::new();
    let mut slots = Vec::with_capacity(desired.len());
    for slot in desired {
        let rec = SlotRecord::decode(record.section(&slot.name)?)?;
        if !rec.holds_render_of(slot) {
            return None;
        }
        // A file that means only that it exists is proven by its dir's
        // stamp, which its removal or creation would change.
        let files = || {
            rec.files
                .iter()
                .filter(|(rel, _, _)| !live::presence_only(Path::new(rel)))
        };
        let shape: Vec<String> = rec
            .dirs
            .iter()
            .map(|(rel, _)| rel.to_string())
            .chain(files().map(|(rel, _, _)| rel.to_string()))
            .collect();
        let stamps: Vec<Stamp> = rec
            .dirs
            .iter()
            .map(|(_, s)| *s)
            .chain(files().map(|(_, s, _)| *s))
            .collect();
        let index = match shapes.iter().position(|s| *s == shape) {
            Some(i) => i,
            None => {
                shapes.push(shape);
                shapes.len() - 1
            }
        };
        slots.push(MemoSlot {
            name: Cow::Borrowed(&slot.name),
            up: slot.want_up,
            shape: index,
            stamps: Cow::Owned(digest(&stamps)),
        });
    }
    let memo = Memo {
        svkit_memo: VERSION,
        inputs: inputs.digest(),
        dirs,
        state_dir: inputs.state_dir.clone(),
        env,
        remember,
        warnings: warnings.to_vec(),
        shapes,
        slots,
    };
    serde_json::to_vec(&memo).ok()
}

/// The digest of a slot's paths as they are now, or `None` if one is gone.
fn live_digest(scandir_fd: RawFd, name: &str, shape: &[String]) -> Option<String> {
    let mut path = String::with_capacity(name.len() + 32);
    let mut stamps = Vec::with_capacity(shape.len() * STAMP_BYTES);
    for rel in shape {
        path.clear();
        path.push_str(name);
        if !rel.is_empty() {
            path.push('/');
            path.push_str(rel);
        }
        let st = live::lstat_at(scandir_fd, Path::new(&path)).ok()?;
        Stamp::of(&st).push_bytes(&mut stamps);
    }
    Some(digest128(stamps.as_slice()))
}

/// What [`Stamp::push_bytes`] adds.
const STAMP_BYTES: usize = 64;

fn digest(stamps: &[Stamp]) -> String {
    let mut bytes = Vec::with_capacity(stamps.len() * STAMP_BYTES);
    for s in stamps {
        s.push_bytes(&mut bytes);
    }
    digest128(bytes.as_slice())
}
