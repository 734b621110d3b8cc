//! What a slot's state means to svkit, decided here and nowhere else:
//! whether svkit wants it up (*desired*: at render time from its autostart,
//! later from the remembered state or the `down` file), whether it is
//! *ready*, whether it *failed* for good, and whether it is in the state it
//! is wanted in (the health check, `svctl status` exit 0).
//!
//! The rules are functions of their inputs; [`start_facts`] and [`Judge`]
//! gather those inputs (container env, remembered states, death tally).

use std::collections::BTreeMap;
use std::path::Path;

use super::status::{deaths_within, LastExit, RawStatus, Status};
use crate::config::names::is_truthy;
use crate::config::{Autostart, Model, OnCleanExit, Restart, Slot};
use crate::state::{self, Desired, StateError};

/// Inputs of the autostart decision at render time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartFacts {
    /// The container environment (for `if_env`).
    pub env: BTreeMap<String, String>,
    /// Desired states an operator persisted with `svctl start/stop`
    /// (`true` = up), for `remember` slots.
    pub remembered: BTreeMap<String, bool>,
}

/// The container env and the desired states of the `remember` slots. A
/// corrupt or symlinked state file is reported and treated as never set:
/// it must never stop a boot.
pub fn start_facts(model: &Model, warnings: &mut Vec<String>) -> StartFacts {
    let dir = Path::new(&model.state_dir);
    let mut remembered = BTreeMap::new();
    for slot in model
        .slots
        .iter()
        .filter(|s| s.autostart == Autostart::Remember)
    {
        match state::read_desired(dir, &slot.name) {
            Ok(Some(d)) => {
                remembered.insert(slot.name.clone(), d == Desired::Up);
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("slot {}: {e}; treating it as never set", slot.name)),
        }
    }
    StartFacts {
        env: crate::container::container_env(),
        remembered,
    }
}

/// Whether the slot is rendered up (no `down` file): its autostart against
/// the facts; a `remember` slot is down until an operator started it.
pub fn autostarts(slot: &Slot, facts: &StartFacts) -> bool {
    match &slot.autostart {
        Autostart::Always => true,
        Autostart::Never => false,
        Autostart::Remember => facts.remembered.get(&slot.name) == Some(&true),
        Autostart::IfEnv(var) => facts.env.get(var).is_some_and(|v| is_truthy(v)),
    }
}

/// What svkit wants for a rendered slot: for a `remember` slot its
/// persisted state (down when never set; what the render decided when the
/// file is unusable), else what the render decided: no `down` file.
pub fn desired_up(
    autostart: Option<&Autostart>,
    remembered: impl FnOnce() -> Result<Option<Desired>, StateError>,
    normally_up: bool,
) -> bool {
    match autostart {
        Some(Autostart::Remember) => remembered().map_or(normally_up, |d| d == Some(Desired::Up)),
        _ => normally_up,
    }
}

/// s6 gave up on the slot: down, not finishing, ran at least once, not
/// wanted up by s6 although `desired_up`. s6 records no "permanent
/// failure", only the event `O` when `./finish` exits 125, which also
/// clears want-up; so do `s6-svc -d`/`-D`/`-o`/`-O`, an s6-svscan teardown
/// and a `down` file at supervisor start, which look the same here.
pub fn given_up(raw: &RawStatus, desired_up: bool) -> bool {
    desired_up && !raw.want_up && raw.pid == 0 && !raw.finishing && !raw.never_started()
}

/// Stopped for good by its finish script (exit 125) although desired up:
/// s6 gave up on it and its last exit is one `finish` turns into 125 under
/// `restart` (svkit's default policy for a slot not in the config). A
/// plain `s6-svc -d` is never a failure. `deaths_within(secs)`: deaths in
/// the tally within `secs` of the last one, as `s6-permafailon` counts.
pub fn failed(
    st: &Status,
    desired_up: bool,
    restart: Option<&Restart>,
    deaths_within: impl FnOnce(u32) -> Option<u64>,
) -> bool {
    if !given_up(&st.raw, desired_up) {
        return false;
    }
    let default = Restart::default();
    let r = restart.unwrap_or(&default);
    match st.last_exit {
        LastExit::Exited(c) if r.permanent_exit_codes.contains(&c) => return true,
        LastExit::Exited(0) if r.on_clean_exit == OnCleanExit::Stop => return true,
        _ => {}
    }
    r.max_deaths.is_some_and(|m| {
        let n = u64::from(m.deaths);
        st.deaths >= n && deaths_within(m.within_s).is_some_and(|d| d >= n)
    })
}

/// Up and ready. A slot that does not notify readiness is ready once up.
pub fn ready(st: &Status, notifies: bool) -> bool {
    st.up && (st.ready || !notifies)
}

/// Whether the slot in `dir` notifies readiness (has a `notification-fd`).
pub fn notifies(dir: &Path) -> bool {
    dir.join("notification-fd").is_file()
}

/// The health check: supervised, not failed, and up exactly when s6 wants
/// it up (a slot an operator stopped is down as wanted).
pub fn in_wanted_state(st: Option<&Status>, failed: bool) -> bool {
    st.is_some_and(|s| !failed && s.up == s.want_up)
}

/// Slots the config declares that have no dir in the scandir: a boot
/// that could not make them (it said why), a dir removed by hand, a
/// config edited and not applied yet. None of them is in its wanted
/// state: `svctl status` shows each as `missing` and the health check
/// fails until an apply makes it.
pub fn declared_missing(model: &Model, scandir: &Path) -> Vec<String> {
    model
        .slots
        .iter()
        .filter(|s| !scandir.join(&s.name).is_dir())
        .map(|s| s.name.clone())
        .collect()
}

/// The rules applied to the slots of one scandir, with the config when it
/// loaded (without it: no remembered states, svkit's default policy).
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    pub model: Option<&'a Model>,
    pub scandir: &'a Path,
}

impl Judge<'_> {
    fn slot(&self, name: &str) -> Option<&Slot> {
        self.model.and_then(|m| m.slot(name))
    }

    /// [`desired_up`] of the slot `name`.
    pub fn desired_up(&self, name: &str, st: &Status) -> bool {
        let sd = self.model.map_or("", |m| m.state_dir.as_str());
        let remembered = || state::read_desired(Path::new(sd), name);
        let autostart = self.slot(name).map(|s| &s.autostart);
        desired_up(autostart, remembered, st.normally_up)
    }

    /// [`failed`] of the slot `name`, wanted up or not as `desired_up` says.
    pub fn failed(&self, name: &str, st: &Status, desired_up: bool) -> bool {
        let dir = self.scandir.join(name);
        let within = |secs: u32| deaths_within(&dir, u64::from(secs)).ok();
        failed(st, desired_up, self.slot(name).map(|s| &s.restart), within)
    }

    /// Desired and failed of the slot `name` at once; without a supervisor
    /// (`st` None): what its `down` file says, and never failed.
    pub fn verdict(&self, name: &str, st: Option<&Status>) -> Verdict {
        let Some(st) = st else {
            let desired_up = !self.scandir.join(name).join("down").exists();
            return Verdict {
                desired_up,
                failed: false,
            };
        };
        let desired_up = self.desired_up(name, st);
        Verdict {
            desired_up,
            failed: self.failed(name, st, desired_up),
        }
    }
}

/// One slot judged: see [`Judge::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub desired_up: bool,
    pub failed: bool,
}
