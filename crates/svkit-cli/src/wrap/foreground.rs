//! The foreground path: the wrapped command replaces us, with the
//! container environment restored, and, for a redirect's opt-out, as its
//! slot would run it (see `svkit::slotenv::oneoff`).

use std::collections::BTreeMap;
use svkit::claim::foreground as fg;
use svkit::config::{Model, Slot};
use svkit::container;
use svkit::msg;
use svkit::redirect;
use svkit::slotenv::oneoff::{self, OneOff};

/// `argv` as `slot` runs its program; with `supervised` (s6 runs), once
/// the slot's `depends_on` hold, as its `run` would wait for them.
pub fn as_slot(
    model: &Model,
    slot: &Slot,
    argv: Vec<std::ffi::OsString>,
    supervised: bool,
) -> OneOff {
    let name = &slot.name;
    if supervised {
        let mut note = |line: String| msg::info(format_args!("slot {name}: {line}"));
        if let Err(e) = redirect::await_deps(
            model,
            slot,
            &container::scandir(),
            redirect::DEPENDS_TIMEOUT,
            &mut note,
        ) {
            msg::die(
                e.exit_code(),
                format_args!("unable to run slot {name}'s command in the foreground: {e}"),
            );
        }
    } else if !slot.depends_on.is_empty() {
        msg::warn(format_args!(
            "slot {name}: not waiting for its depends_on: no s6 supervision to start them"
        ));
    }
    oneoff::as_slot(model, slot, argv).unwrap_or_else(|e| {
        let why = format_args!("slot {name}: not starting: {e}");
        msg::die(svkit::slotenv::START_FAILED, why)
    })
}

/// Records this process (see `svkit::claim::foreground`) when s6-overlay
/// runs (`s6_running`) and we are its CMD: the command keeps our pid. The
/// stop hook stops it gracefully; the starts of `slot` refuse while it
/// lives. A failure costs both, so it is said and the run goes on.
pub fn record(slot: Option<&Slot>, s6_running: bool) {
    if !s6_running || !svkit::foreground::is_the_cmd() {
        return;
    }
    let path = &fg::record_path();
    let done = fg::Record::me(slot)
        .ok_or_else(|| std::io::Error::other("unable to read this process's start time"))
        .and_then(|rec| fg::write(path, &rec));
    if let Err(e) = done {
        let beside = slot.map_or(String::new(), |s| {
            format!(", and `svctl start {}` could start a second copy", s.name)
        });
        msg::warn(format_args!(
            "unable to record the foreground command in {}: {}; at docker stop it gets only s6-overlay's final TERM/KILL{beside}",
            path.display(),
            msg::strerror(&e)
        ));
    }
}

/// Execs the command; under s6-overlay the CMD gets a stripped env: the
/// container's variables come back (ours win), as `with-contenv` does.
pub fn exec(one: &OneOff, container_env: &BTreeMap<String, String>) -> ! {
    let e = oneoff::exec(one, container_env);
    msg::die(e.exit_code(), e)
}
