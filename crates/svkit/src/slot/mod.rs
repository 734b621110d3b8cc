//! svkit's rules about its slots, decided here and nowhere else, on top of
//! s6's protocol ([`crate::s6`]): what a slot's state means ([`health`]),
//! the records its scripts and watchers leave ([`end`], [`liveness`],
//! [`logger`]), whose it is ([`owner`]), and the views of it: the
//! snapshot of every slot ([`snapshot`]) that status ([`status_fmt`]),
//! metrics ([`metrics`]) and waits ([`wait`]) read, what each costs
//! ([`usage`]), and events ([`events`]). Render, reconcile and svctl all
//! read these rules from here.
//!
//! May import config, state, stray and claim (the inputs of the rules),
//! container and s6; never render, reconcile or anything that drives slots.

pub mod end;
pub mod events;
pub mod health;
pub mod job;
pub mod liveness;
pub mod logger;
pub mod metrics;
pub mod snapshot;
pub mod status_fmt;
pub mod usage;
pub mod wait;

/// Whose a slot and a supervision tree are: svkit's marker in every slot it
/// renders (slots without it are never touched), and the user a tree runs
/// as, read from its scandir's owner.
pub mod owner {
    use std::fs;
    use std::os::unix::fs::MetadataExt as _;
    use std::path::Path;

    /// Name of the marker file in every slot svkit renders.
    pub const MARKER: &str = ".svkit";

    /// Whether svkit made the slot in `slot` (its [`MARKER`] is a regular file).
    pub fn is_ours(slot: &Path) -> bool {
        fs::symlink_metadata(slot.join(MARKER))
            .map(|m| m.file_type().is_file())
            .unwrap_or(false)
    }

    /// Whether the supervision tree of `scandir` runs as root: the scandir is
    /// made by whoever boots the tree (s6-overlay's preinit as root, or a
    /// non-root tree's own user), so its owner tells. A scandir that does not
    /// exist yet is a root tree's, as in every image that boots `/init` as root.
    pub fn tree_is_root(scandir: &Path) -> bool {
        tree_owner(scandir).is_none()
    }

    /// The user and group a non-root supervision tree of `scandir` runs as
    /// (`None`: a root tree, or no tree yet). What root writes for such a
    /// tree (a remembered state) is handed to them, not to the config's
    /// `user`, which the tree's processes are not.
    pub fn tree_owner(scandir: &Path) -> Option<(u32, u32)> {
        let m = fs::metadata(scandir).ok()?;
        (m.uid() != 0).then(|| (m.uid(), m.gid()))
    }
}
