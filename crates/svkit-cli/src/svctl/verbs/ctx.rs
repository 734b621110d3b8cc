//! What the slot verbs share: the scandir and the config (when it loads).
//! What a slot's state means is `svkit::slot::health`'s to decide.

use std::path::{Path, PathBuf};

use svkit::config::{Model, Slot};
use svkit::control::Slots;
use svkit::msg::{exit::svctl::UNKNOWN_SLOT, Fatal};
use svkit::slot::health::Judge;

use crate::config::Policy;
use crate::svctl::args::WhereArgs;

pub struct Ctx {
    pub scandir: PathBuf,
    /// None when the config could not be loaded (a warning was printed):
    /// status still works, without log dirs and remembered states.
    pub model: Option<Model>,
}

impl Ctx {
    /// Loads the config leniently ([`Policy::Lenient`]), for verbs that
    /// only need the scandir.
    pub fn load(at: &WhereArgs) -> Result<Ctx, Fatal> {
        let model = crate::config::load(&at.config.dir(), Policy::Lenient)?.map(|v| v.model);
        Ok(Ctx {
            scandir: at.scandir(),
            model,
        })
    }

    pub fn dir(&self, slot: &str) -> PathBuf {
        self.scandir.join(slot)
    }

    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.model.as_ref().and_then(|m| m.slot(name))
    }

    /// Slots in the scandir, sorted: svkit's (with the marker) or all.
    pub fn list(&self, all: bool) -> Result<Vec<String>, Fatal> {
        let names = svkit::s6::services(&self.scandir)
            .map_err(|e| unreadable_scandir(&self.scandir, &e))?;
        // A service dir, or a symlink to one (services.d).
        Ok((names.into_iter())
            .filter(|n| {
                let p = self.dir(n);
                p.is_dir() && (all || svkit::slot::owner::is_ours(&p))
            })
            .collect())
    }

    /// Named slots, or every svkit slot with `all`; an unknown name is fatal
    /// (exit 4) before anything is done.
    pub fn resolve(&self, names: &[String], all: bool) -> Result<Vec<String>, Fatal> {
        if all {
            return self.list(false);
        }
        for n in names {
            if !self.known(n) {
                return Err(unknown(n));
            }
        }
        Ok(names.to_vec())
    }

    pub fn known(&self, name: &str) -> bool {
        !name.is_empty() && !name.starts_with('.') && !name.contains('/') && self.dir(name).is_dir()
    }

    /// The library's rules (desired, failed) with this config and scandir.
    pub fn judge(&self) -> Judge<'_> {
        self.slots().judge()
    }

    /// The slots as `svkit::control` acts on them.
    pub fn slots(&self) -> Slots<'_> {
        Slots {
            scandir: &self.scandir,
            model: self.model.as_ref(),
        }
    }

    /// The records in `state_dir` the config no longer declares a name
    /// for (none without a config); one that cannot be looked at is a
    /// warning, never a reason for a view to fail.
    pub fn orphans(&self) -> Vec<svkit::state::Orphan> {
        self.model.as_ref().map_or_else(Vec::new, orphans_of)
    }

    /// The slot's log dir, from the config.
    pub fn log_dir(&self, name: &str) -> Option<&str> {
        self.slot(name)
            .and_then(|s| s.log.as_ref())
            .map(|l| l.dir.as_str())
    }
}

/// [`Ctx::orphans`] of a loaded config.
pub fn orphans_of(model: &Model) -> Vec<svkit::state::Orphan> {
    svkit::state::orphans(model).unwrap_or_else(|e| {
        svkit::msg::warn(format_args!(
            "unable to look for records of names the config no longer declares: {e}"
        ));
        Vec::new()
    })
}

pub fn unknown(name: &str) -> Fatal {
    Fatal::new(
        UNKNOWN_SLOT,
        format!("unknown slot {name}"),
        "not in the scandir",
    )
}

/// The scandir itself cannot be read (e.g. it does not exist).
pub fn unreadable_scandir(scandir: &Path, e: &std::io::Error) -> Fatal {
    Fatal::io(format!("unable to read scandir {}", scandir.display()), e)
}

/// Verbs that change the scandir or the registry run as the user the
/// supervision tree runs as: root in an image that boots as root, the
/// container's user in a non-root one. Checked before anything is written.
pub fn require_tree_user(scandir: &Path, what: &str) -> Result<(), Fatal> {
    svkit::reconcile::check_tree_user(scandir, nix::unistd::geteuid().as_raw())
        .map_err(|e| Fatal::system(format!("unable to {what}"), e))
}
