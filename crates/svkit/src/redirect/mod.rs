//! Redirect: `docker run IMAGE app gateway run` lands in a supervised slot.
//!
//! [`route`] and [`decide`] (here) are pure: facts come in as arguments.
//! [`execute`] ensures the slot, wants it up and starts its companions,
//! then [`exec_keep_alive`] (or [`keep_alive`], in-process) holds the
//! container's command until a stop signal; an opt-out displaces the slot
//! ([`displace`]) and waits for its `depends_on` ([`await_deps`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{SigSet, Signal};

use crate::config::names::is_truthy;
use crate::config::{Condition, Model, Redirect, Slot};
use crate::control::{self, Waited};
use crate::msg::exit;
use crate::reconcile::{self, ApplyOptions, ReconcileError};
use crate::s6::control::{ControlError, SvcCommand};
use crate::s6::status::{read_slot, Status, StatusError};
use crate::slot::{end, health, wait};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// No argv and no `default_program` in the config.
    #[error("no command given and no default_program in the config")]
    NothingToRun,
}

/// No argv → `default_program`; `argv[0]` a program on `PATH` (or a path) →
/// as is; otherwise `default_program` is prepended, so `docker run IMAGE
/// gateway run` means `app gateway run`. Arguments are bytes, as the
/// kernel gives them: whatever is not UTF-8 passes through unchanged.
pub fn route(
    argv: &[OsString],
    default_program: Option<&str>,
    on_path: impl Fn(&OsStr) -> bool,
) -> Result<Vec<OsString>, RouteError> {
    let Some(first) = argv.first() else {
        return default_program
            .map(|p| vec![OsString::from(p)])
            .ok_or(RouteError::NothingToRun);
    };
    if first.as_bytes().contains(&b'/') || on_path(first) {
        return Ok(argv.to_vec());
    }
    let head = default_program.map(OsString::from);
    Ok(head.into_iter().chain(argv.iter().cloned()).collect())
}

