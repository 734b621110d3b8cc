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

/// Load, check and render for the tree of `scandir`. When that tree runs as
/// root, every slot's user must exist here (slots drop to it with
/// `s6-setuidgid`): an unknown one is a config error at its `user` key,
/// found before anything is written.
pub fn prepare(config_dir: &Path, scandir: &Path) -> Result<Prepared, LoadError> {
    // Includes instances registered at runtime (`svctl register`).
    let validated = config::load(config_dir, &state::LiveInstances)?;
    if RenderEnv::detect(Some(scandir)).as_root {
        let unknown = config::users::unknown_users(&validated.model, &config::users::SystemUsers);
        if !unknown.is_empty() {
            return Err(LoadError::Invalid(unknown));
        }
    }
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    let desired = desired(&validated.model, scandir, &mut warnings);
    Ok(Prepared {
        model: validated.model,
        desired,
        warnings,
    })
}

/// The slots reconcile should make of a loaded model, for the tree of
/// `scandir`.
pub fn desired(model: &Model, scandir: &Path, warnings: &mut Vec<String>) -> Vec<RenderedSlot> {
    let facts = health::start_facts(model, warnings);
    render_all(model, &RenderEnv::detect(Some(scandir)), &facts)
}
