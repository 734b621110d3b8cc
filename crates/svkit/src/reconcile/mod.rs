//! Reconcile: make the scandir match the rendered model. One algorithm, three
//! faces: `svctl plan` prints the plan, `svctl apply` and the boot hook
//! `svkit-reconcile` carry it out.
//!
//! Data flows one way: desired slots (from render) + the live scandir →
//! [`plan`] → [`apply`] → disk → s6. Slots svkit did not make (no `.svkit`
//! marker) are never touched.

mod apply;
mod desired;
mod dirfd;
mod error;
#[cfg(test)]
mod fastpath_tests;
mod fsops;
mod inputs;
mod live;
mod lock;
mod memo;
mod plan;
mod record;
mod seal;

pub use apply::lookup_user;
pub use apply::{apply, apply_prepared, ApplyOptions, Outcome};
pub use desired::{prepare, start_facts, Prepared};
pub use error::ReconcileError;
pub use fsops::{check_log_dir, check_log_dirs, ensure_log_dir};
pub use inputs::Inputs;
pub use live::{is_ours, MARKER};
pub use lock::ScandirLock;
pub use memo::{confirm_noop, Noop, MEMO, NOOP_INFO};
pub use plan::{plan, Action, SlotPlan};

use std::path::PathBuf;

/// One slot as it should be on disk: every file svkit manages in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredSlot {
    pub name: String,
    /// Paths relative to the slot dir; all owned by root.
    pub files: Vec<DesiredFile>,
    /// The slot's user: its `supervise/`, `event/` and log dir are theirs.
    pub user: Option<String>,
    /// Created (owned by `user`) before the logger first starts.
    pub log_dir: Option<PathBuf>,
    /// Whether the slot is wanted up now (no `down` file).
    pub want_up: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredFile {
    pub rel: PathBuf,
    pub bytes: Vec<u8>,
    pub mode: u32,
}

/// Temp dirs for atomic creates: `.`-led so s6-svscan ignores them.
pub const TEMP_PREFIX: &str = ".svkit-tmp-";
/// Slots being deleted are first renamed out of s6-svscan's sight.
pub const DELETE_PREFIX: &str = ".svkit-del-";
