//! s6-svscan's service limit: does a config fit, before anything is
//! written?
//!
//! s6-svscan supervises at most `-C` services (1,000 by default; a slot
//! with a logger is two, the slot and its `log/`). Past that its scan
//! stops at the first service it cannot take and retries a minute later,
//! and again: nothing new starts, not only the services past the limit.
//! So a config that does not fit is refused whole, by every verb that
//! would write it (`apply`, `register`, the boot hook, a redirect) and
//! every one that checks it (`check`, `plan`).
//!
//! What counts: the config's slots and their loggers, everything else in
//! the scandir that svkit did not make (s6-overlay's own, an image's
//! s6-rc longruns), and what s6-overlay will still link in from
//! `services.d` once the cont-init hooks are done; against s6-svscan's
//! limit ([`Limit`]). Both are read as s6-svscan reads its scandir:
//! `.`-led names skipped, symlinks followed, a service and its `log/` one
//! each.
//!
//! A name s6-svscan cannot stat (a dangling symlink: a `services.d` link
//! whose target went away, a removed volume) is not skipped: its scan
//! stops there, says `unable to stat NAME` once, and is tried again
//! a few seconds later, and again. Until the name is gone, no service
//! after it starts, whichever was added (seen on s6-overlay 3.2.3.0's
//! s6). So svkit refuses to add slots it knows would not start, and names
//! the entry to remove ([`blockers`]).

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::container::Supervision;
use crate::msg::strerror;
use crate::slot::owner::is_ours;

/// s6-overlay 3.2.3.0's own services in `/run/service`, before any of an
/// image's: `s6-linux-init-shutdownd`, `s6rc-fdholder`,
/// `s6rc-oneshot-runner` (4 with `S6_LOGGING` 1 or 2: `s6-svscan-log`).
pub const OVERLAY_OWN: u32 = 3;

/// s6-overlay's scandir, which `services-up` links `services.d` into.
pub const OVERLAY_SCANDIR: &str = "/run/service";

/// s6-svscan skips a name longer than its `-L` (default 251): no service.
const NAME_MAX: usize = 251;

/// s6-svscan's default `-C`, [`crate::s6::SVSCAN_MAX`]: the limit.
pub use crate::s6::SVSCAN_MAX as DEFAULT_MAX;

/// s6-svscan's limit, [`DEFAULT_MAX`], and whether it is assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// Why the default is assumed, when no s6-overlay runs here; `None`:
    /// s6-overlay's s6-svscan, PID 1, run without `-C`.
    pub assumed: Option<String>,
}

impl Limit {
    /// The default, assumed for `why`.
    pub fn assumed(why: impl Into<String>) -> Limit {
        Limit {
            assumed: Some(why.into()),
        }
    }

    /// The limit of the s6-svscan supervising this container; assumed,
    /// saying why, when s6-overlay does not run it.
    pub fn running() -> Limit {
        match crate::container::supervision() {
            Supervision::Overlay => Limit { assumed: None },
            Supervision::Init(_) => Limit::assumed("svkit-init runs s6-svscan with its default"),
            Supervision::Missing(why) => Limit::assumed(format!("no s6-overlay here: {why}")),
        }
    }
}

impl fmt::Display for Limit {
    /// `1,000 (its default: no -C in /proc/1/cmdline)`-like, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = thousands(DEFAULT_MAX);
        match &self.assumed {
            None => write!(f, "{max} (its default: no -C in /proc/1/cmdline)"),
            Some(why) => write!(f, "{max} (its default, assumed; {why})"),
        }
    }
}

/// The services a config needs in one supervision tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Need {
    pub slots: u32,
    pub loggers: u32,
    /// Everything else, by where it was found.
    pub others: Vec<Others>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Others {
    pub count: u32,
    pub place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the scandir, not made by svkit.
    Scandir(PathBuf),
    /// In a `services.d`, not linked into the scandir yet.
    ServicesD(PathBuf),
    /// s6-overlay's own, assumed ([`OVERLAY_OWN`]): no scandir to read.
    OverlayAssumed,
}

