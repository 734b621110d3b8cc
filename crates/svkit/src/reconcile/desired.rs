//! From the config dir to the slots reconcile should make: load and
//! validate, gather the autostart facts (container env, remembered desired
//! states), render. Everything here happens before the first write.

use super::{DesiredFile, DesiredSlot};
use crate::config::{Autostart, LoadError, Model, StartFacts};
use crate::container;
use crate::render::{self, RenderEnv};
use crate::state::{self, Desired};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Prepared {
    pub model: Model,
    pub desired: Vec<DesiredSlot>,
    /// Skipped instances, unusable state files: reported, not fatal.
    pub warnings: Vec<String>,
}

pub fn prepare(config_dir: &Path) -> Result<Prepared, LoadError> {
    // Includes instances registered at runtime (`svctl register`).
    let validated = state::load_config(config_dir)?;
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    let model = validated.model;
    let facts = start_facts(&model, &mut warnings);
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

/// What autostart decisions rest on: the container env and the desired
/// states operators persisted.
pub fn start_facts(model: &Model, warnings: &mut Vec<String>) -> StartFacts {
    StartFacts {
        env: container::container_env(),
        remembered: remembered(model, warnings),
    }
}

/// Desired states of `remember` slots. A corrupt or symlinked state file is
/// reported and treated as never set: it must never stop a boot.
fn remembered(model: &Model, warnings: &mut Vec<String>) -> BTreeMap<String, bool> {
    let dir = Path::new(&model.state_dir);
    let mut out = BTreeMap::new();
    for slot in model
        .slots
        .iter()
        .filter(|s| s.autostart == Autostart::Remember)
    {
        match state::read_desired(dir, &slot.name) {
            Ok(Some(d)) => {
                out.insert(slot.name.clone(), d == Desired::Up);
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("slot {}: {e}; treating it as never set", slot.name)),
        }
    }
    out
}
