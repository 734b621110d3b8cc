//! From the config dir to the slots reconcile should make: load and
//! validate, gather the autostart facts (container env, remembered desired
//! states), render. Everything here happens before the first write.

use super::{DesiredFile, DesiredSlot};
use crate::config::{self, LoadError, Model};
use crate::render::{self, RenderEnv};
use crate::s6::health;
use crate::state;
use std::path::{Path, PathBuf};

pub struct Prepared {
    pub model: Model,
    pub desired: Vec<DesiredSlot>,
    /// Skipped instances, unusable state files: reported, not fatal.
    pub warnings: Vec<String>,
}

pub fn prepare(config_dir: &Path) -> Result<Prepared, LoadError> {
    // Includes instances registered at runtime (`svctl register`).
    let validated = config::load(config_dir, &state::LiveInstances)?;
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    let model = validated.model;
    let facts = health::start_facts(&model, &mut warnings);
    let rendered = render::render_all(&model, &RenderEnv::detect(), &facts);
    let desired = model
        .slots
        .iter()
        .zip(rendered)
        .map(|(slot, r)| DesiredSlot {
            name: r.name,
            files: r
                .files
                .into_iter()
                .map(|f| DesiredFile {
                    rel: PathBuf::from(f.path),
                    bytes: f.contents,
                    mode: f.mode,
                })
                .collect(),
            user: slot.run_as().map(str::to_string),
            log_dir: slot.log.as_ref().map(|l| PathBuf::from(&l.dir)),
            want_up: r.up,
        })
        .collect();
    Ok(Prepared {
        model,
        desired,
        warnings,
    })
}
