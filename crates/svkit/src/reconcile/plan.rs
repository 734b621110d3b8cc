//! Classify every slot: create, update (which files), unchanged, delete.
//! Reads the scandir, writes nothing. A slot the record confirms (see
//! [`super::record`]) is unchanged without reading its files; any other is
//! compared in full.

use super::error::{io, ReconcileError};
use super::live::{self, LiveFile, OWNER_UID};
use super::record::{Record, SlotRecord};
use super::DesiredSlot;
use crate::par;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Create,
    Update {
        /// Files to write (new or different).
        changed: Vec<PathBuf>,
        /// Managed files no longer rendered.
        removed: Vec<PathBuf>,
        /// `run` (or the env it carries) changed: restart if up.
        restart: bool,
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
        if let Action::Update { restart, .. } = &self.action {
            line.push_str(&format!(" files={}", self.action.files().join(",")));
            if *restart {
                line.push_str(" restart=yes");
            }
        }
        line
    }
}

/// Files whose change means the running process is stale.
fn restarts(rel: &Path) -> bool {
    rel == Path::new("run") || rel.starts_with("env")
}

/// A plan, and what it rested on: the record it read and the slots that
/// record confirmed unchanged without a full compare.
pub(super) struct Survey {
    pub plans: Vec<SlotPlan>,
    pub record: Record,
    pub confirmed: BTreeSet<String>,
}

/// Below this many slots a second thread costs more than it saves.
const CONFIRMS_PER_WORKER: usize = 64;

pub fn plan(scandir: &Path, desired: &[DesiredSlot]) -> Result<Vec<SlotPlan>, ReconcileError> {
    Ok(survey(scandir, desired)?.plans)
}

pub(super) fn survey(scandir: &Path, desired: &[DesiredSlot]) -> Result<Survey, ReconcileError> {
    let live_names: BTreeSet<String> = live::slot_names(scandir)?.into_iter().collect();
    let uid_matters = nix::unistd::geteuid().is_root();
    let fd = File::open(scandir).map_err(io(scandir))?;
    let record = Record::load(scandir);
    let scandir_fd = fd.as_raw_fd();
    // A few lstats a slot, hundreds of slots: spread over the CPUs.
    let by_record = par::map(desired, CONFIRMS_PER_WORKER, |slot| {
        live_names.contains(&slot.name)
            && record
                .section(&slot.name)
                .and_then(SlotRecord::decode)
                .is_some_and(|r| r.confirms(scandir_fd, slot, uid_matters))
    });
    let mut confirmed = BTreeSet::new();
    let mut plans = Vec::new();
    let mut declared = BTreeSet::new();
    for (slot, by_record) in desired.iter().zip(by_record) {
        declared.insert(slot.name.clone());
        let action = if !live_names.contains(&slot.name) {
            Action::Create
        } else if by_record {
            confirmed.insert(slot.name.clone());
            Action::Unchanged
        } else if !live::is_ours(&scandir.join(&slot.name)) {
            return Err(ReconcileError::Foreign {
                slot: slot.name.clone(),
            });
        } else {
            let scan = live::scan(scandir, scandir_fd, slot, uid_matters)?;
            compare(slot, &scan.files, uid_matters)
        };
        plans.push(SlotPlan {
            name: slot.name.clone(),
            action,
            want_up: slot.want_up,
        });
    }
    for name in live_names.difference(&declared) {
        if live::is_ours(&scandir.join(name)) {
            plans.push(SlotPlan {
                name: name.clone(),
                action: Action::Delete,
                want_up: false,
            });
        }
    }
    Ok(Survey {
        plans,
        record,
        confirmed,
    })
}