impl Need {
    /// The slots and loggers of `(name, has a logger)` pairs, nothing else.
    pub fn of_slots<'a>(slots: impl IntoIterator<Item = (&'a str, bool)>) -> Need {
        let mut need = Need::default();
        for (_, logged) in slots {
            need.slots = need.slots.saturating_add(1);
            need.loggers = need.loggers.saturating_add(u32::from(logged));
        }
        need
    }

    pub fn total(&self) -> u32 {
        self.others
            .iter()
            .fold(self.slots.saturating_add(self.loggers), |t, o| {
                t.saturating_add(o.count)
            })
    }

    /// Refused when over `limit`.
    pub fn check(self, limit: Limit) -> Result<Fit, TooManyServices> {
        if self.total() > DEFAULT_MAX {
            Err(TooManyServices { need: self, limit })
        } else {
            Ok(Fit { need: self, limit })
        }
    }
}

impl fmt::Display for Need {
    /// `602 slots, 600 loggers, 2 others in /run/service`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |n: u32, one: &str| format!("{} {one}{}", thousands(n), if n == 1 { "" } else { "s" });
        write!(
            f,
            "{}, {}",
            plural(self.slots, "slot"),
            plural(self.loggers, "logger")
        )?;
        for o in &self.others {
            let n = thousands(o.count);
            match &o.place {
                Place::Scandir(d) => write!(f, ", {n} others in {}", d.display())?,
                Place::ServicesD(d) => write!(f, ", {n} to come from {}", d.display())?,
                Place::OverlayAssumed => write!(f, ", {n} of s6-overlay's own, assumed")?,
            }
        }
        Ok(())
    }
}

/// A config that fits: what it needs, of how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    pub need: Need,
    pub limit: Limit,
}

impl fmt::Display for Fit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} s6 services needed ({}); s6-svscan supervises at most {}",
            thousands(self.need.total()),
            self.need,
            self.limit
        )
    }
}

/// A config that does not fit in s6-svscan's limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the config needs {} s6 services ({need}); s6-svscan here supervises at most {limit}, \
     and past that starts none of the new ones: declare fewer slots, or fewer with \
     `log` (each logger is a service); s6-overlay runs s6-svscan without -C and no \
     setting raises the limit",
    thousands(need.total())
)]
pub struct TooManyServices {
    pub need: Need,
    pub limit: Limit,
}

/// One entry s6-svscan cannot stat, and why.
#[derive(Debug)]
pub struct Blocker {
    pub name: String,
    pub why: io::Error,
}

/// Why a tree's need could not be counted, or that it does not fit.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    #[error(transparent)]
    TooMany(TooManyServices),
    /// s6-svscan's scan stops at these entries ([`blockers`]): nothing new
    /// would start.
    #[error(
        "s6-svscan cannot stat {}: its scan stops there and starts no new service \
         until it is gone (a dangling symlink?); remove it, then try again",
        blocked(scandir, blockers)
    )]
    ScanBlocked {
        scandir: PathBuf,
        blockers: Vec<Blocker>,
    },
    /// The scandir could not be read.
    #[error("unable to read {}: {}", path.display(), strerror(source))]
    Io { path: PathBuf, source: io::Error },
}

/// `/run/service/a (No such file or directory), ...`.
fn blocked(scandir: &Path, blockers: &[Blocker]) -> String {
    let each = blockers
        .iter()
        .map(|b| format!("{} ({})", scandir.join(&b.name).display(), strerror(&b.why)));
    each.collect::<Vec<_>>().join(", ")
}

fn unreadable(scandir: &Path) -> impl FnOnce(io::Error) -> CapacityError + '_ {
    |source| CapacityError::Io {
        path: scandir.to_path_buf(),
        source,
    }
}

