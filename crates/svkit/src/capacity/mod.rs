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
//! `services.d` once the cont-init hooks are done ([`count`]); against
//! the running s6-svscan's limit ([`limit`]).

pub mod blocked;
pub mod count;
pub mod limit;

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

pub use limit::{Limit, Source};

/// s6-overlay 3.2.3.0's own services in `/run/service`, before any of an
/// image's: `s6-linux-init-shutdownd`, `s6rc-fdholder`,
/// `s6rc-oneshot-runner` (4 with `S6_LOGGING` 1 or 2: `s6-svscan-log`).
pub const OVERLAY_OWN: u32 = 3;

/// The services a config needs in one supervision tree.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        let mut need = Need {
            slots: 0,
            loggers: 0,
            others: Vec::new(),
        };
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
        if self.total() > limit.max {
            Err(TooManyServices { need: self, limit })
        } else {
            Ok(Fit { need: self, limit })
        }
    }
}

impl fmt::Display for Need {
    /// `602 slots, 600 loggers, 2 others in /run/service`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u32, one: &str, many: &str| {
            format!("{} {}", thousands(n), if n == 1 { one } else { many })
        };
        write!(
            f,
            "{}, {}",
            plural(self.slots, "slot", "slots"),
            plural(self.loggers, "logger", "loggers")
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyServices {
    pub need: Need,
    pub limit: Limit,
}

impl fmt::Display for TooManyServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the config needs {} s6 services ({}); s6-svscan here supervises at most {}, \
             and past that starts none of the new ones: declare fewer slots, or fewer with \
             `log` (each logger is a service); s6-overlay runs s6-svscan without -C and no \
             setting raises the limit",
            thousands(self.need.total()),
            self.need,
            self.limit
        )
    }
}

impl std::error::Error for TooManyServices {}

/// Why a tree's need could not be counted, or that it does not fit.
#[derive(Debug)]
pub enum CapacityError {
    TooMany(TooManyServices),
    /// s6-svscan's scan stops at these entries ([`blocked`]): nothing new
    /// would start.
    ScanBlocked {
        scandir: PathBuf,
        blockers: Vec<blocked::Blocker>,
    },
    /// The scandir could not be read.
    Io {
        path: PathBuf,
        source: io::Error,
    },
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityError::TooMany(e) => e.fmt(f),
            CapacityError::ScanBlocked { scandir, blockers } => {
                let what: Vec<String> = blockers
                    .iter()
                    .map(|b| {
                        format!(
                            "{} ({})",
                            scandir.join(&b.name).display(),
                            crate::msg::strerror(&b.why)
                        )
                    })
                    .collect();
                write!(
                    f,
                    "s6-svscan cannot stat {}: its scan stops there and starts no new service                      until it is gone (a dangling symlink?); remove it, then try again",
                    what.join(", ")
                )
            }
            CapacityError::Io { path, source } => write!(
                f,
                "unable to read {}: {}",
                path.display(),
                crate::msg::strerror(source)
            ),
        }
    }
}

impl std::error::Error for CapacityError {}

/// What the `(name, has a logger)` slots need in the tree of `scandir`,
/// besides what is in it, and what `services.d` (under `/`) will add
/// when `scandir` is s6-overlay's.
pub fn need_in<'a>(
    scandir: &Path,
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
) -> Result<Need, CapacityError> {
    let declared: BTreeSet<&str> = slots.clone().into_iter().map(|(n, _)| n).collect();
    let mut need = Need::of_slots(slots);
    let (n, present) = count::foreign(scandir, &declared).map_err(|source| CapacityError::Io {
        path: scandir.to_path_buf(),
        source,
    })?;
    need.others.push(Others {
        count: n,
        place: Place::Scandir(scandir.to_path_buf()),
    });
    if scandir == Path::new(count::OVERLAY_SCANDIR) {
        let profile = crate::container::setting("S6_RUNTIME_PROFILE");
        let dir = count::services_d(Path::new("/"), profile.as_deref());
        let n = count::legacy(&dir, &present, &declared);
        if n > 0 {
            need.others.push(Others {
                count: n,
                place: Place::ServicesD(dir),
            });
        }
    }
    Ok(need)
}

/// [`need_in`] checked against the running s6-svscan's limit, in a
/// scandir whose scan nothing stops ([`blocked`]).
pub fn check_in<'a>(
    scandir: &Path,
    slots: impl IntoIterator<Item = (&'a str, bool)> + Clone,
) -> Result<Fit, CapacityError> {
    let blockers = blocked::blockers(scandir).map_err(|source| CapacityError::Io {
        path: scandir.to_path_buf(),
        source,
    })?;
    if !blockers.is_empty() {
        return Err(CapacityError::ScanBlocked {
            scandir: scandir.to_path_buf(),
            blockers,
        });
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
    let declared: BTreeSet<&str> = slots.clone().into_iter().map(|(n, _)| n).collect();
    let mut need = Need::of_slots(slots);
    need.others.push(Others {
        count: OVERLAY_OWN,
        place: Place::OverlayAssumed,
    });
    let profile = crate::container::setting("S6_RUNTIME_PROFILE");
    let dir = count::services_d(root, profile.as_deref());
    let n = count::legacy(&dir, &BTreeSet::new(), &declared);
    if n > 0 {
        need.others.push(Others {
            count: n,
            place: Place::ServicesD(dir),
        });
    }
    need.check(Limit::assumed(why))
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
