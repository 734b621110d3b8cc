//! `run` and `data/check`; what `env_file` and `secrets` add to `run`.

use std::fmt::Write as _;

use super::quote::{sh_quote, sh_words};
use super::{RenderEnv, SCRIPT_CAPACITY};
use crate::config::{Condition, Model, Slot, CHECK_NOTIFICATION_FD};
use crate::probe::Probe;
use crate::schedule::When;
use crate::slot::end::{
    CHECK_OUTPUT_FILE, DEPENDENCY_FAILED_EXIT, ESSENTIAL_FILE, STARTED_FILE, START_ERROR_FILE,
    WAITING_FILE,
};

/// Shebang and shellcheck directives. Values are single-quoted on purpose,
/// so shellcheck's hints about `$` or `\` inside single quotes (SC2016,
/// SC1003) are false alarms here: they are disabled only in scripts that
/// hold such a value.
fn header(with_contenv: Option<&str>, body: &str) -> String {
    let literal = body.lines().any(|l| {
        !l.starts_with('#')
            && l.contains('\'')
            && (l.contains('$') || l.contains('`') || l.contains('\\'))
    });
    let mut directives = Vec::new();
    let mut out = String::with_capacity(body.len() + 128);
    match with_contenv {
        // with-contenv as the interpreter restores the container env before
        // sh starts, so the slot's own exports below win over it.
        Some(wc) => {
            directives.push("shell=sh");
            let _ = writeln!(out, "#!{wc} sh");
        }
        None => out.push_str("#!/bin/sh\n"),
    }
    if literal {
        directives.push("disable=SC1003,SC2016");
    }
    if !directives.is_empty() {
        let _ = writeln!(out, "# shellcheck {}", directives.join(" "));
    }
    out.push_str(body);
    out
}

pub(super) fn notification_fd(slot: &Slot) -> Option<u32> {
    slot.readiness.as_ref().map(|r| match r.probe {
        Probe::Notification(fd) => fd,
        _ => CHECK_NOTIFICATION_FD,
    })
}

/// `s6-setuidgid USER` words when privileges must be dropped.
pub(super) fn drop_words(slot: &Slot, env: &RenderEnv) -> Vec<String> {
    env.drop_to(slot)
        .map(|u| vec![env.tool("s6-setuidgid"), u.to_string()])
        .unwrap_or_default()
}

pub(super) fn run(model: &Model, slot: &Slot, env: &RenderEnv) -> String {
    let mut o = String::with_capacity(SCRIPT_CAPACITY);
    let _ = writeln!(
        o,
        "# svkit slot {} (declared in {}). Generated: edit the config, not this file.",
        slot.name,
        // Escaped: a newline would end the comment.
        crate::msg::escape(&slot.origin.file.display().to_string()),
    );
    if let Some(mut words) = job_words(model, slot, "wait") {
        if let Some(t) = slot.schedule.as_ref().and_then(|s| s.timeout_s) {
            words.extend(["--timeout".into(), t.to_string()]);
        }
        words.extend(["--", "./run", "run"].map(String::from));
        let _ = writeln!(
            o,
            "# A job: svkit job wait sleeps until the next tick of its schedule, then runs\n# this script again, for one run.\n[ \"$1\" = run ] || exec {}",
            sh_words(&words)
        );
    }
    // First, before anything that takes time: s6 already says this slot is
    // up, so status and `svctl wait` must see at once that it is waiting.
    o.push_str(&mark_waiting(slot));
    // Then: a copy of the program whose supervisor died hard must not run
    // beside the one this script starts (see `stray`).
    o.push_str(&claim(slot, env));
    o.push_str(&start_liveness(slot, env));
    let readiness_check = (slot.readiness.as_ref()).filter(|r| r.check_command().is_some());
    let check = readiness_check.is_some();
    let _ = writeln!(o, "export {}={}", model.sentinel_env, sh_quote(&slot.name));
    for (k, v) in &slot.env {
        let _ = writeln!(o, "export {k}={}", sh_quote(v));
    }
    let mut words: Vec<String> = slot_env_words(model, slot, check);
    if let Some(c) = readiness_check {
        o.push_str("# s6-notifyoncheck runs data/check until it passes, then signals readiness.\n");
        words.push(env.tool("s6-notifyoncheck"));
        words.extend(["-d", "-n", "0", "-w"].map(String::from));
        words.push(c.interval_ms.to_string());
        if c.timeout_ms > 0 {
            words.extend(["-T".into(), c.timeout_ms.to_string()]);
        }
        if let Some(cwd) = &slot.cwd {
            // s6-notifyoncheck must start in the slot dir (it polls
            // ./data/check there), so the cd happens after it, in a tiny sh.
            let cd = "cd \"$1\" || exit 111; shift; exec \"$@\"";
            words.extend(["/bin/sh", "-c", cd, "svkit-cwd", cwd].map(String::from));
        }
    }
    words.extend(drop_words(slot, env));
    words.extend(slot.command.iter().cloned());
    // After the wait, which reads and writes files of the slot dir.
    o.push_str(&wait_for_deps(slot));
    if let (Some(cwd), false, false) = (&slot.cwd, check, uses_slot_env(slot)) {
        let _ = writeln!(o, "cd {} || exit 111", sh_quote(cwd));
    }
    if slot.log.is_some() {
        // Only now: until here stderr is the container's own (s6-supervise's),
        // so nothing this script or its helpers print can wait on a full
        // log pipe.
        o.push_str("# The program's stderr joins its stdout so the logger gets both.\nexec 2>&1\n");
    }
    let _ = writeln!(o, "exec {}", sh_words(&words));
    header(env.with_contenv.as_deref(), &o)
}

