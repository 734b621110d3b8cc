//! Rendering: a pure function from the validated [`Model`] to the exact
//! files of each slot directory. No I/O here (machine facts come in as a
//! [`RenderEnv`], autostart facts as [`StartFacts`]); writing the files,
//! diffing them against a live slot and ownership of `supervise/` are the
//! caller's job.
//!
//! Imports nothing of `s6`: what a script must agree on with the readers of
//! slots (record file names, exit-code rules, the marker, autostart) comes
//! from [`crate::slot`].
//!
//! Layout of one slot (paths relative to the slot dir):
//!
//! | file | when | content |
//! |---|---|---|
//! | `run` | always | sh: env, cwd, privilege drop, `exec` of the argv (a job's first execs `svkit job wait`) |
//! | `finish` | always | sh: the restart policy (a job's: `svkit job end`) |
//! | `down` | not wanted up | empty |
//! | `notification-fd` | readiness | fd number |
//! | `data/check` | readiness check | sh: the check command, its output to `.svkit-check-output` |
//! | `timeout-kill` | `stop_timeout_ms` | ms |
//! | `down-signal` | `down_signal` | `SIGxxx` |
//! | `timeout-finish` | always | ms, above the longest backoff delay |
//! | `max-death-tally` | `max_deaths` > 100 | records kept by s6 |
//! | `log/run` | `log` | sh: log dir creation, s6-log |
//! | `.svkit` | always | marker: svkit made this slot |

mod finish;
mod log;
pub mod quote;
mod run;

pub use log::{rendered_dir as rendered_log_dir, MAX_LINE_BYTES};

use std::path::{Path, PathBuf};

use crate::config::{Model, Slot};
use crate::slot::health::{self, StartFacts};
use crate::slot::owner::{tree_is_root, MARKER};

/// s6-overlay's env-restoring wrapper.
pub const WITH_CONTENV: &str = "/command/with-contenv";

/// How rendered scripts reach s6 and the container env: facts about the
/// machine the slots will run on. Gathering them ([`RenderEnv::detect`]) is
/// the one piece of I/O in rendering; the rest takes a value, so tests pin it.
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

/// One file of a slot. Every file svkit renders is root's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    /// Relative to the slot dir, `/`-separated (`log/run`).
    pub path: String,
    pub contents: Vec<u8>,
    pub mode: u32,
}

/// One slot as it should be on disk: what the renderer makes of a
/// [`Slot`] and what reconcile plans and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedSlot {
    pub name: String,
    /// Wanted up now: no `down` file.
    pub up: bool,
    /// Every file svkit manages in the slot dir, sorted by path.
    pub files: Vec<RenderedFile>,
    /// The user to drop to: its `supervise/`, `event/` and log dir are theirs.
    pub user: Option<String>,
    /// Created (owned by `user`) before the logger first starts.
    pub log_dir: Option<PathBuf>,
}

impl RenderedSlot {
    /// Subdirectories the files need (`log`, `data`), parents first.
    pub fn dirs(&self) -> Vec<String> {
        let d: std::collections::BTreeSet<String> = (self.files.iter())
            .filter_map(|f| f.path.rsplit_once('/').map(|(dir, _)| dir.to_string()))
            .collect();
        d.into_iter().collect()
    }

    pub fn file(&self, path: &str) -> Option<&RenderedFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// Room for a whole script up front: they are 1–2 KB, and growing a
/// string a line at a time is most of what rendering costs.
const SCRIPT_CAPACITY: usize = 2048;

/// An empty sh script, its room reserved.
fn script() -> String {
    let mut s = String::with_capacity(SCRIPT_CAPACITY);
    s.push_str("#!/bin/sh\n");
    s
}

fn file(path: &str, contents: impl Into<Vec<u8>>, mode: u32) -> RenderedFile {
    let mut contents = contents.into();
    // Scripts were built with room to spare; hundreds of slots are held at
    // once, and on a VM every page touched costs.
    contents.shrink_to_fit();
    RenderedFile {
        path: path.to_string(),
        contents,
        mode,
    }
}

/// A file of one value, as s6 reads them: the value and a newline.
fn value(path: &str, v: Option<impl std::fmt::Display>) -> Option<RenderedFile> {
    v.map(|v| file(path, format!("{v}\n"), 0o644))
}

/// Render one slot; `up` decides the `down` file (see [`health::autostarts`]).
pub fn render_slot(model: &Model, slot: &Slot, env: &RenderEnv, up: bool) -> RenderedSlot {
    let finish = match run::job_words(model, slot, "end") {
        Some(end) => finish::job(slot, end),
        None => finish::finish(slot),
    };
    let max_deaths = slot
        .restart
        .max_deaths
        .map(|m| m.deaths)
        .filter(|&n| n > 100);
    let mut files: Vec<RenderedFile> = [
        Some(file("run", run::run(model, slot, env), 0o755)),
        Some(file("finish", finish, 0o755)),
        Some(file(MARKER, marker(slot), 0o644)),
        (!up).then(|| file("down", "", 0o644)),
        value("notification-fd", run::notification_fd(slot)),
        run::check_script(slot, env).map(|c| file("data/check", c, 0o755)),
        value("timeout-kill", slot.stop_timeout_ms),
        value("down-signal", slot.down_signal.as_ref()),
        value("timeout-finish", Some(finish::timeout_finish_ms(slot))),
        value("max-death-tally", max_deaths),
        (slot.log.as_ref()).map(|l| file("log/run", log::log_run(slot, l, env), 0o755)),
    ]
    .into_iter()
    .flatten()
    .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    RenderedSlot {
        name: slot.name.clone(),
        up,
        files,
        user: slot.run_as().map(str::to_string),
        log_dir: slot.log.as_ref().map(|l| PathBuf::from(&l.dir)),
    }
}

/// Render every slot of the model, deciding autostart from `facts`.
pub fn render_all(model: &Model, env: &RenderEnv, facts: &StartFacts) -> Vec<RenderedSlot> {
    (model.slots.iter())
        .map(|s| render_slot(model, s, env, health::autostarts(s, facts)))
        .collect()
}

/// The marker: JSON so tools can read it, stable so an unchanged slot
/// renders byte for byte the same (keys in sorted order, as they always
/// were).
fn marker(slot: &Slot) -> String {
    #[derive(serde::Serialize)]
    struct Marker<'a> {
        instance: Option<&'a str>,
        slot: &'a str,
        source: std::borrow::Cow<'a, str>,
        svkit: u32,
        template: &'a str,
    }
    let m = Marker {
        instance: slot.instance.as_deref(),
        slot: &slot.name,
        source: slot.origin.file.to_string_lossy(),
        svkit: 1,
        template: &slot.origin.template,
    };
    // Serializing plain strings and numbers cannot fail.
    let mut out = serde_json::to_string(&m).unwrap_or_default();
    out.push('\n');
    out
}