/// argv as one line for messages (control characters and bytes that are
/// not UTF-8 shown as escapes).
pub fn shown(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| crate::msg::os(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the wrapper's environment says.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The wrapper's own environment (the sentinel lives here).
    pub process_env: BTreeMap<String, String>,
    /// The container environment (opt-out variables are set with
    /// `docker run -e`, which s6-overlay strips from the CMD's env).
    pub container_env: BTreeMap<String, String>,
    /// Why s6-overlay is not running, or None when it is.
    pub s6_missing: Option<String>,
}

impl Facts {
    fn var(&self, name: &str) -> Option<&str> {
        self.process_env
            .get(name)
            .or_else(|| self.container_env.get(name))
            .map(String::as_str)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run `argv` in the foreground; `warning` says why supervision was
    /// not used when the user should know. `as_slot`: the rule's slot,
    /// whose user, cwd, env, env files and secrets the run gets (not for
    /// a supervised child, which has them). `displaces`: that slot when
    /// it must not run beside the foreground run, whose `depends_on` are
    /// then waited for (an opt-out while s6 runs).
    Foreground {
        argv: Vec<OsString>,
        warning: Option<String>,
        as_slot: Option<String>,
        displaces: Option<String>,
    },
    Redirect {
        rule: Redirect,
    },
    /// A redirect would drop these words after the rule's `match`: the
    /// slot runs its own `command`, never the words given.
    Refused {
        rule: Redirect,
        extra: Vec<OsString>,
    },
}

pub fn decide(model: &Model, routed: &[OsString], facts: &Facts) -> Decision {
    let plain = |argv: &[OsString]| Decision::Foreground {
        argv: argv.to_vec(),
        warning: None,
        as_slot: None,
        displaces: None,
    };
    let Some((rule, stripped, flagged)) = matching_rule(model, routed) else {
        return plain(routed);
    };
    // A supervised child never redirects: that is the recursion guard. It
    // is the slot's own program, so it displaces nothing.
    let supervised = facts.process_env.get(&model.sentinel_env);
    if supervised.is_some_and(|v| !v.is_empty()) {
        return plain(&stripped);
    }
    let foreground = |warning: Option<String>, displaces: Option<String>| Decision::Foreground {
        argv: stripped.clone(),
        warning,
        as_slot: Some(rule.slot.clone()),
        displaces,
    };
    let env_opt_out = rule.opt_out_env.as_deref().and_then(|v| facts.var(v));
    let opted_out = flagged || env_opt_out.is_some_and(is_truthy);
    match &facts.s6_missing {
        None if opted_out => foreground(None, Some(rule.slot.clone())),
        Some(_) if opted_out => foreground(None, None),
        Some(why) => foreground(
            Some(format!(
                "s6 supervision unavailable ({why}): running {} in the foreground",
                shown(&stripped)
            )),
            None,
        ),
        None if stripped.len() > rule.matches.len() => Decision::Refused {
            rule: rule.clone(),
            extra: stripped[rule.matches.len()..].to_vec(),
        },
        None => Decision::Redirect { rule: rule.clone() },
    }
}

/// The first rule whose `match` prefixes argv once that rule's opt-out
/// flag is removed; the flag may appear anywhere.
fn matching_rule<'m>(
    model: &'m Model,
    argv: &[OsString],
) -> Option<(&'m Redirect, Vec<OsString>, bool)> {
    model.redirects.iter().find_map(|r| {
        let flag = r.opt_out_flag.as_deref().map(OsStr::new);
        let stripped: Vec<OsString> = argv
            .iter()
            .filter(|a| Some(a.as_os_str()) != flag)
            .cloned()
            .collect();
        let flagged = stripped.len() != argv.len();
        let matches = stripped.len() >= r.matches.len()
            && stripped
                .iter()
                .zip(&r.matches)
                .all(|(a, m)| a == m.as_str());
        matches.then_some((r, stripped, flagged))
    })
}

// Carrying out a redirect: ensure the slot, want it up, start companions;
// then the keep-alive: the CMD process stays, blocked in the kernel,
// until the container is stopped. In-process, because slim images may
// have no `sleep` (the reference deployment broke on that).

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
const SUPERVISE_TIMEOUT: Duration = Duration::from_secs(5);

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
        if model
            .slot(name)
            .is_some_and(|s| health::autostarts(s, &facts))
        {
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
pub fn breadcrumb(routed: &[OsString], rule: &Redirect, started: &[String]) -> String {
    let flag = rule.opt_out_flag.as_ref().map(|f| format!("add {f}"));
    let env = rule.opt_out_env.as_ref().map(|v| format!("set {v}=1"));
    let opt_outs: Vec<String> = flag.into_iter().chain(env).collect();
    let also = match started {
        [_, rest @ ..] if !rest.is_empty() => format!(" (with {})", rest.join(", ")),
        _ => String::new(),
    };
    let mut line = format!(
        "`{}` now runs under s6 supervision in slot {}{also}: restarted on crash, logs in docker logs; see `svctl status`.",
        shown(routed),
        rule.slot
    );
    if !opt_outs.is_empty() {
        let or = opt_outs.join(" or ");
        line.push_str(&format!(" To run it in the foreground instead, {or}."));
    }
    line
}

/// Why a redirect with words after its `match` is refused (see
/// [`Decision::Refused`]), and the two ways on.
pub fn refusal(
    routed: &[OsString],
    rule: &Redirect,
    extra: &[OsString],
    command: Option<&[String]>,
) -> String {
    let runs = command.map_or_else(String::new, |c| format!(" (`{}`)", c.join(" ")));
    let mut line = format!(
        "`{}` matches the redirect to slot {}, which runs its own command{runs}: `{}` would be dropped, so nothing was started. Put them in the slot's command in the config",
        shown(routed),
        rule.slot,
        shown(extra),
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

// Before a redirect's opt-out runs its slot's program in the foreground:
// the slot's `depends_on`, which its `run` would wait for. They are
// slots, supervised: one whose autostart holds is started when it is not
// wanted up, and each is waited for (bounded: nothing else would end the
// wait of a container's command).

/// How long the dependencies have, together.
pub const DEPENDS_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum DepsError {
    /// Not wanted up, and its autostart does not hold: nothing starts it.
    #[error("it depends on {on} ({}), which is down and whose autostart does not hold (`svctl start {on}` starts it)", condition.as_str())]
    NotStarted { on: String, condition: Condition },
    #[error("it depends on {on} ({}), which failed for good (see `svctl status {on}`)", condition.as_str())]
    Failed { on: String, condition: Condition },
    #[error("it depends on {on} ({}), which is gone or not supervised", condition.as_str())]
    Gone { on: String, condition: Condition },
    #[error("it depends on {on} ({0}), which was not {0} within {1} s", condition.as_str(), after.as_secs())]
    Timeout {
        on: String,
        condition: Condition,
        after: Duration,
    },
    #[error("{0}")]
    Control(ControlError),
    #[error("{0}")]
    Status(StatusError),
}

impl DepsError {
    /// 1 a dependency that never came; 111 s6 not answering.
    pub fn exit_code(&self) -> u8 {
        match self {
            DepsError::Control(_) | DepsError::Status(_) => exit::SYSTEM,
            _ => exit::NOT_OK,
        }
    }
}

/// Waits until every `depends_on` of `slot` holds, `timeout` for them
/// all; `note` hears what is waited for (once per dependency not met yet).
pub fn await_deps(
    model: &Model,
    slot: &Slot,
    scandir: &Path,
    timeout: Duration,
    note: &mut dyn FnMut(String),
) -> Result<(), DepsError> {
    if slot.depends_on.is_empty() {
        return Ok(());
    }
    let deadline = Instant::now() + timeout;
    let mut warnings = Vec::new();
    let facts = health::start_facts(model, &mut warnings);
    let failed = |dir: &Path, st: &Status| health::failed(st, end::read(dir).as_ref());
    for d in &slot.depends_on {
        let (on, condition) = (d.on.clone(), d.condition);
        let dir = scandir.join(&d.on);
        crate::s6::control::wait_supervised(&dir, SUPERVISE_TIMEOUT).map_err(DepsError::Control)?;
        let st = read_slot(&dir).map_err(DepsError::Status)?;
        let done = health::done(&st, end::read(&dir).as_ref());
        if failed(&dir, &st) {
            return Err(DepsError::Failed { on, condition });
        }
        let coming = st.up || st.want_up || (done && condition == Condition::Completed);
        if !coming {
            match model.slot(&d.on) {
                Some(dep) if health::autostarts(dep, &facts) => {
                    crate::slot::end::send(&dir, &[SvcCommand::Up]).map_err(DepsError::Control)?;
                }
                _ => return Err(DepsError::NotStarted { on, condition }),
            }
        }
        let target = match condition {
            Condition::Up => wait::Target::Up,
            Condition::Ready => wait::Target::Ready,
            Condition::Completed => wait::Target::Done,
        };
        let watched = [wait::Watched::new(dir)];
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = |limit| {
            wait::wait(&watched, target, false, Some(limit), &failed).map_err(DepsError::Status)
        };
        let outcome = match wait(Duration::ZERO)? {
            wait::WaitEnd::Timeout { .. } => {
                note(format!(
                    "waiting for {on} ({}) before it runs, up to {} s",
                    condition.as_str(),
                    left.as_secs()
                ));
                wait(left)?
            }
            other => other,
        };
        match outcome {
            wait::WaitEnd::Met => {}
            wait::WaitEnd::Timeout { .. } => {
                return Err(DepsError::Timeout {
                    on,
                    condition,
                    after: timeout,
                })
            }
            wait::WaitEnd::Gone(_) => return Err(DepsError::Gone { on, condition }),
            wait::WaitEnd::Failed(_) => return Err(DepsError::Failed { on, condition }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
