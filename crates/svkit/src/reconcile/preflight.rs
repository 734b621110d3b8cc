//! What an apply can know will fail, found before its first write, slot
//! by slot: the slot's user, its log dir (creatable, or ownable by the
//! user), the dirs its files go in; and, for the whole, whether s6-svscan
//! can take every service it needs. Nothing here writes.

use super::error::{io, ReconcileError, SlotError};
use super::fsops::{self, UidGid};
use super::plan::{Action, SlotPlan};
use super::LOG_RUN;
use crate::capacity::{self, Fit};
use crate::render::RenderedSlot;
use nix::errno::Errno;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A slot that passed every check: what to write, as whom.
#[derive(Debug)]
pub(super) struct Work<'a> {
    pub slot: &'a RenderedSlot,
    pub action: &'a Action,
    /// Who owns its log dir and `supervise/` (only when root).
    pub owner: Option<UidGid>,
}

/// The slots to write (creates and updates) that pass, and an error for
/// each one that does not.
pub(super) fn check<'a>(
    scandir: &Path,
    plans: &'a [SlotPlan],
    by_name: &BTreeMap<&str, &'a RenderedSlot>,
) -> (Vec<Work<'a>>, Vec<SlotError>) {
    let root = nix::unistd::geteuid().is_root();
    let mut users: BTreeMap<&str, Option<UidGid>> = BTreeMap::new();
    let mut scandir_ok: Option<Result<(), Errno>> = None;
    let mut work = Vec::new();
    let mut refused = Vec::new();
    for p in plans {
        if !matches!(p.action, Action::Create | Action::Update { .. }) {
            continue;
        }
        let Some(slot) = by_name.get(p.name.as_str()).copied() else {
            continue;
        };
        let mut checks = || -> Result<Option<UidGid>, ReconcileError> {
            let owner = match (&slot.user, root) {
                (Some(user), true) => {
                    // Many slots share a user: one passwd lookup each.
                    let known = *users
                        .entry(user.as_str())
                        .or_insert_with(|| lookup_user(user).ok());
                    let unknown = || ReconcileError::UnknownUser { user: user.clone() };
                    Some(known.ok_or_else(unknown)?)
                }
                _ => None,
            };
            if let Some(dir) = &slot.log_dir {
                fsops::check_log_dir(dir, owner).map_err(|e| ReconcileError::LogDir {
                    dir: dir.clone(),
                    source: Box::new(e),
                })?;
            }
            match &p.action {
                Action::Create => {
                    let ok = *scandir_ok.get_or_insert_with(|| fsops::writable(scandir));
                    ok.map_err(|e| io(scandir)(e.into()))?;
                }
                Action::Update {
                    changed, removed, ..
                } => {
                    let rels = changed.iter().chain(removed).map(PathBuf::as_path);
                    fsops::check_slot_writes(&scandir.join(&slot.name), rels)?;
                }
                Action::Unchanged | Action::Delete => {}
            }
            Ok(owner)
        };
        match checks() {
            Ok(owner) => work.push(Work {
                slot,
                action: &p.action,
                owner,
            }),
            Err(e) => refused.push(SlotError::new(&slot.name, e)),
        }
    }
    (work, refused)
}

/// A user name (or `uid:gid`) to ids, from /etc/passwd (`svkit::passwd`).
pub fn lookup_user(user: &str) -> Result<UidGid, ReconcileError> {
    crate::passwd::lookup(user)
        .map(|u| u.ids())
        .map_err(|_| ReconcileError::UnknownUser {
            user: user.to_string(),
        })
}

/// Whether `desired`, with what else is in `scandir`, fits in the
/// running s6-svscan's limit (`crate::capacity`).
pub fn fits(scandir: &Path, desired: &[RenderedSlot]) -> Result<Fit, ReconcileError> {
    let slots = desired
        .iter()
        .map(|d| (d.name.as_str(), d.file(LOG_RUN).is_some()));
    Ok(capacity::check_in(scandir, slots)?)
}
