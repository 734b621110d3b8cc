//! Carry out a plan: atomic creates, in-place updates, bounded deletes.
//! Everything that can be refused (config, users, foreign slots) is refused
//! before the first write.

use super::error::{io, ReconcileError};
use super::fsops::{self, UidGid};
use super::lock::ScandirLock;
use super::plan::{plan, Action, SlotPlan};
use super::{DELETE_PREFIX, TEMP_PREFIX};
use crate::render::RenderedSlot;
use crate::s6::control::{self, Command6};
use crate::s6::status;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ApplyOptions {
    pub lock_timeout: Duration,
    /// Bound on waiting for a deleted slot to go down.
    pub stop_timeout: Duration,
    /// Bound on waiting for s6-svscan to pick up a new slot.
    pub supervise_timeout: Duration,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            lock_timeout: Duration::from_secs(30),
            stop_timeout: Duration::from_secs(10),
            supervise_timeout: Duration::from_secs(5),
        }
    }
}

/// What apply did, slot by slot, for the audit lines.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub plans: Vec<SlotPlan>,
    /// Temp dirs of an interrupted earlier apply that were swept.
    pub swept: Vec<String>,
}

impl Outcome {
    /// The audit lines, one per slot, as one text: printed with a single
    /// write, not one per slot.
    pub fn audit(&self) -> String {
        let mut text = String::new();
        for p in &self.plans {
            text.push_str(&p.audit_line());
            text.push('\n');
        }
        text
    }
}

/// Under the lock: sweep, plan, refuse what must be refused, then write
/// what differs and tell s6.
pub fn apply(
    scandir: &Path,
    desired: &[RenderedSlot],
    opts: &ApplyOptions,
) -> Result<Outcome, ReconcileError> {
    let _lock = ScandirLock::acquire(scandir, opts.lock_timeout)?;
    let swept = sweep(scandir)?;
    let plans = plan(scandir, desired)?;
    let by_name: BTreeMap<&str, &RenderedSlot> =
        desired.iter().map(|d| (d.name.as_str(), d)).collect();
    // Only slots this apply writes can be refused; an unchanged slot's
    // logger checks its own dir when it starts.
    let written: Vec<&RenderedSlot> = plans
        .iter()
        .filter(|p| matches!(p.action, Action::Create | Action::Update { .. }))
        .filter_map(|p| by_name.get(p.name.as_str()).copied())
        .collect();
    let owners = resolve_owners(&written)?;
    fsops::check_log_dirs(written.iter().filter_map(|d| d.log_dir.as_deref()))?;

    let mut built = Vec::new();
    for p in &plans {
        let Some(slot) = by_name.get(p.name.as_str()) else {
            continue;
        };
        let owner = owners.get(p.name.as_str()).copied().flatten();
        match &p.action {
            Action::Create => built.push((build(scandir, slot, owner)?, &slot.name)),
            Action::Update {
                changed,
                removed,
                restart,
            } => {
                update(scandir, slot, owner, changed, removed, *restart)?;
            }
            Action::Unchanged | Action::Delete => {}
        }
    }
    test_pause("SVKIT_TEST_PAUSE_BEFORE_RENAME_MS");
    for (tmp, name) in &built {
        let dest = scandir.join(name);
        fs::rename(tmp, &dest).map_err(io(&dest))?;
    }
    // Rescan and prune: s6-svscan knows a slot by its dir's inode, so a
    // slot deleted by hand and made again here would otherwise keep its
    // orphaned supervisor (and service) running beside the new one.
    if !built.is_empty() {
        control::svscanctl(scandir, "-an")?;
    }
    let deletes: Vec<&SlotPlan> = plans
        .iter()
        .filter(|p| p.action == Action::Delete)
        .collect();
    if !deletes.is_empty() {
        for p in &deletes {
            delete(scandir, &p.name, opts)?;
        }
        control::svscanctl(scandir, "-an")?;
        sweep(scandir)?;
    }
    Ok(Outcome { plans, swept })
}

/// Leftovers of a crashed apply: `.`-led, so s6-svscan never saw them.
fn sweep(scandir: &Path) -> Result<Vec<String>, ReconcileError> {
    let mut swept = Vec::new();
    for entry in fs::read_dir(scandir).map_err(io(scandir))?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(TEMP_PREFIX) || name.starts_with(DELETE_PREFIX) {
            fs::remove_dir_all(entry.path()).map_err(io(entry.path()))?;
            swept.push(name);
        }
    }
    Ok(swept)
}

