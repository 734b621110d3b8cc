//! Carry out a redirect: ensure the slot, want it up, start companions;
//! then the keep-alive: the CMD process stays, blocked in the kernel,
//! until the container is stopped. In-process, because slim images may
//! have no `sleep` (the reference deployment broke on that).

use crate::config::{Model, Redirect};
use crate::control::{self, Waited};
use crate::msg::exit;
use crate::reconcile::{self, ApplyOptions, ReconcileError};
use crate::s6::control::ControlError;
use crate::slot::{end, health};
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal};

#[derive(Debug, thiserror::Error)]
pub enum RedirectError {
    #[error("unable to render the slot: {0}")]
    Reconcile(ReconcileError),
    #[error("{0}")]
    Control(ControlError),
    /// A displaced slot could not be stopped.
    #[error("{0}")]
    Stop(control::Error),
    /// The slot could not be made essential for this container.
    #[error("unable to make it essential: {}", crate::msg::strerror(.0))]
    Essential(std::io::Error),
    /// The rule names a slot the config does not declare (validation
    /// prevents it; a racing config edit could not).
    #[error("slot {0} is not declared in the config")]
    NoSlot(String),
}

/// Bound on waiting for s6-svscan to supervise a slot just rendered (or
/// a dependency at boot).
pub(super) const SUPERVISE_TIMEOUT: Duration = Duration::from_secs(5);

/// Ensures the rule's slot exists (applying the model when it does not),
/// wants it up, and starts the `also_start` slots whose autostart holds.
/// Returns the slots started, the rule's own first.
pub fn execute(
    model: &Model,
    rule: &Redirect,
    scandir: &Path,
) -> Result<Vec<String>, RedirectError> {
    let Some(own) = model.slot(&rule.slot) else {
        return Err(RedirectError::NoSlot(rule.slot.clone()));
    };
    let missing = std::iter::once(&rule.slot)
        .chain(&rule.also_start)
        .any(|s| !scandir.join(s).is_dir());
    let mut warnings = Vec::new();
    if missing {
        let opts = ApplyOptions::default();
        let lock = reconcile::ScandirLock::acquire(scandir, opts.lock_timeout)
            .map_err(RedirectError::Reconcile)?;
        let desired = reconcile::desired(model, scandir, &mut warnings);
        reconcile::apply(&lock, &desired, &opts).map_err(RedirectError::Reconcile)?;
    }
    let facts = health::start_facts(model, &mut warnings);
    let mut started = vec![rule.slot.clone()];
    // The user ran this slot as the container's command: when it ends for
    // good, so does the container (unless the config says otherwise).
    if own.essential != Some(false) {
        end::mark_essential(&scandir.join(&rule.slot)).map_err(RedirectError::Essential)?;
    }
    for w in &warnings {
        crate::msg::warn(w);
    }
    // Not persisted: the container's command asks for the slot again at
    // every boot.
    let want_up = |name: &str| {
        control::start_unrecorded(&scandir.join(name), SUPERVISE_TIMEOUT)
            .map_err(RedirectError::Control)
    };
    want_up(&rule.slot)?;
    for name in &rule.also_start {
        let Some(slot) = model.slot(name) else {
            continue;
        };
        if health::autostarts(slot, &facts) {
            want_up(name)?;
            started.push(name.clone());
        }
    }
    Ok(started)
}

/// Bound on a displaced slot's stop: its `stop_timeout_ms` when longer.
const DISPLACE_TIMEOUT: Duration = Duration::from_secs(10);

/// Stops `name` (not persisted) and waits until it is down, so that a
/// foreground run of its program never runs beside it. True when it was
/// up or wanted up; a slot that is not there or not supervised needs
/// nothing.
pub fn displace(model: &Model, name: &str, scandir: &Path) -> Result<bool, RedirectError> {
    let dir = scandir.join(name);
    let Ok(st) = crate::s6::status::read_slot(&dir) else {
        return Ok(false);
    };
    if !(st.up || st.want_up) || !crate::s6::control::supervised(&dir) {
        return Ok(false);
    }
    let kill_after = model
        .slot(name)
        .and_then(|s| s.stop_timeout_ms)
        .map(|ms| Duration::from_millis(u64::from(ms)) + Duration::from_secs(1));
    let timeout = kill_after.map_or(DISPLACE_TIMEOUT, |k| k.max(DISPLACE_TIMEOUT));
    let slots = control::Slots {
        scandir,
        model: Some(model),
    };
    match control::stop_in_order(&slots, &[name.to_string()], timeout) {
        Ok(Waited::Met | Waited::Gone(_)) => Ok(true),
        Ok(_) => Err(RedirectError::Control(ControlError::Timeout {
            slot: dir,
            what: "down",
        })),
        Err(e) => Err(RedirectError::Stop(e)),
    }
}