/// `svkit job VERB` and the job's schedule, as `run` (`wait`) and `finish`
/// (`end`) pass it; None for a slot that is no job.
pub(super) fn job_words(model: &Model, slot: &Slot, verb: &str) -> Option<Vec<String>> {
    let s = slot.schedule.as_ref()?;
    let mut w: Vec<String> = ["svkit", "job", verb, "--slot", &slot.name, "--state-dir"]
        .map(String::from)
        .to_vec();
    w.push(model.state_dir.clone());
    match &s.when {
        When::Cron(_) => w.extend(["--cron".into(), s.text.trim_start_matches("cron ").into()]),
        When::Every(n) => w.extend(["--every".into(), n.to_string()]),
    }
    if let Some(tz) = &s.timezone {
        w.extend(["--timezone".into(), tz.clone()]);
    }
    if s.jitter_s > 0 {
        w.extend(["--jitter".into(), s.jitter_s.to_string()]);
    }
    if s.catch_up {
        w.push("--catch-up".into());
    }
    Some(w)
}

/// The claim refuses the start while the slot's program runs in the
/// foreground (`crate::claim`, exit 5): `run` then exits with it, and
/// anything else it fails with never keeps the slot from starting. With a
/// logger and a user to drop to, the claim also hands the log pipe to that
/// user (`--own-stdout`, see `stray`): the pipe is the slot's own, the
/// container's stdout is never touched (a slot without a logger gets none
/// of this).
fn claim(slot: &Slot, env: &RenderEnv) -> String {
    let refused = crate::msg::exit::svctl::IN_FOREGROUND;
    let (note, own) = match (slot.log.is_some(), drop_words(slot, env).as_slice()) {
        (true, [_, user]) => (
            "\n# The log pipe is root's (0600): slot-claim hands it to the user, who must be able to open /dev/stdout.",
            format!(" --own-stdout {}", sh_quote(user)),
        ),
        _ => ("", String::new()),
    };
    format!(
        "# slot-claim exits {refused} while the program runs in the foreground (an opt-out): never a second copy.{note}\nsvkit slot-claim $${own} || [ \"$?\" != {refused} ] || exit {refused}\n"
    )
}

/// `liveness`: the watcher starts before the program (from the slot dir,
/// watching this shell, which becomes the program) and ends with it.
fn start_liveness(slot: &Slot, env: &RenderEnv) -> String {
    let Some(l) = &slot.liveness else {
        return String::new();
    };
    let tail: Vec<String> = match &l.probe {
        Probe::Tcp(a) => vec!["--tcp".into(), a.to_string()],
        Probe::Http(h) => vec!["--http".into(), h.url.clone()],
        Probe::Exec(argv) => [vec!["--".into()], drop_words(slot, env), argv.clone()].concat(),
        // Not a liveness check: config never makes one.
        Probe::Notification(_) => return String::new(),
    };
    let (every, failures) = (l.interval_ms, l.failures);
    format!(
        "# liveness: a watcher checks every {every} ms; {failures} failures in a row restart the slot.\nsvkit liveness --detach --slot-dir \"$PWD\" --pid $$ --interval {every} --timeout {} --failures {failures} {} || echo \"svkit: slot {}: liveness watcher not started\" >&2\n",
        l.timeout_ms,
        sh_words(&tail),
        slot.name
    )
}

/// What `depends_on` waits for, in `.svkit-waiting` (`svctl status`
/// shows it, `svctl wait` and the liveness watcher honour it), written
/// before anything else `run` does; `wait_for_deps` removes it.
fn mark_waiting(slot: &Slot) -> String {
    if slot.depends_on.is_empty() {
        return String::new();
    }
    format!("printf '%s\\n' \"{}\" > {WAITING_FILE}\n", waits_for(slot))
}

/// `db (ready), migrate (completed)`: what the slot waits for, as its log,
/// `.svkit-waiting` and status say it.
fn waits_for(slot: &Slot) -> String {
    let what: Vec<String> = (slot.depends_on.iter())
        .map(|d| format!("{} ({})", d.on, d.condition.as_str()))
        .collect();
    what.join(", ")
}

