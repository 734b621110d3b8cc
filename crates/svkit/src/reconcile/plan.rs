//! Classify every slot: create, update (which files), unchanged, delete.
//! Reads the scandir (every managed file of every declared slot, in full),
//! writes nothing.

use super::error::{ReconcileError, SlotError};
use super::live::{self, LiveFile};
use crate::render::RenderedSlot;
use std::collections::{BTreeMap, BTreeSet};
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

/// Files whose change means the running process is stale: `run`, which
/// also carries the slot's env (exported in the script).
fn restarts(rel: &Path) -> bool {
    rel == Path::new("run")
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
    let live_names: BTreeSet<String> = live::slot_names(scandir)?.into_iter().collect();
    // Root's apply makes root own every file: a plan, whoever runs it,
    // says what that apply would change.
    let uid_matters = crate::render::tree_is_root(scandir);
    let mut plans = Vec::new();
    for slot in desired {
        let dir = scandir.join(&slot.name);
        let action = if !live_names.contains(&slot.name) {
            Ok(Action::Create)
        } else if !live::is_ours(&dir) {
            Err(ReconcileError::Foreign {
                slot: slot.name.clone(),
            })
        } else {
            live::read_files(&dir).map(|live| compare(slot, &live, uid_matters))
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
        if !declared.contains(name.as_str()) && live::is_ours(&scandir.join(name)) {
            plans.push(Ok(SlotPlan {
                name: name.clone(),
                action: Action::Delete,
                want_up: false,
            }));
        }
    }
    Ok(plans)
}

fn compare(slot: &RenderedSlot, live: &BTreeMap<PathBuf, LiveFile>, uid_matters: bool) -> Action {
    let mut changed = Vec::new();
    for f in &slot.files {
        let rel = Path::new(&f.path);
        let same = live.get(rel).is_some_and(|l| {
            if live::presence_only(rel) {
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
    use crate::render::RenderedFile;

    fn slot(files: &[(&str, &str, u32)]) -> RenderedSlot {
        RenderedSlot {
            name: "a".into(),
            up: true,
            files: files
                .iter()
                .map(|(p, b, m)| RenderedFile {
                    path: p.to_string(),
                    contents: b.as_bytes().to_vec(),
                    mode: *m,
                })
                .collect(),
            user: None,
            log_dir: None,
        }
    }

    fn live(files: &[(&str, &str, u32)]) -> BTreeMap<PathBuf, LiveFile> {
        files
            .iter()
            .map(|(p, b, m)| {
                (
                    PathBuf::from(p),
                    LiveFile {
                        bytes: b.as_bytes().to_vec(),
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

    /// On a real scandir: what s6 owns is not looked at, a FIFO is never
    /// opened (not even one where a rendered file belongs), a planted
    /// symlink differs, a stale file goes, foreign slots are refused or
    /// left alone.
    #[test]
    fn plan_reads_the_disk() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().expect("tempdir");
        let scan = t.path();
        let want = slot(&[
            (".svkit", "{}", 0o644),
            ("run", "x", 0o755),
            ("log/run", "y", 0o755),
        ]);
        let put = |rel: &str, bytes: &str, mode: u32| {
            let p = scan.join("a").join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, bytes).expect("write");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        for f in &want.files {
            put(
                &f.path,
                std::str::from_utf8(&f.contents).expect("utf-8"),
                f.mode,
            );
        }
        let fifo = |rel: &str| {
            let p = scan.join("a").join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo")
        };
        fifo("supervise/control");
        fifo("log/event/x");
        put("supervise/status", "whatever", 0o644);
        let action = || {
            plan(scan, std::slice::from_ref(&want)).expect("plan")[0]
                .action
                .clone()
        };
        assert_eq!(action(), Action::Unchanged);

        std::fs::remove_file(scan.join("a/run")).expect("rm");
        fifo("run");
        let run_changed = Action::Update {
            changed: vec!["run".into()],
            removed: vec![],
            restart: true,
        };
        assert_eq!(action(), run_changed, "a FIFO is not the file");
        std::fs::remove_file(scan.join("a/run")).expect("rm");
        put("x", "x", 0o755);
        std::os::unix::fs::symlink("x", scan.join("a/run")).expect("symlink");
        // Even to a file with the rendered bytes; the stray file goes.
        let planted = Action::Update {
            changed: vec!["run".into()],
            removed: vec!["x".into()],
            restart: true,
        };
        assert_eq!(action(), planted);

        // Not ours: refused when declared, left alone when not.
        std::fs::create_dir(scan.join("b")).expect("mkdir");
        let mut b = want.clone();
        b.name = "b".into();
        assert!(matches!(
            plan(scan, &[b]),
            Err(ReconcileError::Foreign { .. })
        ));
        let plans = plan(scan, &[]).expect("plan");
        assert_eq!(plans.len(), 1, "{plans:?}");
        assert_eq!(
            (plans[0].name.as_str(), &plans[0].action),
            ("a", &Action::Delete)
        );
    }
}
