//! Facts about the machine the slots will run on. Gathering them is the one
//! piece of I/O in rendering; `detect` does it and everything else takes a
//! `RenderEnv` value, so tests pin it.

use std::path::Path;

use crate::slot::owner::tree_is_root;

/// s6-overlay's env-restoring wrapper.
pub const WITH_CONTENV: &str = "/command/with-contenv";

/// How rendered scripts reach s6 and the container env.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderEnv {
    /// Path of `with-contenv` when the image has it: run scripts use it as
    /// their interpreter so the slot sees the container environment.
    pub with_contenv: Option<String>,
    /// Directory of the s6 binaries; `None` = found on `PATH`.
    pub s6_bin: Option<String>,
    /// The supervision tree runs as root: slots drop to their user.
    pub as_root: bool,
}

impl RenderEnv {
    /// Path (or bare name, for `PATH` lookup) of an s6 program.
    pub fn tool(&self, name: &str) -> String {
        match &self.s6_bin {
            Some(d) => format!("{}/{name}", d.trim_end_matches('/')),
            None => name.to_string(),
        }
    }

    /// The user the slot's programs drop to: its own, when the tree runs
    /// as root (else the tree's user runs everything).
    pub fn drop_to<'a>(&self, slot: &'a crate::config::Slot) -> Option<&'a str> {
        slot.run_as().filter(|_| self.as_root)
    }

    /// Look at this machine: `/command/with-contenv`, where s6's binaries
    /// are ([`crate::container::s6_bin_dir`]), and who runs the supervision
    /// tree of `scandir` ([`tree_is_root`]; `None`, no live tree: root, as
    /// an image's `/init` runs it). Never the caller's uid: what an operator
    /// plans as the slots' user is what root would apply.
    pub fn detect(scandir: Option<&Path>) -> RenderEnv {
        RenderEnv {
            with_contenv: Path::new(WITH_CONTENV)
                .is_file()
                .then(|| WITH_CONTENV.to_string()),
            s6_bin: crate::container::s6_bin_dir(),
            as_root: scandir.is_none_or(tree_is_root),
        }
    }
}