/// `depends_on`: wait (no time limit, without polling, through a
/// dependency that is gone or failed) until each condition holds, saying
/// so in the log (`svkit say`: never blocked by a full log pipe) and in
/// `.svkit-waiting` (what `svctl status` shows).
fn wait_for_deps(slot: &Slot) -> String {
    if slot.depends_on.is_empty() {
        return String::new();
    }
    let what = waits_for(slot);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# depends_on: start only once {what}.\nsvkit say \"svkit: slot {} waits for {what}\"",
        slot.name
    );
    let mut waits = Vec::new();
    for cond in [Condition::Up, Condition::Ready, Condition::Completed] {
        let on: Vec<&str> = (slot.depends_on.iter())
            .filter(|d| d.condition == cond)
            .map(|d| d.on.as_str())
            .collect();
        if on.is_empty() {
            continue;
        }
        let target = match cond {
            Condition::Completed => "done",
            other => other.as_str(),
        };
        // Quoted: shellcheck takes a bare `done` for the keyword.
        waits.push(format!(
            "svctl wait \"{target}\" --forever {}",
            on.join(" ")
        ));
    }
    let plain = waits.join(" && ");
    if gives_up_on_deps(slot) {
        let give_up = waits
            .iter()
            .map(|w| w.replacen(" --forever ", " --forever --give-up ", 1))
            .collect::<Vec<_>>()
            .join(" && ");
        let waits = match slot.essential {
            Some(true) => give_up,
            // A redirect decides at run time whether the slot is essential.
            _ => format!("if [ -e {ESSENTIAL_FILE} ]; then {give_up}; else {plain}; fi"),
        };
        let _ = writeln!(
            o,
            "# An essential slot whose dependency failed for good can never start: the\n# container ends (finish reads why from {START_ERROR_FILE}).\nrc=0\nwhy=$({waits}) || rc=$?\nif [ \"$rc\" = 2 ]; then\n  printf '%s\\n' \"$why\" > {START_ERROR_FILE}\n  exit {DEPENDENCY_FAILED_EXIT}\nfi\n[ \"$rc\" = 0 ] || exit 111"
        );
    } else {
        let _ = writeln!(o, "{plain} || exit 111");
    }
    let _ = writeln!(o, "# When the program starts: uptime and the readiness timeout count from here.\n: > {STARTED_FILE}\nrm -f {WAITING_FILE}");
    o
}

pub(super) fn check_script(slot: &Slot, env: &RenderEnv) -> Option<String> {
    let command = slot.readiness.as_ref()?.check_command()?;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# svkit readiness check of slot {}: s6-notifyoncheck runs this until it exits 0.\n# Its output never goes between the program's lines in the log: {CHECK_OUTPUT_FILE}\n# holds what the last run printed.\nexec >{CHECK_OUTPUT_FILE} 2>&1",
        slot.name
    );
    if let Some(cwd) = &slot.cwd {
        let _ = writeln!(o, "cd {} || exit 1", sh_quote(cwd));
    }
    let mut words = drop_words(slot, env);
    words.extend(command.iter().cloned());
    let _ = writeln!(o, "exec {}", sh_words(&words));
    Some(header(None, &o))
}

// `env_file` and `secrets` in `run`: the script execs `svkit slot-env`,
// which reads the files at start and execs the rest of the line. Only
// their paths are rendered: no value ever lands in a file.

/// Whether `run` goes through `svkit slot-env`.
fn uses_slot_env(slot: &Slot) -> bool {
    !slot.env_files.is_empty() || !slot.secrets.is_empty()
}

/// Whether `run` may leave a start error for `finish`: `slot-env` refusing
/// an input, or an essential slot's dependency failed for good
/// ([`gives_up_on_deps`]).
pub(super) fn may_not_start(slot: &Slot) -> bool {
    uses_slot_env(slot) || gives_up_on_deps(slot)
}

/// An essential slot (or one a redirect may make essential) stops waiting
/// for a dependency that failed for good: it could never start, and the
/// container must end. Any other slot waits on, visibly.
fn gives_up_on_deps(slot: &Slot) -> bool {
    !slot.depends_on.is_empty() && slot.essential != Some(false)
}

/// The words before the rest of `run`'s exec line; empty without inputs.
/// `slot-env` also enters `cwd` (after it reads the files, from the slot
/// dir, where it leaves a start error for `finish`), except with a
/// readiness check, whose helper must start in the slot dir and enters
/// `cwd` itself.
fn slot_env_words(model: &Model, slot: &Slot, check: bool) -> Vec<String> {
    if !uses_slot_env(slot) {
        return Vec::new();
    }
    let mut w: Vec<String> = ["svkit", "slot-env", "--slot", &slot.name, "--sentinel"]
        .map(String::from)
        .to_vec();
    w.push(model.sentinel_env.clone());
    for f in &slot.env_files {
        w.extend(["--env-file".into(), f.clone()]);
    }
    for (var, path) in &slot.secrets {
        w.extend(["--secret".into(), format!("{var}={path}")]);
    }
    if let (Some(cwd), false) = (&slot.cwd, check) {
        w.extend(["--cwd".into(), cwd.clone()]);
    }
    w.push("--".into());
    w
}
