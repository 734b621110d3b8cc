//! The image author's JSON configuration: layered files, validation that
//! reports every error with its location, and the validated [`Model`].
//!
//! Data flows one way: [`read_layers`] (I/O: list and read `*.json`) →
//! [`parse::parse_layer`] (raw serde types, positions) → [`validate()`]
//! (pure, except the instance sources behind [`InstanceSource`]) → [`Model`].
//! [`load`] chains them.
//!
//! Layers: every `*.json` regular file of the config dir whose name does not
//! start with `.`, in byte order of file names. Later layers add slots and
//! redirects; a top-level scalar (`user`, `state_dir`, `sentinel_env`,
//! `default_program`) set in several layers takes the last layer's value.
//!
//! Below everything that reads a config: imports nothing of `lifeline`
//! (probes are validated through [`crate::probe`]) nor of what consumes the
//! model (render, reconcile, slot, state).

pub mod depends;
mod discover;
pub mod error;
pub mod json_pos;
pub mod model;
pub mod names;
pub mod parse;
pub mod programs;
pub mod raw;
mod slot;
pub mod users;
pub mod validate;
pub mod vars;

use std::io::Read as _;
use std::path::{Path, PathBuf};

pub use discover::{Checking, FixedInstances, FsInstances, InstanceSource};
pub use error::{Diagnostic, LoadError, Site, Warning};
pub use model::*;
pub use validate::{validate, Validated};

/// Default config dir of an image.
pub const DEFAULT_CONFIG_DIR: &str = "/etc/svkit";
/// Environment override of the config dir.
pub const CONFIG_DIR_ENV: &str = "SVKIT_CONFIG_DIR";

/// `SVKIT_CONFIG_DIR`, else `/etc/svkit`.
pub fn config_dir_from_env() -> PathBuf {
    PathBuf::from(
        crate::container::setting(CONFIG_DIR_ENV).unwrap_or_else(|| DEFAULT_CONFIG_DIR.into()),
    )
}

/// The layer files of `dir`, in order, with their bytes.
pub fn read_layers(dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, LoadError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LoadError::Io { path, source }
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let bytes = name.as_encoded_bytes();
        if bytes.starts_with(b".") || !bytes.ends_with(b".json") {
            continue;
        }
        let path = entry.path();
        // Follows symlinks: config files are often linked into place.
        let meta = std::fs::metadata(&path).map_err(io(&path))?;
        if !meta.is_file() {
            // Named like a layer but not one: never skipped in silence.
            let what = if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(LoadError::Invalid(vec![Diagnostic::new(
                &path,
                None,
                None,
                format!("{what} named like a config layer (*.json): rename or remove it"),
            )]));
        }
        names.push(path);
    }
    names.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    (names.into_iter())
        .map(|path| {
            // Never more than one byte past the limit: parse_layer refuses
            // the file without the rest being read.
            let mut bytes = Vec::new();
            let limit = parse::MAX_FILE_BYTES as u64 + 1;
            std::fs::File::open(&path)
                .and_then(|f| f.take(limit).read_to_end(&mut bytes))
                .map_err(io(&path))?;
            Ok((path, bytes))
        })
        .collect()
}

/// Parse and validate already-read layers (pure but for `src`).
pub fn load_layers(
    files: &[(PathBuf, Vec<u8>)],
    src: &dyn InstanceSource,
) -> Result<Validated, LoadError> {
    let mut diags = Vec::new();
    let mut layers = Vec::new();
    for (path, bytes) in files {
        let (layer, d) = parse::parse_layer(path, bytes);
        diags.extend(d);
        layers.extend(layer);
    }
    match validate(&layers, src) {
        Ok(v) if diags.is_empty() => Ok(v),
        Ok(_) => Err(LoadError::Invalid(diags)),
        Err(more) => Err(LoadError::Invalid([diags, more].concat())),
    }
}

/// Read, parse and validate the config dir, asking `src` for instances
/// (a running image passes `state::LiveInstances`).
pub fn load(dir: &Path, src: &dyn InstanceSource) -> Result<Validated, LoadError> {
    load_layers(&read_layers(dir)?, src)
}

/// One diagnostic per job whose `timezone` the image whose root is `root`
/// lacks (a fact of where it runs, as a `user` is): its zone file is read
/// at each wait for a tick.
pub fn unknown_timezones(model: &Model, root: &Path) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for s in &model.slots {
        let Some(sc) = &s.schedule else { continue };
        let (Some(site), Some(name)) = (&sc.timezone_site, sc.timezone.as_deref()) else {
            continue;
        };
        if let Err(e) = crate::schedule::zone(root, Some(name)) {
            let d = site.diag(format!("{e} (job {})", s.name));
            // Instances of one template share the place.
            if !out
                .iter()
                .any(|o| o.pos == d.pos && o.path == d.path && o.file == d.file)
            {
                out.push(d);
            }
        }
    }
    out
}

/// The model of one valid layer `/etc/svkit/10.json` holding `json`, for
/// unit tests of the rules that read a model.
#[cfg(test)]
pub(crate) fn test_model(json: &str) -> Model {
    let files = vec![(
        std::path::PathBuf::from("/etc/svkit/10.json"),
        json.as_bytes().to_vec(),
    )];
    match load_layers(&files, &FixedInstances::default()) {
        Ok(v) => v.model,
        Err(e) => panic!("test config is invalid: {e}"),
    }
}