/// The visible names in `scandir` that s6-svscan cannot stat (following
/// symlinks, as it does). A service's `log` that is missing is fine (s6
/// only pairs what is there); one that cannot be stated otherwise blocks.
pub fn blockers(scandir: &Path) -> io::Result<Vec<Blocker>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(scandir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        match fs::metadata(entry.path()) {
            Err(why) => out.push(Blocker { name, why }),
            Ok(m) if m.is_dir() => match fs::metadata(entry.path().join("log")) {
                Err(why) if why.kind() != io::ErrorKind::NotFound => out.push(Blocker {
                    name: format!("{name}/log"),
                    why,
                }),
                _ => {}
            },
            Ok(_) => {}
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A dir s6-svscan would supervise: 1, plus 1 for its `log/`.
fn services_of(dir: &Path) -> u32 {
    1 + u32::from(crate::slot::logger::has_logger(dir))
}

/// Names in `dir` that s6-svscan would supervise (dirs, symlinks to dirs).
fn service_dirs(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        // A name that is not UTF-8 is still a service to s6-svscan.
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if !name.starts_with('.') && name.len() <= NAME_MAX && path.is_dir() {
            out.push((name, path));
        }
    }
    Ok(out)
}

/// In `scandir`: the services not made by svkit and not named like one
/// of `declared` (svkit's own are replaced by the config's, or deleted),
/// and every visible name (made by svkit or not).
pub fn foreign(scandir: &Path, declared: &BTreeSet<&str>) -> io::Result<(u32, BTreeSet<String>)> {
    let mut n = 0;
    let mut names = BTreeSet::new();
    for (name, path) in service_dirs(scandir)? {
        if !declared.contains(name.as_str()) && !is_ours(&path) {
            n += services_of(&path);
        }
        names.insert(name);
    }
    Ok((n, names))
}

/// The `services.d` that s6-overlay's `services-up` copies from, under
/// `root`: `/etc/cont-profile.d/PROFILE/services.d` with
/// `S6_RUNTIME_PROFILE`, else `/etc/services.d`.
pub fn services_d(root: &Path, profile: Option<&str>) -> PathBuf {
    let etc = root.join("etc");
    match profile.filter(|p| !p.is_empty()) {
        Some(p) => etc.join("cont-profile.d").join(p).join("services.d"),
        None => etc.join("services.d"),
    }
}

/// The services of `dir` (a `services.d`) not yet in the scandir
/// (`present`) nor named like a slot: what `services-up` will still add.
/// An unreadable or missing dir adds none, as `services-up` finds none.
pub fn legacy(dir: &Path, present: &BTreeSet<String>, declared: &BTreeSet<&str>) -> u32 {
    service_dirs(dir)
        .unwrap_or_default()
        .iter()
        .filter(|(name, _)| !present.contains(name) && !declared.contains(name.as_str()))
        .map(|(_, path)| services_of(path))
        .sum()
}

/// What the `(name, has a logger)` slots need besides `others`, with what
/// the `services.d` under `root` (if any) will still add: the entries not
/// `present` in the scandir yet.
fn need_of<'a>(
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
    others: Others,
    root: Option<&Path>,
    present: &BTreeSet<String>,
) -> Need {
    let mut need = Need::of_slots(slots.clone());
    need.others.push(others);
    if let Some(root) = root {
        let profile = crate::container::setting("S6_RUNTIME_PROFILE");
        let dir = services_d(root, profile.as_deref());
        let count = legacy(&dir, present, &names(slots));
        if count > 0 {
            let place = Place::ServicesD(dir);
            need.others.push(Others { count, place });
        }
    }
    need
}

fn names<'a>(slots: impl IntoIterator<Item = (&'a str, bool)>) -> BTreeSet<&'a str> {
    slots.into_iter().map(|(n, _)| n).collect()
}

/// What the `(name, has a logger)` slots need in the tree of `scandir`,
/// besides what is in it, and what `services.d` (under `/`) will add
/// when `scandir` is s6-overlay's.
pub fn need_in<'a>(
    scandir: &Path,
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
) -> Result<Need, CapacityError> {
    let declared = names(slots.clone());
    let (count, present) = foreign(scandir, &declared).map_err(unreadable(scandir))?;
    let place = Place::Scandir(scandir.to_path_buf());
    let overlay = (scandir == Path::new(OVERLAY_SCANDIR)).then_some(Path::new("/"));
    let others = Others { count, place };
    Ok(need_of(slots, others, overlay, &present))
}

/// [`need_in`] checked against the running s6-svscan's limit, in a
/// scandir whose scan nothing stops ([`blockers`]).
pub fn check_in<'a>(
    scandir: &Path,
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
) -> Result<Fit, CapacityError> {
    let blockers = blockers(scandir).map_err(unreadable(scandir))?;
    if !blockers.is_empty() {
        let scandir = scandir.to_path_buf();
        return Err(CapacityError::ScanBlocked { scandir, blockers });
    }
    need_in(scandir, slots)?
        .check(Limit::running())
        .map_err(CapacityError::TooMany)
}

/// With no s6-overlay running (a build host, an image build): the slots,
/// s6-overlay's own assumed, and the `services.d` under `root`, against
/// the default limit, assumed.
pub fn check_assumed<'a>(
    root: &Path,
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
    why: &str,
) -> Result<Fit, TooManyServices> {
    let (count, place) = (OVERLAY_OWN, Place::OverlayAssumed);
    need_of(slots, Others { count, place }, Some(root), &BTreeSet::new()).check(Limit::assumed(why))
}

/// `1204` as `1,204`.
pub fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
