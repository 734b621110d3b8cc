//! Reconcile: make the scandir match the rendered model. One algorithm, three
//! faces: `svctl plan` prints the plan, `svctl apply` and the boot hook
//! `svkit-reconcile` carry it out.
//!
//! Data flows one way, one file a step: [`prepare`] (`prepare.rs`: load,
//! validate, render: one `RenderedSlot` per slot) → [`plan`] (`plan.rs`,
//! reading the disk through `live.rs`: each managed file's bytes, mode and
//! owner against the render) → [`apply`] (`apply.rs`, under `lock.rs`:
//! check what would fail (`preflight.rs`, with s6-svscan's service
//! limit from `crate::capacity`), write what differs through
//! `fsops.rs` and `logdir.rs`, each write recorded in `journal.rs` to be
//! undone if a later one fails, then tell s6). Nothing is cached between
//! runs. Slots svkit did not make (no `.svkit` marker) are never touched.

mod apply;
mod error;
mod fsops;
mod journal;
mod live;
mod lock;
mod logdir;
mod plan;
mod preflight;
mod prepare;

pub use apply::{apply, ApplyOptions, ApplyReport, Scope};
pub use error::{check_tree_user, ReconcileError, SlotError};
pub use lock::ScandirLock;
pub use plan::{plan, Action, SlotPlan};
pub use preflight::{fits, lookup_user};
pub use prepare::{desired, prepare, prepare_for, Prepared};

/// Temp dirs for atomic creates: `.`-led so s6-svscan ignores them.
pub const TEMP_PREFIX: &str = ".svkit-tmp-";
/// Slots being deleted are first renamed out of s6-svscan's sight.
pub const DELETE_PREFIX: &str = ".svkit-del-";
