//! Reconcile: make the scandir match the rendered model. One algorithm, three
//! faces: `svctl plan` prints the plan, `svctl apply` and the boot hook
//! `svkit-reconcile` carry it out.
//!
//! Data flows one way, one file a step: [`prepare`] (`prepare.rs`: a
//! config the caller loaded, checked and rendered: one `RenderedSlot` per
//! slot) → [`plan`] (`plan.rs`,
//! reading the disk through `live.rs`: each managed file's bytes, mode and
//! owner against the render) → [`apply`] (`apply.rs`, under `lock.rs`:
//! check what would fail (`preflight.rs`, with s6-svscan's service
//! limit from `crate::capacity`), write what differs through
//! `fsops.rs` and `logdir.rs`, each write recorded in `journal.rs` to be
//! undone if a later one fails, then tell s6). Nothing is cached between
//! runs. Slots svkit did not make (no `.svkit` marker) are never touched.

mod apply;
#[cfg(test)]
mod apply_tests;
mod error;
mod fsops;
mod journal;
mod live;
mod lock;
mod logdir;
mod outcome;
mod plan;
mod preflight;
mod prepare;
mod treeuser;

pub use apply::{apply, ApplyOptions, Scope};
pub use error::{ReconcileError, SlotError};
pub use lock::ScandirLock;
pub use outcome::ApplyReport;
pub use plan::{plan, Action, SlotPlan};
pub use preflight::{fits, lookup_user};
pub use prepare::{desired, prepare, Prepared};
pub use treeuser::check_tree_user;

/// Temp dirs for atomic creates: `.`-led so s6-svscan ignores them.
pub const TEMP_PREFIX: &str = ".svkit-tmp-";
/// Slots being deleted are first renamed out of s6-svscan's sight.
pub const DELETE_PREFIX: &str = ".svkit-del-";
