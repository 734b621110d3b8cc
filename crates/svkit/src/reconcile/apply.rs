//! Carry out a plan: atomic creates, in-place updates, bounded deletes.
//!
//! In three steps. Check: everything that can be known to fail (more
//! services than s6-svscan takes, users, foreign slots, log dirs, dirs
//! that take no writes) is found before the first write. Write: every
//! file, dir and owner, each write recorded in a [`Journal`]; new slots
//! are built in `.`-led temp dirs, then renamed into place, which
//! s6-svscan does not see until told. Tell s6: rescan,
//! restart what changed, delete what went. Only the last step cannot be
//! undone, and it starts once every write has succeeded.
//!
//! [`Scope::All`] (`svctl apply`) undoes every write when any slot fails,
//! so the scandir is as it was; [`Scope::EachSlot`] (the boot hook) undoes
//! the failing slot's writes only, and makes the others. What it did, and
//! could not do, comes back as an [`ApplyReport`]: the audit lines on
//! stdout, the messages on stderr.

use super::error::{check_tree_user, io, ReconcileError, SlotError};
use super::fsops::{self, UidGid};
use super::journal::{fault, Journal, Undo};
use super::plan::{plan_each, Action, SlotPlan};
use super::preflight::{self, Work};
use super::{ScandirLock, DELETE_PREFIX, LOG_RUN, TEMP_PREFIX};
use crate::clock::poll_until;
use crate::msg::{self, Fatal};
use crate::render::RenderedSlot;
use crate::s6::control::{self, ControlError, SvcCommand};
use crate::s6::status;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What one failing slot does to the rest of an apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// All or nothing: any slot that cannot be applied leaves every slot
    /// as it was (`svctl apply`, `register`, a redirect).
    #[default]
    All,
    /// Each slot on its own: one that cannot be applied is left as it
    /// was and reported; the others are applied (the boot hook: a boot
    /// that makes no slot because one is broken helps no one).
    EachSlot,
}

#[derive(Debug, Clone)]
pub struct ApplyOptions {
    pub lock_timeout: Duration,
    /// Bound on waiting for a deleted slot to go down.
    pub stop_timeout: Duration,
    pub scope: Scope,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            lock_timeout: Duration::from_secs(30),
            stop_timeout: Duration::from_secs(10),
            scope: Scope::All,
        }
    }
}

/// What apply did, slot by slot.
#[derive(Debug)]
pub struct ApplyReport {
    /// The slots applied (and those unchanged), in plan order.
    pub plans: Vec<SlotPlan>,
    /// Temp dirs of an interrupted earlier apply that were swept.
    pub swept: Vec<String>,
    /// [`Scope::EachSlot`](super::Scope::EachSlot): slots left as they
    /// were, each with why.
    pub failed: Vec<SlotError>,
    /// Writes of those slots that could not be undone.
    pub undo_failed: Vec<ReconcileError>,
    /// Slots written whose restart or delete s6 refused.
    pub s6_failed: Vec<SlotError>,
}

impl ApplyReport {
    /// The audit lines, one per slot, as one text: printed with a single
    /// write, not one per slot.
    pub fn audit(&self) -> String {
        (self.plans.iter())
            .map(|p| format!("{}\n", p.audit_line()))
            .collect()
    }

