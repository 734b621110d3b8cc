//! `env_file` and `secrets` in `run`: the script execs `svkit slot-env`,
//! which reads the files at start and execs the rest of the line. Only
//! their paths are rendered: no value ever lands in a file.

use crate::config::{Model, Slot};

/// Whether `run` goes through `svkit slot-env`.
pub(super) fn uses_slot_env(slot: &Slot) -> bool {
    !slot.env_files.is_empty() || !slot.secrets.is_empty()
}

/// Whether `run` may leave a start error for `finish`: `slot-env` refusing
/// an input, or an essential slot's dependency failed for good
/// ([`gives_up_on_deps`]).
pub(super) fn may_not_start(slot: &Slot) -> bool {
    uses_slot_env(slot) || gives_up_on_deps(slot)
}

/// An essential slot (or one a redirect may make essential) stops waiting
/// for a dependency that failed for good: it could never start, and the
/// container must end. Any other slot waits on, visibly.
pub(super) fn gives_up_on_deps(slot: &Slot) -> bool {
    !slot.depends_on.is_empty() && slot.essential != Some(false)
}

/// The words before the rest of `run`'s exec line; empty without inputs.
/// `slot-env` also enters `cwd` (after it reads the files, from the slot
/// dir, where it leaves a start error for `finish`), except with a
/// readiness check, whose helper must start in the slot dir and enters
/// `cwd` itself.
pub(super) fn slot_env_words(model: &Model, slot: &Slot) -> Vec<String> {
    if !uses_slot_env(slot) {
        return Vec::new();
    }
    let mut w: Vec<String> = ["svkit", "slot-env", "--slot", &slot.name, "--sentinel"]
        .map(String::from)
        .to_vec();
    w.push(model.sentinel_env.clone());
    for f in &slot.env_files {
        w.push("--env-file".into());
        w.push(f.clone());
    }
    for (var, path) in &slot.secrets {
        w.push("--secret".into());
        w.push(format!("{var}={path}"));
    }
    if let (Some(cwd), false) = (
        &slot.cwd,
        slot.readiness
            .as_ref()
            .is_some_and(|r| r.check_command().is_some()),
    ) {
        w.push("--cwd".into());
        w.push(cwd.clone());
    }
    w.push("--".into());
    w
}