/// The line on stderr (an info message) that tells a user where their
/// process went and how to get the old behaviour back.
pub fn breadcrumb(routed: &[std::ffi::OsString], rule: &Redirect, started: &[String]) -> String {
    let flag = rule.opt_out_flag.as_ref().map(|f| format!("add {f}"));
    let env = rule.opt_out_env.as_ref().map(|v| format!("set {v}=1"));
    let opt_outs: Vec<String> = flag.into_iter().chain(env).collect();
    let also = if started.len() > 1 {
        format!(" (with {})", started[1..].join(", "))
    } else {
        String::new()
    };
    let mut line = format!(
        "`{}` now runs under s6 supervision in slot {}{also}: restarted on crash, logs in docker logs; see `svctl status`.",
        super::shown(routed),
        rule.slot
    );
    if !opt_outs.is_empty() {
        line.push_str(&format!(
            " To run it in the foreground instead, {}.",
            opt_outs.join(" or ")
        ));
    }
    line
}

/// Why a redirect with words after its `match` is refused (see
/// [`super::Decision::Refused`]), and the two ways on.
pub fn refusal(
    routed: &[std::ffi::OsString],
    rule: &Redirect,
    extra: &[std::ffi::OsString],
    command: Option<&[String]>,
) -> String {
    let runs = command.map_or_else(String::new, |c| format!(" (`{}`)", c.join(" ")));
    let mut line = format!(
        "`{}` matches the redirect to slot {}, which runs its own command{runs}: `{}` would be dropped, so nothing was started. Put them in the slot's command in the config",
        super::shown(routed),
        rule.slot,
        super::shown(extra),
    );
    match &rule.opt_out_flag {
        Some(flag) => line.push_str(&format!(", or add {flag} to run them in the foreground.")),
        None => line.push('.'),
    }
    line
}

fn stop_signals() -> SigSet {
    [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP]
        .into_iter()
        .collect()
}

/// Blocks until SIGTERM, SIGINT or SIGHUP; returns the exit code 128+N.
/// Spawns nothing and so reaps nothing; uses no CPU while waiting.
pub fn keep_alive() -> i32 {
    let set = stop_signals();
    if set.thread_block().is_err() {
        return i32::from(exit::SYSTEM);
    }
    loop {
        if let Ok(sig) = set.wait() {
            return exit::signaled(sig as i32);
        }
    }
}

/// Replaces this process with the smallest keep-alive there is, keeping
/// its pid (it is still the CMD): s6-overlay's own `s6-pause`, which a
/// redirect can count on (it only happens under s6-overlay). Its name
/// stays: s6-overlay's utilities are one binary that dispatches on it. A
/// stop signal kills it, so its parent sees 128+N as from [`keep_alive`]. If that exec fails, a fresh
/// `svkit-wrap --hold SLOT` (without the pages config, render and
/// reconcile touched). Returns only if both failed; the caller then holds
/// in-process.
pub fn exec_keep_alive(slot: &str) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    // Unblocked: s6-pause waits in pause(2) for a signal to end it. A stop
    // arriving before it runs ends this process the same way.
    let _ = stop_signals().thread_unblock();
    let _ = std::process::Command::new(crate::container::s6_tool("s6-pause")).exec();
    // The real path, not /proc/self/exe: the name is what ps and comm show.
    // Run as a link to the multi-call `svkit`, the real path is svkit's:
    // the `svkit-wrap` link beside it keeps the name.
    let exe = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    let link = exe.with_file_name("svkit-wrap");
    let exe = if link.exists() { link } else { exe };
    // Blocked across the exec (the mask survives it): a stop arriving
    // before the new image waits is queued, and still ends in 128+N.
    let _ = stop_signals().thread_block();
    std::process::Command::new(exe)
        .arg0("svkit-wrap")
        .args(["--hold", slot])
        .exec()
}
