//! `svkit log-watch`: the one process that looks at every slot's logger
//! while the container runs, because s6 does not (see
//! [`crate::slot::logger`] for what goes wrong unseen).
//!
//! It runs as a supervised service of its own without a logger (the image
//! ships it in `/etc/services.d/svkit-log-watch`), so its lines reach the
//! container's output directly, never through a stalled logger. Once a
//! second it judges each svkit slot that has a logger; when a slot's
//! output stops getting through it says so in one line, once per episode,
//! and again when it gets through again; the episode is also left in the
//! slot's dir ([`LOG_FAULT_FILE`]) for `svctl events`. Two faults it mends
//! itself, by restarting the logger so that its run script starts over:
//! a log dir that vanished (s6-log would write into a deleted file for
//! good), a stdout copy that died (s6-log would write to the files only
//! for good) and a logger that fell back to stdout only because another
//! s6-log held the dir, once that lock is free.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use crate::config;
use crate::msg::{self, exit};
use crate::s6::status::lock_holder;
use crate::slot::end::{LOG_FAULT_FILE, LOG_FAULT_TMP};
use crate::slot::logger::{self, Fault, PipeLevel};

/// How often every logger is looked at: a stalled pipe is seen within two
/// periods.
const PERIOD: Duration = Duration::from_secs(1);

/// The least time between two restarts of one logger by the watcher: a
/// restart that did not mend the fault is not repeated every look.
const RESTART_EVERY: Duration = Duration::from_secs(10);

/// What the watcher remembers of one slot between looks.
#[derive(Default)]
struct SlotMemory {
    fault: Option<Fault>,
    pipe: Option<PipeLevel>,
    restarted: Option<Instant>,
}

pub fn main(args: std::env::ArgsOs) -> ExitCode {
    if args.len() > 0 {
        msg::fatal("usage: svkit log-watch (takes no arguments; SVKIT_SCANDIR and SVKIT_CONFIG_DIR say where)");
        return ExitCode::from(exit::USAGE);
    }
    let scandir = crate::container::scandir();
    let config_dir = config::config_dir_from_env();
    let mut seen: BTreeMap<String, SlotMemory> = BTreeMap::new();
    let mut log_dirs = BTreeMap::new();
    let mut loaded_for = None;
    loop {
        let slots = slots_with_logger(&scandir);
        // Loaded again only when the config files or the slots changed
        // (apply, register): a large config is not read once a second.
        let now = (config_signature(&config_dir), slots.clone());
        if loaded_for.as_ref() != Some(&now) {
            // Each slot's log dir, all the watcher keeps of the config (the
            // rest is dropped here, before the heap is given back).
            let dir =
                |s: &config::Slot| Some((s.name.clone(), PathBuf::from(&s.log.as_ref()?.dir)));
            log_dirs = config::load(&config_dir, &crate::state::LiveInstances)
                .map(|v| v.model.slots.iter().filter_map(dir).collect())
                .unwrap_or_default();
            loaded_for = Some(now);
            // This process stays for the container's life: what the load
            // took and gave back goes back to the system now.
            crate::sys::release_free_heap();
        }
        seen.retain(|name, _| slots.contains(name));
        for name in &slots {
            let log_dir = log_dirs.get(name).map(PathBuf::as_path);
            let entry = seen.entry(name.clone()).or_default();
            look(&scandir.join(name), name, log_dir, entry);
        }
        std::thread::sleep(PERIOD);
    }
}

/// Each file of the config dir with its size and modification time.
fn config_signature(dir: &Path) -> Vec<(OsString, u64, Option<SystemTime>)> {
    let mut sig: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let m = e.metadata().ok();
                    let len = m.as_ref().map_or(0, |m| m.len());
                    (e.file_name(), len, m.and_then(|m| m.modified().ok()))
                })
                .collect()
        })
        .unwrap_or_default();
    sig.sort();
    sig
}

/// The svkit slots (marked as ours) in `scandir` that have a logger.
fn slots_with_logger(scandir: &Path) -> BTreeSet<String> {
    let names = crate::s6::services(scandir).unwrap_or_default();
    (names.into_iter())
        .filter(|n| {
            let dir = scandir.join(n);
            crate::slot::owner::is_ours(&dir) && logger::has_logger(&dir)
        })
        .collect()
}

/// One look at one slot: judge, report a change, mend what can be mended.
fn look(dir: &Path, name: &str, log_dir: Option<&Path>, seen: &mut SlotMemory) {
    logger::clear_stale_restart(dir);
    let mut fault = logger::check_now(dir, log_dir);
    let pipe = fault.is_none().then(|| PipeLevel::read(dir)).flatten();
    if fault.is_none() && logger::stalled(seen.pipe, pipe) {
        fault = Some(Fault::Stalled);
    }
    seen.pipe = pipe;
    if fault != seen.fault {
        report(dir, name, seen.fault.as_ref(), fault.as_ref());
        seen.fault.clone_from(&fault);
    }
    if seen.restarted.is_some_and(|t| t.elapsed() < RESTART_EVERY) {
        return;
    }
    let why = match &fault {
        Some(Fault::DirGone(_)) => "to make its log dir again",
        Some(Fault::CopyLost) => "to bring its stdout copy back",
        Some(Fault::Setup(_)) if lock_freed(dir, log_dir) => {
            "now that no other logger holds its dir"
        }
        _ => return,
    };
    match logger::restart(dir) {
        Ok(()) => msg::info(format_args!("slot {name}: restarting its logger {why}")),
        Err(e) => msg::warn(format_args!(
            "slot {name}: unable to restart its logger: {e}"
        )),
    }
    seen.restarted = Some(Instant::now());
}

/// One line on a change, and the record `svctl events` follows. A setup
/// failure was already said by the logger's run script itself.
fn report(dir: &Path, name: &str, was: Option<&Fault>, now: Option<&Fault>) {
    let record = dir.join(LOG_FAULT_FILE);
    match now {
        Some(f) => {
            if !matches!(f, Fault::Setup(_)) {
                msg::warn(format_args!("slot {name}: {f}"));
            }
            let line = format!("{}: {f}\n", f.kind());
            // A temp of a fixed name (one watcher writes it): reconcile
            // knows it as a runtime file, never a difference to put right.
            let tmp = dir.join(LOG_FAULT_TMP);
            let written =
                std::fs::write(&tmp, line.as_bytes()).and_then(|()| std::fs::rename(&tmp, &record));
            if let Err(e) = written {
                msg::warn(format_args!(
                    "slot {name}: unable to write {}: {}",
                    record.display(),
                    msg::strerror(&e)
                ));
            }
        }
        None => {
            if was.is_some() {
                msg::info(format_args!(
                    "slot {name}: its output gets through its logger again"
                ));
            }
            let _ = std::fs::remove_file(&record);
        }
    }
}

/// A logger running on stdout only (its dir was locked by another s6-log
/// when it started) whose dir's lock nobody holds any more.
fn lock_freed(dir: &Path, log_dir: Option<&Path>) -> bool {
    let Some(log_dir) = log_dir else {
        return false;
    };
    let up = crate::s6::status::read_slot(&dir.join("log")).is_ok_and(|s| s.up);
    up && matches!(lock_holder(&log_dir.join("lock")), Ok(None))
}
