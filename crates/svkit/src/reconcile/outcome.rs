//! What an apply did, for the audit lines on stdout, and what it could not
//! do, for the messages on stderr.

use super::error::{ReconcileError, SlotError};
use super::plan::SlotPlan;
use crate::msg::{self, Fatal};
use std::path::Path;

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
