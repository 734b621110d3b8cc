//! From the config dir to the slots reconcile should make: load and
//! validate, gather the autostart facts (container env, remembered desired
//! states), render. Everything here happens before the first write.

use crate::config::{self, LoadError, Model};
use crate::render::{render_all, RenderEnv, RenderedSlot};
use crate::s6::health;
use crate::state;
use std::path::Path;

pub struct Prepared {
    pub model: Model,
    pub desired: Vec<RenderedSlot>,
    /// Skipped instances, unusable state files: reported, not fatal.
    pub warnings: Vec<String>,
}

pub fn prepare(config_dir: &Path) -> Result<Prepared, LoadError> {
    // Includes instances registered at runtime (`svctl register`).
    let validated = config::load(config_dir, &state::LiveInstances)?;
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    let desired = desired(&validated.model, &mut warnings);
    Ok(Prepared {
        model: validated.model,
        desired,
        warnings,
    })
}

/// The slots reconcile should make of a loaded model.
pub fn desired(model: &Model, warnings: &mut Vec<String>) -> Vec<RenderedSlot> {
    let facts = health::start_facts(model, warnings);
    render_all(model, &RenderEnv::detect(), &facts)
}
