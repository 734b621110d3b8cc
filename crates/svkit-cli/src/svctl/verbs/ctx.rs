//! What the slot verbs share: the scandir and the config (when it loads),
//! as `svkit::slot::snapshot::Slots`, whose rules decide the rest.

use std::path::{Path, PathBuf};

use svkit::config::Model;
use svkit::msg::{exit::svctl::UNKNOWN_SLOT, Fatal};
use svkit::slot::snapshot::{Slots, SnapshotError};

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

    /// The slots as `svkit` reads and acts on them.
    pub fn slots(&self) -> Slots<'_> {
        Slots {
            scandir: &self.scandir,
            model: self.model.as_ref(),
        }
    }

    /// Named slots, or every svkit slot with `all`; an unknown name is fatal
    /// (exit 4) before anything is done.
    pub fn resolve(&self, names: &[String], all: bool) -> Result<Vec<String>, Fatal> {
        if all {
            return (self.slots().list(false)).map_err(|e| unreadable_scandir(&self.scandir, e));
        }
        match names.iter().find(|n| !self.slots().known(n)) {
            Some(n) => Err(unknown(n)),
            None => Ok(names.to_vec()),
        }
    }
}

/// Records in `state_dir` the config no longer declares a name for that
/// cannot be looked at: a warning, never a reason to fail.
pub fn warn_orphans(e: &dyn std::fmt::Display) {
    svkit::msg::warn(format_args!(
        "unable to look for records of names the config no longer declares: {e}"
    ));
}

/// Those records, said in one line when there are any (`svctl plan`, the
/// boot hook): nothing `apply` changes, a note on stderr.
pub fn orphans(model: &Model) -> Vec<svkit::state::Orphan> {
    let orphans = svkit::state::orphans(model).unwrap_or_else(|e| {
        warn_orphans(&e);
        Vec::new()
    });
    if let Some(note) = svkit::state::note(&orphans) {
        svkit::msg::warn(note);
    }
    orphans
}

pub fn unknown(name: &str) -> Fatal {
    Fatal::new(
        UNKNOWN_SLOT,
        format!("unknown slot {name}"),
        "not in the scandir",
    )
}

/// The scandir itself cannot be read (e.g. it does not exist).
pub fn unreadable_scandir(scandir: &Path, source: std::io::Error) -> Fatal {
    let path = scandir.to_path_buf();
    SnapshotError::Scandir { path, source }.into()
}

/// Verbs that change the scandir or the registry run as the user the
/// supervision tree runs as: root in an image that boots as root, the
/// container's user in a non-root one. Checked before anything is written.
pub fn require_tree_user(scandir: &Path, what: &str) -> Result<(), Fatal> {
    svkit::reconcile::check_tree_user(scandir, nix::unistd::geteuid().as_raw())
        .map_err(|e| Fatal::system(format!("unable to {what}"), e))
}
