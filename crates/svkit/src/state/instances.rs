//! Instances registered at runtime (`svctl register NAME`): one empty file
//! per instance, `<state_dir>/instances/<template>/<name>`, where
//! `<template>` is the declared slot name with `{instance}` in it (e.g.
//! `gateway-{instance}`). Like desired states they live under `state_dir`,
//! so they survive container restarts.
//!
//! [`LiveInstances`] is the instance source of a running image: config
//! validation asks it for `from_dir` names and for these, and skips a
//! registered name that does not fit with a warning, as a discovered one;
//! `${VAR}` reads the container's environment through it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::config::vars::Env;
use crate::config::{FsInstances, InstanceSource, Warning};

use super::io;
use super::StateError;

/// The dir under `state_dir` holding one dir per template.
pub const INSTANCES_DIR: &str = "instances";

fn template_dir(state_dir: &Path, template: &str) -> PathBuf {
    state_dir.join(INSTANCES_DIR).join(template)
}

/// The instance sources of a running image: `from_dir` on the filesystem,
/// and the names `svctl register` recorded under `state_dir`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveInstances;

impl InstanceSource for LiveInstances {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> std::io::Result<Vec<String>> {
        FsInstances.discover(dir, require_file)
    }

    /// The container's, complete: the boot, `plan` and `apply` read it.
    fn env(&self) -> Env {
        Env {
            vars: crate::container::container_env(),
            complete: true,
        }
    }

    /// The plain files of the template's dir (a missing or symlinked dir
    /// is empty); anything else there is skipped with a warning, and an
    /// unreadable dir is one warning: hand-planted files never stop a boot.
    fn registered(
        &self,
        state_dir: &str,
        template: &str,
        warnings: &mut Vec<Warning>,
    ) -> Vec<String> {
        let dir = template_dir(Path::new(state_dir), template);
        let mut warn = |message| warnings.push(Warning { message });
        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Vec::new();
        }
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                warn(format!("registered instances ignored: {}", io(&dir)(e)));
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            } else if e.file_type().is_ok_and(|t| t.is_file()) {
                names.push(name);
            } else {
                let path = e.path().display().to_string();
                warn(format!(
                    "ignoring registered instance {path}: not a regular file"
                ));
            }
        }
        names
    }
}

/// Whether `name` is registered for `template`.
pub fn is_registered(state_dir: &Path, template: &str, name: &str) -> bool {
    fs::symlink_metadata(template_dir(state_dir, template).join(name))
        .is_ok_and(|m| m.file_type().is_file())
}

/// Records `name` as an instance of `template`; `Ok(false)` when it already
/// was. `owner` (uid, gid) owns the dirs created, like desired states.
pub fn register(
    state_dir: &Path,
    template: &str,
    name: &str,
    owner: Option<(u32, u32)>,
) -> Result<bool, StateError> {
    let base = state_dir.join(INSTANCES_DIR);
    let dir = template_dir(state_dir, template);
    super::ensure_dirs(&[state_dir, base.as_path(), dir.as_path()], owner)?;
    let path = dir.join(name);
    // Created with the owner's filesystem identity: the dirs are theirs, so
    // a symlink they swap in must not let root create a file elsewhere.
    match crate::fsutil::as_owner(owner, || crate::fsutil::write_new(&path, b"", 0o644)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_file() => Ok(false),
                _ => Err(StateError::Corrupt { path }),
            }
        }
        Err(e) => Err(io(&path)(e)),
    }
}

/// Forgets `name`; `Ok(false)` when it was not registered.
pub fn unregister(state_dir: &Path, template: &str, name: &str) -> Result<bool, StateError> {
    let path = template_dir(state_dir, template).join(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(&path)(e)),
    }
}
