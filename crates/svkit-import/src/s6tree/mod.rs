//! s6-overlay service trees: a `services.d/` dir (s6-overlay's legacy
//! longruns, each `NAME/run` supervised as is) or an `s6-rc.d/` source dir
//! (s6-rc definitions: longruns, oneshots, bundles, dependencies).
//!
//! A longrun's slot runs its `run` script where it lies (its dir is the
//! slot's `cwd`, as s6 runs a script in its service dir), so the tree must
//! stay in the image; a oneshot's runs its `up` line through `execlineb
//! -P`, as s6-rc does. Which of the two a dir is: an s6-rc source dir's
//! definitions each hold a `type` file; a `services.d/` service never does.

mod rc;
mod read;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use svkit::config::names::{check_abs_path, check_signal};
use svkit::config::raw::RawReadiness;
use svkit::msg::At;

use crate::common::error;
use crate::{ImportError, Imported, Note, RawSlot};

/// Where s6-overlay keeps its binaries (`execlineb` among them).
const S6_OVERLAY_BIN: &str = "/command";
/// The longest `stop_timeout_ms` a slot takes.
const MAX_STOP_TIMEOUT_MS: u32 = 86_400_000;

/// Import the `services.d/` or `s6-rc.d/` dir at `path`.
pub fn import(path: &Path) -> Result<Imported, ImportError> {
    let meta =
        std::fs::metadata(path).map_err(|e| error(path, format!("unable to read it: {e}")))?;
    if !meta.is_dir() {
        return Err(error(
            path,
            "not a directory: give a services.d/ dir or an s6-rc.d/ source dir",
        ));
    }
    if read::has(path, "run")? || read::has(path, "type")? {
        return Err(error(
            path,
            "this is one service's dir: give the dir that holds it (services.d/ or s6-rc.d/)",
        ));
    }
    let root = image_path(path)?;
    let entries = read::entries(path, false)?;
    let mut is_rc = false;
    for (_, dir, _) in entries.iter().filter(|e| e.2) {
        is_rc = is_rc || read::has(dir, "type")?;
    }
    let mut out = if is_rc {
        rc::import(path, &root, &entries)?
    } else {
        legacy(path, &root, &entries)?
    };
    if out.slots.is_empty() {
        out.notes
            .push(note(path, "services", "no service in it: nothing imported"));
    }
    Ok(out)
}

/// A `services.d/` dir, as s6-overlay's `services-up` takes it: every
/// subdir is a longrun, copied and supervised as is (a `down` file keeps
/// it down); anything that is not a dir is skipped. No dependencies.
fn legacy(
    path: &Path,
    root: &str,
    entries: &[(String, PathBuf, bool)],
) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    for (name, file, is_dir) in entries {
        if !is_dir {
            out.notes
                .push(note(file, name, "not a directory: s6-overlay skips it too"));
        }
    }
    let services: Vec<_> = entries.iter().filter(|e| e.2).collect();
    // The files read are the service dirs.
    out.files = services.len();
    let names = name_map(
        services.iter().map(|(n, d, _)| (n.as_str(), d.as_path())),
        &mut out.notes,
    )?;
    for (name, dir, _) in services {
        let image_dir = format!("{root}/{name}");
        let Some(mut slot) = longrun_slot(&names[name], dir, &image_dir, &mut out.notes)? else {
            continue;
        };
        if read::has(dir, "down")? {
            slot.autostart = Some("never".into());
        }
        out.slots.push(slot);
    }
    if !out.slots.is_empty() {
        out.notes.push(note(
            path,
            "services.d",
            "s6-overlay starts every dir of /etc/services.d itself: once the svkit config is \
             in the image, move these dirs out of /etc/services.d (and import them from where \
             they will be, so the commands name that place), or each service runs twice",
        ));
    }
    Ok(out)
}

/// The tree's path as the slots name it: absolute, symlinks resolved,
/// UTF-8 (a config is), and a path a `cwd` may be.
fn image_path(path: &Path) -> Result<String, ImportError> {
    let real = std::fs::canonicalize(path)
        .map_err(|e| error(path, format!("unable to resolve its path: {e}")))?;
    let s = real
        .to_str()
        .ok_or_else(|| error(path, "its path is not UTF-8: a config holds UTF-8"))?;
    check_abs_path(s).map_err(|why| error(path, format!("its path `{s}` {why}")))
}

/// A note about a whole file or dir.
fn note(file: &Path, key: &str, why: &str) -> Note {
    Note::new(At::file(file), key, why)
}

/// A note about the file `name` of `dir`, keyed by its name.
fn file_note(dir: &Path, name: &str, why: impl Into<String>) -> Note {
    Note::new(At::file(dir.join(name)), name, why)
}