/// Users are looked up before anything is written: an unknown user fails
/// the whole apply, not half of it. Ownership only applies when root.
fn resolve_owners<'a>(
    desired: &[&'a RenderedSlot],
) -> Result<BTreeMap<&'a str, Option<UidGid>>, ReconcileError> {
    let root = nix::unistd::geteuid().is_root();
    let mut out = BTreeMap::new();
    // Many slots share a user: one passwd lookup each.
    let mut known: BTreeMap<&str, UidGid> = BTreeMap::new();
    for d in desired {
        let owner = match (&d.user, root) {
            (Some(user), true) => match known.get(user.as_str()) {
                Some(o) => Some(*o),
                None => {
                    let o = lookup_user(user)?;
                    known.insert(user, o);
                    Some(o)
                }
            },
            _ => None,
        };
        out.insert(d.name.as_str(), owner);
    }
    Ok(out)
}

/// A user name (or `uid:gid`) to ids, from /etc/passwd (`svkit::passwd`).
pub fn lookup_user(user: &str) -> Result<UidGid, ReconcileError> {
    if let Some((u, g)) = user.split_once(':') {
        if let (Ok(u), Ok(g)) = (u.parse(), g.parse()) {
            return Ok((u, g));
        }
    }
    match crate::passwd::user(user) {
        Ok(Some(u)) => Ok((u.uid, u.gid)),
        _ => Err(ReconcileError::UnknownUser {
            user: user.to_string(),
        }),
    }
}

/// Builds a new slot in a `.`-led temp dir (s6-svscan ignores it); the
/// caller renames it into place.
fn build(
    scandir: &Path,
    slot: &RenderedSlot,
    owner: Option<UidGid>,
) -> Result<PathBuf, ReconcileError> {
    let tmp = scandir.join(format!("{TEMP_PREFIX}{}-{}", slot.name, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp).map_err(io(&tmp))?;
    for f in &slot.files {
        fsops::write_new(&tmp, f)?;
    }
    if let Some(owner) = owner {
        fsops::prepare_supervise(&tmp, "", owner)?;
        if tmp.join("log").is_dir() {
            fsops::prepare_supervise(&tmp, "log", owner)?;
        }
    }
    if let Some(dir) = &slot.log_dir {
        fsops::ensure_log_dir(dir, owner)?;
    }
    Ok(tmp)
}

fn update(
    scandir: &Path,
    slot: &RenderedSlot,
    owner: Option<UidGid>,
    changed: &[PathBuf],
    removed: &[PathBuf],
    restart: bool,
) -> Result<(), ReconcileError> {
    let dir = scandir.join(&slot.name);
    for f in slot
        .files
        .iter()
        .filter(|f| changed.iter().any(|c| *c == f.path))
    {
        fsops::write_file(&dir, f)?;
    }
    for rel in removed {
        fsops::remove_file(&dir, rel)?;
    }
    if let Some(log) = &slot.log_dir {
        fsops::ensure_log_dir(log, owner)?;
    }
    // The user may be what changed: its supervisor dirs follow.
    if let Some(owner) = owner {
        fsops::prepare_supervise(&dir, "", owner)?;
        if dir.join("log").is_dir() {
            fsops::prepare_supervise(&dir, "log", owner)?;
        }
    }
    let up = status::read_slot(&dir).map(|s| s.up).unwrap_or(false);
    if restart && up {
        control::send(&dir, &[Command6::Restart])?;
    }
    Ok(())
}

/// Down (bounded wait), then out of s6-svscan's sight; the caller prunes.
fn delete(scandir: &Path, name: &str, opts: &ApplyOptions) -> Result<(), ReconcileError> {
    let dir = scandir.join(name);
    match control::send(&dir, &[Command6::Down]) {
        Ok(()) | Err(control::ControlError::NotSupervised { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let up = || status::read_slot(&dir).is_ok_and(|s| s.up);
    let wait_down = |limit: Duration| {
        let end = Instant::now() + limit;
        while up() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_down(opts.stop_timeout);
    // A process that ignores its down signal must not outlive its slot,
    // unsupervised: kill it, as s6's timeout-kill would.
    if up() {
        let _ = control::send(&dir, &[Command6::Kill]);
        wait_down(KILL_WAIT);
    }
    let hidden = scandir.join(format!("{DELETE_PREFIX}{name}-{}", std::process::id()));
    fs::rename(&dir, &hidden).map_err(io(&dir))
}

/// After SIGKILL, how long a deleted slot's process may take to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Test hook: widen the window between building a slot and renaming it, so
/// a test can kill -9 an apply in the middle. Unset in production.
fn test_pause(var: &str) {
    if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}
