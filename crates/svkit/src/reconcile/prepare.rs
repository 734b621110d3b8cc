//! From the loaded config to the slots reconcile should make: check its
//! users, gather the autostart facts (container env, remembered desired
//! states), render. Everything here happens before the first write.

use super::Scope;
use crate::config::{self, LoadError, Model};
use crate::render::{render_all, RenderEnv, RenderedSlot};
use crate::slot::health;
use std::path::Path;

pub struct Prepared {
    pub model: Model,
    pub desired: Vec<RenderedSlot>,
    /// Skipped instances, unusable state files: reported, not fatal.
    pub warnings: Vec<String>,
}

/// Checks and renders `validated` (loaded by the caller with the instances
/// registered at runtime, `svctl register`) for a reconcile of `scope` of
/// the tree of `scandir`; its warnings come first in [`Prepared::warnings`].
/// When that tree runs as root, every slot's user must exist here (slots
/// drop to it with `s6-setuidgid`): an unknown one is a config error at its
/// `user` key, found before anything is written. Slot by slot (the boot
/// hook), it is its slots' failure, not the config's: apply's preflight
/// leaves them out, named, and the other slots run.
pub fn prepare(
    validated: config::Validated,
    scandir: &Path,
    scope: Scope,
) -> Result<Prepared, LoadError> {
    let mut warnings: Vec<String> = validated.warnings.iter().map(|w| w.to_string()).collect();
    if RenderEnv::detect(Some(scandir)).as_root {
        let unknown =
            config::users::unknown_users(&validated.model, &config::users::PasswdFile::system());
        if scope == Scope::All && !unknown.is_empty() {
            return Err(LoadError::Invalid(unknown));
        }
        warnings.extend(unknown.iter().map(ToString::to_string));
    }
    // A job whose timezone the image lacks: left out at boot, named.
    let zones = config::unknown_timezones(&validated.model, Path::new("/"));
    if scope == Scope::All && !zones.is_empty() {
        return Err(LoadError::Invalid(zones));
    }
    let mut validated = validated;
    for d in zones {
        validated.model.slots.retain(|s| {
            s.schedule
                .as_ref()
                .and_then(|sc| sc.timezone_site.as_ref())
                .is_none_or(|site| site.pos != d.pos || site.file != d.file)
        });
        warnings.push(format!("{d}: the job is left out"));
    }
    if let Some((uid, _)) = crate::slot::owner::tree_owner(scandir) {
        warnings.extend(users_not_applied(&validated.model, uid));
    }
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

/// A non-root tree cannot drop to another user (`s6-setuidgid` needs
/// root): every slot runs as the tree's user `tree_uid`. Each configured
/// user that is someone else is named once, with its slots, so that a
/// config written for a root image says what it gets instead of failing
/// later. A user that is the tree's own (`--user 10001` for `app`) is not.
pub fn users_not_applied(model: &Model, tree_uid: u32) -> Vec<String> {
    let mut by_user: Vec<(&str, Vec<&str>)> = Vec::new();
    for slot in &model.slots {
        // `root` too: the tree cannot give it root either.
        let Some(u) = slot.user.as_deref() else {
            continue;
        };
        if super::lookup_user(u).is_ok_and(|(uid, _)| uid == tree_uid) {
            continue;
        }
        match by_user.iter_mut().find(|(name, _)| *name == u) {
            Some((_, slots)) => slots.push(&slot.name),
            None => by_user.push((u, vec![&slot.name])),
        }
    }
    by_user
        .into_iter()
        .map(|(u, slots)| {
            format!(
                "user {u} not applied to {}: the supervision tree runs as uid {tree_uid}, not root, \
                 and only root can switch users; they run as uid {tree_uid}",
                slots.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state;

    fn model(json: &str) -> Model {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::write(t.path().join("10.json"), json).expect("write");
        config::load(t.path(), &state::LiveInstances)
            .expect("valid config")
            .model
    }

    #[test]
    fn a_non_root_tree_names_each_user_it_cannot_switch_to() {
        let m = model(
            r#"{ "user": "nobody", "state_dir": "/nonexistent/.svkit", "slots": [
                { "name": "a", "command": ["true"] },
                { "name": "b", "command": ["true"] },
                { "name": "c", "command": ["true"], "user": "root" },
                { "name": "d", "command": ["true"], "user": "65534:65534" } ] }"#,
        );
        // nobody is uid 65534: its slots run as themselves, root's does not.
        let w = users_not_applied(&m, 65534);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("user root not applied to c: the supervision tree runs as uid 65534"),
            "{w:?}"
        );
        let w = users_not_applied(&m, 123456);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].starts_with("user nobody not applied to a, b: "),
            "{w:?}"
        );
        assert!(w[0].ends_with("they run as uid 123456"), "{w:?}");
    }
}