    /// Prints what was swept (info) and each slot that failed (warning,
    /// naming the slot, the path and why); the fatal error to exit with
    /// when some slot failed, naming them all.
    pub fn report(&self, scandir: &Path) -> Option<Fatal> {
        for name in &self.swept {
            msg::info(format_args!(
                "swept {name} left by an interrupted reconcile"
            ));
        }
        for f in &self.failed {
            msg::warn(format_args!("slot {} not applied: {}", f.slot, f.error));
        }
        for e in &self.undo_failed {
            msg::warn(format_args!("unable to undo a write: {e}"));
        }
        for f in &self.s6_failed {
            msg::warn(format_args!("slot {} written, but: {}", f.slot, f.error));
        }
        let names = |v: &[SlotError]| {
            v.iter()
                .map(|f| f.slot.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut why = Vec::new();
        if !self.failed.is_empty() {
            why.push(format!(
                "not applied: {} (the other slots are)",
                names(&self.failed)
            ));
        }
        if !self.s6_failed.is_empty() {
            why.push(format!("s6 refused {}", names(&self.s6_failed)));
        }
        if why.is_empty() && self.undo_failed.is_empty() {
            return None;
        }
        if why.is_empty() {
            why.push("some writes could not be undone".into());
        }
        Some(Fatal::system(
            format!("unable to reconcile {}", scandir.display()),
            why.join("; "),
        ))
    }
}

/// One slot's writes, done and undoable.
struct Staged<'a> {
    work: Work<'a>,
    journal: Journal,
    /// A new slot's temp dir, until it is renamed into place.
    tmp: Option<PathBuf>,
}

/// Under `lock`, which the caller took before reading what `desired` was
/// made of: sweep, plan, check, write, then tell s6.
pub fn apply(
    lock: &ScandirLock,
    desired: &[RenderedSlot],
    opts: &ApplyOptions,
) -> Result<ApplyReport, ReconcileError> {
    let scandir = lock.scandir();
    check_tree_user(scandir, nix::unistd::geteuid().as_raw())?;
    // Whole, whatever the scope: past s6-svscan's limit no new slot would
    // start, not only the extra ones.
    preflight::fits(scandir, desired)?;
    let swept = sweep(scandir)?;
    let mut failed = Vec::new();
    let mut plans = Vec::new();
    for r in plan_each(scandir, desired)? {
        match r {
            Ok(p) => plans.push(p),
            Err(e) => failed.push(e),
        }
    }
    let by_name: BTreeMap<&str, &RenderedSlot> =
        desired.iter().map(|d| (d.name.as_str(), d)).collect();
    let (work, refused) = preflight::check(scandir, &plans, &by_name);
    failed.extend(refused);
    let all = opts.scope == Scope::All;
    if all && !failed.is_empty() {
        return Err(ReconcileError::Slots {
            failed,
            undo_failed: Vec::new(),
        });
    }

    let mut undo_failed = Vec::new();
    let mut staged: Vec<Staged> = Vec::new();
    for w in work {
        let mut journal = Journal::default();
        match stage(scandir, &w, &mut journal) {
            Ok(tmp) => staged.push(Staged {
                work: w,
                journal,
                tmp,
            }),
            Err(e) => {
                undo_failed.extend(journal.rollback());
                failed.push(SlotError::new(&w.slot.name, e));
                if all {
                    return Err(abort(staged, failed, undo_failed));
                }
            }
        }
    }
    test_pause("SVKIT_TEST_PAUSE_BEFORE_RENAME_MS");
    // New slots into place: s6-svscan sees none of them until told, so a
    // rename that fails can still be undone with the rest.
    let mut i = 0;
    while i < staged.len() {
        if let Some(tmp) = staged[i].tmp.take() {
            let dest = scandir.join(&staged[i].work.slot.name);
            match fault::check("rename").and_then(|()| fs::rename(&tmp, &dest)) {
                Ok(()) => staged[i].journal.push(Undo::Tree(dest)),
                Err(e) => {
                    let s = staged.remove(i);
                    undo_failed.extend(s.journal.rollback());
                    failed.push(SlotError::new(&s.work.slot.name, io(&dest)(e)));
                    if all {
                        return Err(abort(staged, failed, undo_failed));
                    }
                    continue;
                }
            }
        }
        i += 1;
    }

    // Every write is in place. What follows tells s6, and cannot be undone.
    let left: BTreeSet<&str> = failed.iter().map(|f| f.slot.as_str()).collect();
    // Rescan and prune: s6-svscan knows a slot by its dir's inode, so a
    // slot deleted by hand and made again here would otherwise keep its
    // orphaned supervisor (and service) running beside the new one.
    if staged.iter().any(|s| *s.work.action == Action::Create) {
        control::svscanctl(scandir, "-an")?;
    }
    let mut s6_failed = Vec::new();
    for s in &staged {
        let Action::Update {
            changed,
            restart,
            log_dir_missing,
            ..
        } = s.work.action
        else {
            continue;
        };
        let name = &s.work.slot.name;
        let dir = scandir.join(name);
        // The log dir is made again: the logger, writing on into the old
        // one's unlinked `current`, must reopen it. A new `log/run` (its
        // dir, prefix or format) is read only by a new logger: the logger
        // alone restarts, the program's pipe to it is s6-svscan's and
        // outlives it.
        let logger_changed = changed.iter().any(|p| p == Path::new(LOG_RUN));
        if *log_dir_missing || logger_changed {
            if let Err(e) = unless_unsupervised(crate::slot::logger::restart(&dir)) {
                s6_failed.push(SlotError::new(name, e));
            }
        }
        // A slot whose `run` changed runs a stale process: restarted when
        // up.
        if *restart && status::read_slot(&dir).is_ok_and(|s| s.up) {
            let sent = crate::slot::end::send(&dir, &[SvcCommand::Restart]);
            if let Err(e) = unless_unsupervised(sent) {
                s6_failed.push(SlotError::new(name, e));
            }
        }
    }
    let mut deletes = plans
        .iter()
        .filter(|p| p.action == Action::Delete)
        .peekable();
    if deletes.peek().is_some() {
        let mut hidden = Vec::new();
        for p in deletes {
            match delete(scandir, &p.name, opts) {
                Ok(h) => hidden.push(h),
                Err(e) => s6_failed.push(SlotError::new(&p.name, e)),
            }
        }
        control::svscanctl(scandir, "-an")?;
        // s6-svscan ends their supervisors in its own time; what is still
        // supervised then is left to a later sweep.
        control::wait_unsupervised(&hidden, SWEEP_WAIT);
        sweep(scandir)?;
    }
    plans.retain(|p| !left.contains(p.name.as_str()));
    Ok(ApplyReport {
        plans,
        swept,
        failed,
        undo_failed,
        s6_failed,
    })
}

/// All or nothing: every slot's writes undone, newest first.
fn abort(
    staged: Vec<Staged>,
    failed: Vec<SlotError>,
    mut undo_failed: Vec<ReconcileError>,
) -> ReconcileError {
    for s in staged.into_iter().rev() {
        undo_failed.extend(s.journal.rollback());
    }
    ReconcileError::Slots {
        failed,
        undo_failed,
    }
}

/// Writes one slot: its log dir, then a new slot's temp dir (returned) or
/// a live slot's changed files. Each write goes to `journal`.
fn stage(
    scandir: &Path,
    w: &Work,
    journal: &mut Journal,
) -> Result<Option<PathBuf>, ReconcileError> {
    if let Some(dir) = &w.slot.log_dir {
        fsops::ensure_log_dir(dir, w.owner, journal).map_err(|e| ReconcileError::LogDir {
            dir: dir.clone(),
            source: Box::new(e),
        })?;
    }
    match w.action {
        Action::Create => build(scandir, w.slot, w.owner, journal).map(Some),
        Action::Update {
            changed, removed, ..
        } => {
            update(scandir, w.slot, w.owner, changed, removed, journal)?;
            Ok(None)
        }
        Action::Unchanged | Action::Delete => Ok(None),
    }
}

/// Leftovers of a crashed apply and deleted slots: `.`-led, out of
/// s6-svscan's sight. A deleted slot's supervisor on its way out still
/// writes its status there: its dir (still supervised, or filling again
/// while it is removed) is left for a later sweep, not an error.
fn sweep(scandir: &Path) -> Result<Vec<String>, ReconcileError> {
    let mut swept = Vec::new();
    for entry in fs::read_dir(scandir).map_err(io(scandir))?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(TEMP_PREFIX) || name.starts_with(DELETE_PREFIX) {
            let p = entry.path();
            if control::supervised(&p) || control::supervised(&p.join("log")) {
                continue;
            }
            match fs::remove_dir_all(&p) {
                Ok(()) => swept.push(name),
                Err(e) if e.raw_os_error() == Some(nix::libc::ENOTEMPTY) => {}
                Err(e) => return Err(io(&p)(e)),
            }
        }
    }
    Ok(swept)
}