pub(super) fn compare(
    slot: &DesiredSlot,
    live: &BTreeMap<PathBuf, LiveFile>,
    uid_matters: bool,
) -> Action {
    let mut changed = Vec::new();
    for f in &slot.files {
        let same = live.get(&f.rel).is_some_and(|l| {
            if live::presence_only(&f.rel) {
                return l.is_regular();
            }
            l.bytes.as_deref() == Some(f.bytes.as_slice())
                && l.mode == f.mode
                && (!uid_matters || l.uid == OWNER_UID)
        });
        if !same {
            changed.push(f.rel.clone());
        }
    }
    let rendered: BTreeSet<&PathBuf> = slot.files.iter().map(|f| &f.rel).collect();
    let removed: Vec<PathBuf> = live
        .keys()
        .filter(|p| !rendered.contains(p))
        .cloned()
        .collect();
    if changed.is_empty() && removed.is_empty() {
        return Action::Unchanged;
    }
    let restart = changed.iter().chain(&removed).any(|p| restarts(p));
    Action::Update {
        changed,
        removed,
        restart,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::DesiredFile;

    fn slot(files: &[(&str, &str, u32)]) -> DesiredSlot {
        DesiredSlot {
            name: "a".into(),
            files: files
                .iter()
                .map(|(p, b, m)| DesiredFile {
                    rel: p.into(),
                    bytes: b.as_bytes().to_vec(),
                    mode: *m,
                })
                .collect(),
            user: None,
            log_dir: None,
            want_up: true,
        }
    }

    fn live(files: &[(&str, &str, u32)]) -> BTreeMap<PathBuf, LiveFile> {
        files
            .iter()
            .map(|(p, b, m)| {
                (
                    PathBuf::from(p),
                    LiveFile {
                        bytes: Some(b.as_bytes().to_vec()),
                        mode: *m,
                        uid: 0,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn identical_is_unchanged() {
        let f = [("run", "x", 0o755), (".svkit", "", 0o644)];
        assert_eq!(compare(&slot(&f), &live(&f), true), Action::Unchanged);
    }

    #[test]
    fn run_change_restarts_finish_change_does_not() {
        let want = slot(&[("run", "new", 0o755), ("finish", "f", 0o755)]);
        let a = compare(
            &want,
            &live(&[("run", "old", 0o755), ("finish", "f", 0o755)]),
            true,
        );
        assert_eq!(
            a,
            Action::Update {
                changed: vec!["run".into()],
                removed: vec![],
                restart: true
            }
        );
        let a = compare(
            &want,
            &live(&[("run", "new", 0o755), ("finish", "g", 0o755)]),
            true,
        );
        assert_eq!(
            a,
            Action::Update {
                changed: vec!["finish".into()],
                removed: vec![],
                restart: false
            }
        );
    }

    #[test]
    fn a_down_file_counts_by_its_presence_alone() {
        let want = slot(&[("down", "", 0o644), ("run", "x", 0o755)]);
        let odd = live(&[("down", "whatever", 0o600), ("run", "x", 0o755)]);
        assert_eq!(compare(&want, &odd, true), Action::Unchanged);
        let gone = live(&[("run", "x", 0o755)]);
        let mut link = live(&[("down", "run", 0o644), ("run", "x", 0o755)]);
        if let Some(f) = link.get_mut(Path::new("down")) {
            f.mode = live::SYMLINK_MODE;
        }
        for l in [gone, link] {
            assert_eq!(
                compare(&want, &l, true),
                Action::Update {
                    changed: vec!["down".into()],
                    removed: vec![],
                    restart: false
                }
            );
        }
        // Any other file's bytes count, even an empty one's.
        let want = slot(&[("run", "x", 0o755), ("timeout-kill", "", 0o644)]);
        let l = live(&[("run", "x", 0o755), ("timeout-kill", "1", 0o644)]);
        assert!(matches!(compare(&want, &l, true), Action::Update { .. }));
    }

    #[test]
    fn mode_owner_and_stale_files_count() {
        let want = slot(&[("run", "x", 0o755)]);
        let a = compare(&want, &live(&[("run", "x", 0o644)]), true);
        assert!(matches!(a, Action::Update { restart: true, .. }));
        let mut l = live(&[("run", "x", 0o755)]);
        if let Some(f) = l.get_mut(Path::new("run")) {
            f.uid = 1000;
        }
        assert!(matches!(compare(&want, &l, true), Action::Update { .. }));
        assert_eq!(compare(&want, &l, false), Action::Unchanged);
        let a = compare(
            &want,
            &live(&[("run", "x", 0o755), ("down", "", 0o644)]),
            true,
        );
        assert_eq!(
            a,
            Action::Update {
                changed: vec![],
                removed: vec!["down".into()],
                restart: false
            }
        );
    }
}
