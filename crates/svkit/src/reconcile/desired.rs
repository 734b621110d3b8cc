//! From the config dir to the slots reconcile should make: load and
//! validate, gather the autostart facts (container env, remembered desired
//! states), render. Everything here happens before the first write.

use super::inputs::{self, Inputs, Recorder};
use super::{DesiredFile, DesiredSlot};
use crate::config::{self, Autostart, LoadError, Model, StartFacts};
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
    /// Everything the render depended on, as read.
    pub inputs: Inputs,
}

pub fn prepare(config_dir: &Path) -> Result<Prepared, LoadError> {
    let layers = config::read_layers(config_dir)?;
    let recorder = Recorder::default();
    // Includes instances registered at runtime (`svctl register`).
    let (validated, registered) = state::load_config_from(&layers, &recorder)?;
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    let model = validated.model;
    let mut remembered_seen = BTreeMap::new();
    let facts = StartFacts {
        env: container::container_env(),
        remembered: remembered(&model, &mut warnings, &mut remembered_seen),
    };
    let render_env = RenderEnv::detect();
    let rendered = render::render_all(&model, &render_env, &facts);
    let inputs = Inputs {
        config_dir: config_dir.to_path_buf(),
        layers,
        discovered: recorder.into_seen(),
        state_dir: model.state_dir.clone(),
        registered,
        env: inputs::env_seen(&facts.env, if_env_vars(&model).iter()),
        remembered: remembered_seen,
        render_env: format!("{render_env:?}"),
        code: inputs::code_identity(),
    };
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
        inputs,
    })
}

/// The variables `if_env` slots consult: the only part of the container
/// env a render depends on.
fn if_env_vars(model: &Model) -> std::collections::BTreeSet<String> {
    model
        .slots
        .iter()
        .filter_map(|s| match &s.autostart {
            Autostart::IfEnv(var) => Some(var.clone()),
            _ => None,
        })
        .collect()
}

/// What autostart decisions rest on: the container env and the desired
/// states operators persisted.
pub fn start_facts(model: &Model, warnings: &mut Vec<String>) -> StartFacts {
    StartFacts {
        env: container::container_env(),
        remembered: remembered(model, warnings, &mut BTreeMap::new()),
    }
}

/// Desired states of `remember` slots. A corrupt or symlinked state file is
/// reported and treated as never set: it must never stop a boot. `seen`
/// gets each read as an input (see [`super::inputs`]).
fn remembered(
    model: &Model,
    warnings: &mut Vec<String>,
    seen: &mut BTreeMap<String, String>,
) -> BTreeMap<String, bool> {
    let dir = Path::new(&model.state_dir);
    let mut out = BTreeMap::new();
    for slot in model
        .slots
        .iter()
        .filter(|s| s.autostart == Autostart::Remember)
    {
        let read = state::read_desired(dir, &slot.name);
        seen.insert(slot.name.clone(), format!("{read:?}"));
        match read {
            Ok(Some(d)) => {
                out.insert(slot.name.clone(), d == Desired::Up);
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("slot {}: {e}; treating it as never set", slot.name)),
        }
    }
    out
}