/// Builds a new slot in a `.`-led temp dir (s6-svscan ignores it); the
/// caller renames it into place.
fn build(
    scandir: &Path,
    slot: &RenderedSlot,
    owner: Option<UidGid>,
    journal: &mut Journal,
) -> Result<PathBuf, ReconcileError> {
    let tmp = scandir.join(format!("{TEMP_PREFIX}{}-{}", slot.name, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fault::check("temp-dir").map_err(io(&tmp))?;
    fs::create_dir(&tmp).map_err(io(&tmp))?;
    journal.push(Undo::Tree(tmp.clone()));
    for f in &slot.files {
        fsops::write_new(&tmp, f)?;
    }
    // Inside the temp dir: undone with it.
    supervise_dirs(&tmp, owner, &mut Journal::default())?;
    Ok(tmp)
}

fn update(
    scandir: &Path,
    slot: &RenderedSlot,
    owner: Option<UidGid>,
    changed: &[PathBuf],
    removed: &[PathBuf],
    journal: &mut Journal,
) -> Result<(), ReconcileError> {
    let dir = scandir.join(&slot.name);
    for f in slot
        .files
        .iter()
        .filter(|f| changed.iter().any(|c| *c == f.path))
    {
        fsops::write_file(&dir, f, journal)?;
    }
    for rel in removed {
        fsops::remove_file(&dir, rel, journal)?;
    }
    // The user may be what changed: its supervisor dirs follow.
    supervise_dirs(&dir, owner, journal)
}

/// The supervisor dirs of the slot and of its logger, `owner`'s.
fn supervise_dirs(
    dir: &Path,
    owner: Option<UidGid>,
    journal: &mut Journal,
) -> Result<(), ReconcileError> {
    let Some(owner) = owner else {
        return Ok(());
    };
    fsops::prepare_supervise(dir, "", owner, journal)?;
    if dir.join("log").is_dir() {
        fsops::prepare_supervise(dir, "log", owner, journal)?;
    }
    Ok(())
}

/// A command to a slot without a supervisor: it runs nothing to restart
/// or stop.
fn unless_unsupervised(sent: Result<(), ControlError>) -> Result<(), ReconcileError> {
    match sent {
        Ok(()) | Err(ControlError::NotSupervised { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Down (bounded wait), then out of s6-svscan's sight (the dir returned);
/// the caller prunes.
fn delete(scandir: &Path, name: &str, opts: &ApplyOptions) -> Result<PathBuf, ReconcileError> {
    let dir = scandir.join(name);
    unless_unsupervised(crate::slot::end::send(&dir, &[SvcCommand::Down]))?;
    let down = || !status::read_slot(&dir).is_ok_and(|s| s.up);
    // A process that ignores its down signal must not outlive its slot,
    // unsupervised: kill it, as s6's timeout-kill would.
    if !poll_until(opts.stop_timeout, down) {
        let _ = crate::slot::end::send(&dir, &[SvcCommand::Kill]);
        poll_until(KILL_WAIT, down);
    }
    let hidden = scandir.join(format!("{DELETE_PREFIX}{name}-{}", std::process::id()));
    fs::rename(&dir, &hidden).map_err(io(&dir))?;
    Ok(hidden)
}

/// How long deleted slots' supervisors may take to end after the rescan.
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// After SIGKILL, how long a deleted slot's process may take to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Test hook of the sandbox tests: widen the window between building a
/// slot and renaming it, so a test can kill -9 an apply in the middle.
/// Debug builds only (what the tests run): a release build has none.
fn test_pause(var: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
