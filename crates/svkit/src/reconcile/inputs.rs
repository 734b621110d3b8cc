//! Everything a render depended on, as it was read: the config files, the
//! instance dirs listed, the registered instances, the container env, the
//! remembered states, the machine facts and the svkit code itself.
//!
//! [`super::memo`] keeps a digest of these next to the stamps of what was
//! written. Reading the same sources again and getting the same digest
//! means the render would be the same, so a no-op can be proven without
//! validating and rendering again. The sources to read again come from the
//! last run: a new one (another instance dir, another remembered slot) can
//! only appear through a change in one already read (the config, a listed
//! dir, the registered instances), which changes the digest first.

use crate::config::{self, FsInstances, InstanceSource};
use crate::container;
use crate::render::RenderEnv;
use crate::state::{self, RegisteredSeen};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An instance dir as the config names it: path and required file.
pub type DirKey = (String, Option<String>);

#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct Inputs {
    pub config_dir: PathBuf,
    pub layers: Vec<(PathBuf, Vec<u8>)>,
    /// Each instance dir listed: its sorted names, or why it failed.
    pub discovered: BTreeMap<DirKey, Result<Vec<String>, String>>,
    pub state_dir: String,
    pub registered: RegisteredSeen,
    /// The container variables `if_env` slots consult, set or not.
    pub env: BTreeMap<String, Option<String>>,
    /// Each `remember` slot's desired state as read (or why not).
    pub remembered: BTreeMap<String, String>,
    pub render_env: String,
    /// The svkit code that rendered (see `code_identity`).
    pub code: String,
}

/// 128 bits of `value`, in hex: two SipHash passes, seeded apart. Not a
/// defence against forgery (only root writes what is hashed), a guard
/// against chance.
pub fn digest128<T: Hash + ?Sized>(value: &T) -> String {
    let half = |seed: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        value.hash(&mut h);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

impl Inputs {
    pub fn digest(&self) -> String {
        digest128(self)
    }

    /// The same sources, read again now.
    pub fn read_again(
        config_dir: &Path,
        dirs: &[DirKey],
        state_dir: &str,
        env_vars: &[String],
        remember: &[String],
    ) -> Option<Inputs> {
        let layers = config::read_layers(config_dir).ok()?;
        let discovered = dirs
            .iter()
            .map(|k| (k.clone(), discover(&FsInstances, k)))
            .collect();
        let sd = Path::new(state_dir);
        Some(Inputs {
            config_dir: config_dir.to_path_buf(),
            layers,
            discovered,
            state_dir: state_dir.to_string(),
            registered: state::registered_seen(sd),
            // The container env is a dir of files: read only when asked.
            env: if env_vars.is_empty() {
                BTreeMap::new()
            } else {
                env_seen(&container::container_env(), env_vars.iter())
            },
            remembered: remember
                .iter()
                .map(|n| (n.clone(), remembered_seen(sd, n)))
                .collect(),
            render_env: format!("{:?}", RenderEnv::detect()),
            code: code_identity(),
        })
    }
}

/// The values of `vars` in `env`, as inputs.
pub fn env_seen<'a>(
    env: &BTreeMap<String, String>,
    vars: impl Iterator<Item = &'a String>,
) -> BTreeMap<String, Option<String>> {
    vars.map(|v| (v.clone(), env.get(v).cloned())).collect()
}

/// A slot's remembered desired state as an input.
pub fn remembered_seen(state_dir: &Path, slot: &str) -> String {
    format!("{:?}", state::read_desired(state_dir, slot))
}

fn discover(src: &dyn InstanceSource, (dir, req): &DirKey) -> Result<Vec<String>, String> {
    let mut names = src
        .discover(dir, req.as_deref())
        .map_err(|e| e.to_string())?;
    names.sort();
    Ok(names)
}

/// The code that rendered: the version and a digest of the library's
/// sources, the same in every binary built from them.
pub fn code_identity() -> String {
    format!("{} {}", env!("CARGO_PKG_VERSION"), env!("SVKIT_BUILD_ID"))
}

/// Lists instance dirs from the filesystem and keeps what it found.
#[derive(Debug, Default)]
pub struct Recorder {
    seen: Mutex<BTreeMap<DirKey, Result<Vec<String>, String>>>,
}

impl Recorder {
    pub fn into_seen(self) -> BTreeMap<DirKey, Result<Vec<String>, String>> {
        self.seen.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl InstanceSource for Recorder {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> std::io::Result<Vec<String>> {
        let key = (dir.to_string(), require_file.map(str::to_string));
        let found = discover(&FsInstances, &key);
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(key, found.clone());
        }
        found.map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What prepare records and what a later run reads again must be the
    /// same thing, or the memo could never prove a no-op.
    #[test]
    fn read_again_sees_what_prepare_used_and_notices_a_change() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        let cfg = root.join("cfg");
        let state = root.join("state");
        fs_write(&root.join("profiles/alice/SOUL.md"), "");
        fs_write(&root.join("profiles/nosoul/x"), "");
        fs_write(&state.join("desired/keep"), "up\n");
        let config = format!(
            r#"{{ "state_dir": "{state}",
  "slots": [
    {{ "name": "gw-{{instance}}", "command": ["x"],
      "instances": {{ "from_dir": {{ "path": "{profiles}", "require_file": "SOUL.md" }} }} }},
    {{ "name": "keep", "command": ["x"], "autostart": "remember" }},
    {{ "name": "dash", "command": ["x"], "autostart": {{ "if_env": "SVKIT_TEST_NO_SUCH_VAR" }} }}
  ] }}"#,
            state = state.display(),
            profiles = root.join("profiles").display(),
        );
        fs_write(&cfg.join("10.json"), &config);

        let used = crate::reconcile::prepare(&cfg).expect("prepare").inputs;
        assert_eq!(used.discovered.len(), 1, "{:?}", used.discovered);
        assert_eq!(used.remembered.len(), 1, "{:?}", used.remembered);
        assert_eq!(used.env.len(), 1, "{:?}", used.env);
        let again = |used: &Inputs| {
            let dirs: Vec<DirKey> = used.discovered.keys().cloned().collect();
            let env: Vec<String> = used.env.keys().cloned().collect();
            let remember: Vec<String> = used.remembered.keys().cloned().collect();
            Inputs::read_again(&cfg, &dirs, &used.state_dir, &env, &remember).expect("read")
        };
        assert_eq!(again(&used), used);
        assert_eq!(again(&used).digest(), used.digest());

        fs_write(&root.join("profiles/bob/SOUL.md"), "");
        assert_ne!(again(&used).digest(), used.digest(), "a new profile");
        let used = crate::reconcile::prepare(&cfg).expect("prepare").inputs;
        fs_write(&state.join("desired/keep"), "down\n");
        assert_ne!(again(&used).digest(), used.digest(), "a remembered state");
        let used = crate::reconcile::prepare(&cfg).expect("prepare").inputs;
        fs_write(&cfg.join("10.json"), &config.replace("\"x\"]", "\"y\"]"));
        assert_ne!(again(&used).digest(), used.digest(), "the config");
    }

    fn fs_write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}