/// The slot of a longrun (a `services.d/` service or an s6-rc longrun):
/// its `run` script run in place, and the s6-supervise files svkit has a
/// key for. `None` (and a note) when its `run` cannot be run at all.
fn longrun_slot(
    slot: &str,
    dir: &Path,
    image_dir: &str,
    notes: &mut Vec<Note>,
) -> Result<Option<RawSlot>, ImportError> {
    let run = dir.join("run");
    check_abs_path(image_dir).map_err(|why| error(dir, format!("its path `{image_dir}` {why}")))?;
    if !read::has(dir, "run")? {
        return Err(error(
            &run,
            "a longrun needs a run script (s6 cannot start it either)",
        ));
    }
    let run_in_image = format!("{image_dir}/run");
    let Some(command) = read::script_command(&run, &run_in_image)? else {
        notes.push(note(
            &run,
            "run",
            "not imported: no #! line and not executable, so s6 cannot run it either",
        ));
        return Ok(None);
    };
    notes.push(note(
        &run,
        "run",
        &format!("the slot runs this script where it lies ({run_in_image}), in its dir: keep both in the image"),
    ));
    let mut s = RawSlot {
        name: slot.to_owned(),
        command,
        cwd: Some(image_dir.to_owned()),
        ..RawSlot::default()
    };
    if let Some(fd) = read::number(dir, "notification-fd")? {
        if (3..=1023).contains(&fd) {
            s.readiness = Some(RawReadiness {
                notification_fd: Some(fd.into()),
                check: None,
            });
        } else {
            notes.push(file_note(
                dir,
                "notification-fd",
                format!("fd {fd} not carried over: svkit takes 3 to 1023 (0-2 are stdio, which s6-rc ignores too)"),
            ));
        }
    }
    if let Some(ms) = read::number(dir, "timeout-kill")? {
        if ms > MAX_STOP_TIMEOUT_MS {
            notes.push(file_note(
                dir,
                "timeout-kill",
                format!(
                    "{ms} ms not carried over: `stop_timeout_ms` is at most {MAX_STOP_TIMEOUT_MS}"
                ),
            ));
        } else if ms > 0 {
            s.stop_timeout_ms = Some(ms.into());
        }
    }
    if let Some(sig) = read::small(dir, "down-signal")? {
        match check_signal(sig.trim()) {
            Ok(sig) if sig != "SIGTERM" => {
                s.down_signal = Some(sig.trim_start_matches("SIG").to_owned());
            }
            Ok(_) => {}
            Err(why) => notes.push(file_note(
                dir,
                "down-signal",
                format!("`{sig}` not carried over: {why}"),
            )),
        }
    }
    let dropped: &[(&str, &str)] = &[
        ("finish", "not carried over: svkit renders its own finish (the restart policy); to end the container when this slot ends, as a finish writing the container's exit code does, set `essential: true`"),
        ("timeout-finish", "not carried over: svkit renders its own finish and its timeout"),
        ("max-death-tally", "not carried over: svkit's `restart.max_deaths`/`within_s` decide when a crash loop stops"),
        ("lock-fd", "not carried over: svkit has no lock-fd"),
        ("flag-newpidns", "not carried over: svkit runs no slot in a PID namespace of its own"),
        ("log/run", "not carried over: svkit renders its own logger; the slot's output now goes to the \
             container's output. Check where this logger wrote (its log dir, rotation) and set \
             the slot's `log` (`dir`, `keep`, `max_bytes`) to keep files"),
    ];
    file_notes(dir, dropped, notes)?;
    crate::common::no_placeholder(&s, At::file(dir))?;
    Ok(Some(s))
}

/// A note for each of `files` (a file of `dir`, why it is not carried
/// over) that is there.
fn file_notes<S: AsRef<str>>(
    dir: &Path,
    files: &[(&str, S)],
    notes: &mut Vec<Note>,
) -> Result<(), ImportError> {
    for (file, why) in files {
        if read::has(dir, file)? {
            notes.push(file_note(dir, file, why.as_ref()));
        }
    }
    Ok(())
}

/// The tree-wide name map: a source name to its slot name, refusing two
/// services that would share one.
fn name_map<'a>(
    names: impl Iterator<Item = (&'a str, &'a Path)>,
    notes: &mut Vec<Note>,
) -> Result<HashMap<String, String>, ImportError> {
    let mut map = HashMap::new();
    let mut taken: HashMap<String, &str> = HashMap::new();
    for (name, dir) in names {
        let slot = crate::common::noted_slot_name(name, At::file(dir), notes)
            .map_err(|why| error(dir, format!("service `{name}`: {why}")))?;
        if let Some(other) = taken.insert(slot.clone(), name) {
            return Err(error(
                dir,
                format!(
                    "services `{other}` and `{name}` make the same slot name `{slot}`: rename one"
                ),
            ));
        }
        map.insert(name.to_string(), slot);
    }
    Ok(map)
}
