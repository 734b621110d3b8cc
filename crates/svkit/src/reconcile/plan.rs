//! Classify every slot: create, update (which files), unchanged, delete.
//! Reads the scandir (every managed file of every declared slot, in full),
//! writes nothing.

use super::error::{io, ReconcileError, SlotError};
use crate::render::RenderedSlot;
use crate::slot::end::RUNTIME_FILES;
use crate::slot::owner::is_ours;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Create,
    Update {
        /// Files to write (new or different).
        changed: Vec<PathBuf>,
        /// Managed files no longer rendered.
        removed: Vec<PathBuf>,
        /// `run` changed (its command, user or env): restart if up.
        restart: bool,
        /// The log dir is gone (deleted under a running logger, which
        /// writes on into its unlinked `current`): make it again and
        /// restart the logger so that s6-log reopens it.
        log_dir_missing: bool,
    },
    Unchanged,
    /// A slot svkit made that is no longer declared.
    Delete,
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update { .. } => "update",
            Action::Unchanged => "unchanged",
            Action::Delete => "delete",
        }
    }

    /// The files an update writes or removes, as the audit and `--json`
    /// name them; none for any other action.
    pub fn files(&self) -> Vec<String> {
        match self {
            Action::Update {
                changed, removed, ..
            } => changed
                .iter()
                .chain(removed)
                .map(|p| p.display().to_string())
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPlan {
    pub name: String,
    pub action: Action,
    /// The state the slot is wanted in after this plan (down for deletes).
    pub want_up: bool,
}

impl SlotPlan {
    /// The audit line: `reconcile: slot=NAME action=ACTION state=up|down`,
    /// plus the files an update touches.
    pub fn audit_line(&self) -> String {
        let state = if self.want_up { "up" } else { "down" };
        let mut line = format!(
            "reconcile: slot={} action={} state={state}",
            self.name,
            self.action.name()
        );
        if let Action::Update {
            restart,
            log_dir_missing,
            ..
        } = &self.action
        {
            let files = self.action.files();
            if !files.is_empty() {
                line.push_str(&format!(" files={}", files.join(",")));
            }
            if *log_dir_missing {
                line.push_str(" log_dir=missing");
            }
            if *restart {
                line.push_str(" restart=yes");
            }
        }
        line
    }
}

/// Root owns every file svkit renders into a slot.
const OWNER_UID: u32 = 0;

/// What applying `desired` would do; refused, like the apply, when it
/// does not fit in s6-svscan's limit (`preflight::fits`).
pub fn plan(scandir: &Path, desired: &[RenderedSlot]) -> Result<Vec<SlotPlan>, ReconcileError> {
    let plans = plan_each(scandir, desired)?
        .into_iter()
        .map(|r| r.map_err(|e| e.error))
        .collect::<Result<Vec<_>, _>>()?;
    super::preflight::fits(scandir, desired)?;
    Ok(plans)
}

/// [`plan`] slot by slot: a slot that cannot be planned (a foreign dir of
/// its name, an unreadable file) is an error of its own beside the plans
/// of the others. Only an unreadable scandir fails the whole.
pub(super) fn plan_each(
    scandir: &Path,
    desired: &[RenderedSlot],
) -> Result<Vec<Result<SlotPlan, SlotError>>, ReconcileError> {
    // Visible slot names (s6-svscan ignores `.`-led names, so do we).
    let live_names: BTreeSet<String> = (crate::s6::services(scandir).map_err(io(scandir))?)
        .into_iter()
        .collect();
    // Root's apply makes root own every file: a plan, whoever runs it,
    // says what that apply would change.
    let uid_matters = crate::slot::owner::tree_is_root(scandir);
    let mut plans = Vec::new();
    for slot in desired {
        let dir = scandir.join(&slot.name);
        let action = if !live_names.contains(&slot.name) {
            Ok(Action::Create)
        } else if !is_ours(&dir) {
            Err(ReconcileError::Foreign {
                slot: slot.name.clone(),
            })
        } else {
            read_files(&dir).map(|live| compare(slot, &live, uid_matters))
        };
        plans.push(
            action
                .map(|action| SlotPlan {
                    name: slot.name.clone(),
                    action,
                    want_up: slot.up,
                })
                .map_err(|e| SlotError::new(&slot.name, e)),
        );
    }
    let declared: BTreeSet<&str> = desired.iter().map(|d| d.name.as_str()).collect();
    for name in &live_names {
        if !declared.contains(name.as_str()) && is_ours(&scandir.join(name)) {
            plans.push(Ok(SlotPlan {
                name: name.clone(),
                action: Action::Delete,
                want_up: false,
            }));
        }
    }
    Ok(plans)
}

/// Only a dir that is not there counts: one this user may not look at
/// (a plan run as another user) is not known to be missing.
fn log_dir_missing(slot: &RenderedSlot) -> bool {
    slot.log_dir.as_ref().is_some_and(|d| {
        matches!(std::fs::symlink_metadata(d), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    })
}

fn compare(slot: &RenderedSlot, live: &BTreeMap<PathBuf, LiveFile>, uid_matters: bool) -> Action {
    let mut changed = Vec::new();
    for f in &slot.files {
        let rel = Path::new(&f.path);
        let same = live.get(rel).is_some_and(|l| {
            if presence_only(rel) {
                return l.is_regular();
            }
            l.bytes == f.contents && l.mode == f.mode && (!uid_matters || l.uid == OWNER_UID)
        });
        if !same {
            changed.push(rel.to_path_buf());
        }
    }
    let rendered: BTreeSet<&Path> = slot.files.iter().map(|f| Path::new(&f.path)).collect();
    let removed: Vec<PathBuf> = live
        .keys()
        .filter(|p| !rendered.contains(p.as_path()))
        .cloned()
        .collect();
    // A live slot whose log dir is gone is never unchanged.
    let log_dir_missing = log_dir_missing(slot);
    if changed.is_empty() && removed.is_empty() && !log_dir_missing {
        return Action::Unchanged;
    }
    // A changed `run` (which also carries the slot's env, exported in the
    // script) means the running process is stale.
    let restart = changed
        .iter()
        .chain(&removed)
        .any(|p| p == Path::new("run"));
    Action::Update {
        changed,
        removed,
        restart,
        log_dir_missing,
    }
}

// What is on disk now: the slots in the scandir and the files svkit
// manages inside each (everything but the supervisor's own `supervise/`
// and `event/` dirs, and the records written at run time: see `slot::end`).
/// A live file as reconcile compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// The contents; a symlink's target.
    pub bytes: Vec<u8>,
    /// Permission bits; [`SYMLINK_MODE`] for a symlink, so it never matches.
    pub mode: u32,
    pub uid: u32,
}

/// The mode a symlink gets: no rendered file has it.
pub const SYMLINK_MODE: u32 = u32::MAX;

impl LiveFile {
    pub fn is_regular(&self) -> bool {
        self.mode != SYMLINK_MODE
    }
}

/// Files whose meaning is that they exist: s6-supervise only asks whether
/// `down` is there. svkit renders it empty and, like s6, compares only its
/// presence (as a regular file): what is in it, its mode and its owner
/// change nothing, so they are not a difference to put right.
pub fn presence_only(rel: &Path) -> bool {
    rel == Path::new("down")
}

fn supervisor_owned(rel: &Path) -> bool {
    let mut parts = rel.components().map(|c| c.as_os_str());
    let first = parts.next();
    let ours = |n: Option<&std::ffi::OsStr>| n.is_some_and(|n| n == "supervise" || n == "event");
    ours(first) || (first.is_some_and(|n| n == "log") && ours(parts.next()))
}

/// Every managed file of a live slot, keyed by path relative to it.
/// Symlinks count as files (with their target as bytes) so a planted one
/// always differs from what svkit renders and gets replaced. FIFOs,
/// sockets and devices are never rendered, so never managed.
pub fn read_files(slot: &Path) -> Result<BTreeMap<PathBuf, LiveFile>, ReconcileError> {
    let mut out = BTreeMap::new();
    walk(slot, Path::new(""), &mut out)?;
    Ok(out)
}

fn walk(
    root: &Path,
    rel: &Path,
    out: &mut BTreeMap<PathBuf, LiveFile>,
) -> Result<(), ReconcileError> {
    let dir = root.join(rel);
    for entry in fs::read_dir(&dir).map_err(io(&dir))? {
        let entry = entry.map_err(io(&dir))?;
        let child = rel.join(entry.file_name());
        if supervisor_owned(&child) || RUNTIME_FILES.iter().any(|f| child == Path::new(f)) {
            continue;
        }
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(io(&path))?;
        let ft = meta.file_type();
        let (bytes, mode) = if ft.is_dir() {
            walk(root, &child, out)?;
            continue;
        } else if ft.is_symlink() {
            let target = fs::read_link(&path).map_err(io(&path))?;
            (target.into_os_string().into_encoded_bytes(), SYMLINK_MODE)
        } else if ft.is_file() {
            (read(&path).map_err(io(&path))?, meta.mode() & 0o7777)
        } else {
            continue;
        };
        let uid = meta.uid();
        out.insert(child, LiveFile { bytes, mode, uid });
    }
    Ok(())
}

/// O_NONBLOCK: should a FIFO be swapped in since the lstat, opening it must
/// not hang; O_NOFOLLOW: nor may a symlink lead elsewhere.
pub(super) fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
