//! `finish`: the restart policy.
//!
//! s6-supervise runs `finish` after every death with `$1` = exit code (256
//! when killed by a signal), `$2` = signal number and `$4` = the pid (s6
//! 2.13+), having first appended the death to `supervise/death_tally`.
//! Exiting 125 tells it to stop the slot for good (until an operator
//! starts it again); before that, `finish` records why (see `slot::end`),
//! and it never does so for a death that was asked for: a stop (s6 no
//! longer wants the slot up) or a restart or signal sent by svctl.
//!
//! The script decides what its builtins can (the exit code, the asked-for
//! death) and ends in one exec of `svkit slot-end`: `keep` keeps the slot
//! down, `died` applies the crash-loop rule and the backoff
//! (`slot::health::after_death`, stateless: derived from the death tally).
//! Neither forks, and an EXIT trap turns a fork that fails anywhere before
//! (a pids limit) into `died`: such a death still counts, with its backoff.

use std::fmt::Write as _;

use super::quote::sh_words;
use super::script;
use crate::config::{Kind, OnCleanExit, Slot, EXEC_FAILURE_EXIT_CODES};
use crate::slot::end::{self, End, END_FILE, ESSENTIAL_FILE, REQUEST_PREFIX, START_ERROR_FILE};
use crate::slot::health;

/// Spare time for the probes around the sleep, so s6-supervise never kills
/// a finish script that is merely waiting out its delay.
const FINISH_SLACK_MS: u32 = 5000;

pub(super) fn timeout_finish_ms(slot: &Slot) -> u32 {
    let b = slot.restart.backoff;
    b.max_s.saturating_mul(1000).saturating_add(FINISH_SLACK_MS)
}

/// Whether a redirect made the slot essential, unless the config says.
fn essential(slot: &Slot) -> String {
    match slot.essential {
        Some(true) => "essential=1\n".to_string(),
        Some(false) => "essential=\n".to_string(),
        None => format!(
            "essential=\n# A redirect made this slot essential for this container.\n[ -e {ESSENTIAL_FILE} ] && essential=1\n"
        ),
    }
}

/// `svkit slot-end died ...`: the crash-loop rule of `slot`.
fn died(slot: &Slot) -> String {
    let r = &slot.restart;
    let (deaths, within) = r.max_deaths.map_or((0, 0), |m| (m.deaths, m.within_s));
    let completes = if health::completes(slot) {
        " --completes"
    } else {
        ""
    };
    format!(
        "svkit slot-end died \"$code\" \"$sig\" \"$essential\" {deaths} {within} {} {}{completes}",
        r.backoff.max_s, r.backoff.reset_after_s
    )
}

/// Whether this death was asked for (svctl marks it, see `slot::end`), the
/// marks then gone: a test is a builtin, `rm` a process, and every death
/// runs this.
fn requested() -> String {
    format!(
        "[ -e \"supervise/{REQUEST_PREFIX}${{4:-none}}\" ] && requested=1\nfor f in supervise/{REQUEST_PREFIX}*; do\n  if [ -e \"$f\" ] || [ -L \"$f\" ]; then rm -f supervise/{REQUEST_PREFIX}*; fi\n  break\ndone\n"
    )
}

/// A job's `finish`: every end of a run is recorded (`svkit job end`), and
/// s6 starts `run` again, which waits for the next tick; no crash loop, no
/// backoff: a failed run is a result, the next tick its retry.
pub(super) fn job(slot: &Slot, end: Vec<String>) -> String {
    let mut o = script();
    let _ = writeln!(
        o,
        "# svkit job {}: each end of a run is recorded, then run waits for the next tick.\n# Generated: edit the config, not this file.\n# $1 = exit code (256 if killed by a signal), $2 = signal number, $4 = pid.\n# A stop or restart svctl asked for is no result of the run.\nrequested=\n{}exec {} --code \"${{1:-0}}\" --signal \"${{2:-0}}\" --requested \"$requested\"",
        slot.name,
        requested(),
        sh_words(&end)
    );
    o
}

pub(super) fn finish(slot: &Slot) -> String {
    let r = &slot.restart;
    let mut o = script();
    let (name, essential, died) = (&slot.name, essential(slot), died(slot));
    // Whether this death was asked for matters to the clean-exit rule, the
    // crash-loop count and the backoff; the records go after every death.
    let _ = write!(
        o,
        "# svkit restart policy of slot {name}. Generated: edit the config, not this file.
# $1 = exit code (256 if killed by a signal), $2 = signal number, $4 = pid.
# Exiting 125 makes s6-supervise stop the slot for good; {END_FILE} says why
# (svctl status reads it). A death svctl asked for is marked supervise/{REQUEST_PREFIX}PID.
code=${{1:-0}}
sig=${{2:-0}}
{essential}requested=
# Every end is an exec of svkit slot-end, which never forks: keep (the slot
# down, why in {END_FILE}) or died (the crash-loop count and the backoff).
# A fork that fails before (a pids limit) ends this script: then too, a death
# not asked for is counted, with its backoff.
trap '[ \"$?\" = 0 ] || [ -n \"$requested\" ] || exec {died}' EXIT
if [ -e {END_FILE} ] || [ -L {END_FILE} ]; then rm -f {END_FILE}; fi
{}# keep_down RECORD MESSAGE, unless s6 no longer wants the slot up (a stop:
# nothing to decide then; slot-end died looks too). MESSAGE goes to the
# container's own output (s6-supervise's stderr), never the slot's log pipe.
keep_down() {{
  exec svkit slot-end keep \"$code\" \"$sig\" \"$essential\" \"$1\" \"$2\"
}}
",
        requested()
    );
    if super::run::may_not_start(slot) {
        let _ = writeln!(
            o,
            "# A refused env file or secret, or a dependency failed for good: a fix is\n# needed, not a retry.\nif [ -e {START_ERROR_FILE} ]; then\n  why=\n  IFS= read -r why < {START_ERROR_FILE}\n  rm -f {START_ERROR_FILE}\n  keep_down \"failed: $why\" \"could not start: $why\"\nfi"
        );
    }
    let _ = writeln!(
        o,
        "# The shell or s6 could not exec the command: no retry can help.\ncase $code in\n  126) keep_down \"failed: exited 126: command not executable\" \"exited 126, its command is not executable: not restarting\" ;;\n  127) keep_down \"failed: exited 127: command not found\" \"exited 127, its command was not found: not restarting\" ;;\nesac"
    );
    let codes: Vec<String> = (r.permanent_exit_codes.iter())
        .filter(|c| !EXEC_FAILURE_EXIT_CODES.contains(c))
        .map(u8::to_string)
        .collect();
    if !codes.is_empty() {
        let _ = writeln!(o, "case $code in\n  {})\n    keep_down \"failed: exited $code, a permanent exit code\" \"exited $code, a permanent failure: not restarting\" ;;\nesac", codes.join("|"));
    }
    if r.on_clean_exit == OnCleanExit::Stop {
        let done = end::line(&End::Done);
        // A longrun's clean exit is its work over (a redirect's command
        // ended); a oneshot's is its dependents' start.
        let goes_on = if slot.kind == Kind::Oneshot {
            "  # A oneshot done is no failure: the container goes on, its dependents start.\n  essential=\n"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "# A clean exit of the program's own accord, not one asked for, ends the slot.\nif [ \"$code\" = 0 ] && [ -z \"$requested\" ]; then\n{goes_on}  keep_down \"{}\" \"exited cleanly: not restarting (on_clean_exit: stop)\"\nfi",
            done.trim_end()
        );
    }
    o.push_str(
        "# An asked-for restart is neither a crash nor a reason to wait.\n[ -n \"$requested\" ] && exit 0\n",
    );
    let m = r.max_deaths.map_or("never down for good".to_string(), |m| {
        format!("down for good at {} within {} s", m.deaths, m.within_s)
    });
    let b = r.backoff;
    let backoff = if b.max_s > 0 {
        format!(
            "after k deaths within the time k-1 runs shorter than {} s would take, wait\n# longer each time, up to {} s",
            b.reset_after_s, b.max_s
        )
    } else {
        "no backoff of svkit's".to_string()
    };
    let counted = if health::completes(slot) {
        " (its exit 0 is a completion, not a death)"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "# A crash: the deaths in supervise/death_tally{counted}: {m};\n# {backoff}.\nexec {died}"
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Model};
    use crate::render::RenderEnv;

    fn model(slots: &str) -> Model {
        let t = tempfile::tempdir().expect("tempdir");
        let json = format!(r#"{{ "state_dir": "/nonexistent/.svkit", "slots": [{slots}] }}"#);
        std::fs::write(t.path().join("10.json"), json).expect("write");
        config::load(t.path(), &crate::state::LiveInstances)
            .expect("valid config")
            .model
    }

    fn scripts(m: &Model, name: &str) -> (String, String) {
        let env = RenderEnv {
            with_contenv: None,
            s6_bin: Some("/command".into()),
            as_root: true,
        };
        let slot = m.slot(name).expect("slot");
        (finish(slot), super::super::run::run(m, slot, &env))
    }

    #[test]
    fn every_slot_backs_off_and_fails_after_five_deaths_in_a_minute() {
        let m = model(
            r#"{ "name": "a", "command": ["x"] },
               { "name": "never", "command": ["x"], "restart": { "max_deaths": 0 } },
               { "name": "now", "command": ["x"], "restart": { "backoff": { "max_s": 0 } } },
               { "name": "job", "command": ["x"], "type": "oneshot",
                 "restart": { "permanent_exit_codes": [], "within_s": 30 } }"#,
        );
        let died = |f: &str| {
            let at = f
                .rfind("\nexec svkit slot-end died ")
                .expect("ends in died");
            // The same count and backoff after a fork that failed.
            assert!(
                f.contains(&format!("|| exec {}' EXIT", &f[at + 6..].trim_end())),
                "{f}"
            );
            f[at + 1..].to_string()
        };
        let (a, _) = scripts(&m, "a");
        let dead = "exec svkit slot-end died \"$code\" \"$sig\" \"$essential\"";
        assert_eq!(died(&a), format!("{dead} 5 60 30 60\n"));
        assert!(a.contains("  127) keep_down"), "{a}");
        let (never, _) = scripts(&m, "never");
        assert_eq!(died(&never), format!("{dead} 0 0 30 60\n"));
        let (now, _) = scripts(&m, "now");
        assert_eq!(died(&now), format!("{dead} 5 60 0 60\n"));
        // 126/127 stay permanent without any permanent_exit_codes; the
        // exit 0 of a oneshot is no death.
        let (job, _) = scripts(&m, "job");
        assert_eq!(died(&job), format!("{dead} 5 30 30 60 --completes\n"));
        assert!(
            job.contains("  126) keep_down") && !job.contains("  78)"),
            "{job}"
        );
        // Nothing forks on the way to an end but removing a file there is.
        for f in [&a, &job] {
            assert!(!f.contains("$(") && !f.contains("sleep"), "{f}");
        }
    }

    #[test]
    fn only_an_essential_slot_gives_up_on_a_failed_dependency() {
        let m = model(
            r#"{ "name": "db", "command": ["x"] },
               { "name": "api", "command": ["x"], "essential": true, "depends_on": { "db": "up" } },
               { "name": "web", "command": ["x"], "essential": false, "depends_on": { "db": "up" } },
               { "name": "gw", "command": ["x"], "depends_on": { "db": "up" } }"#,
        );
        let (f, r) = scripts(&m, "api");
        assert!(
            r.contains("why=$(svctl wait \"up\" --forever --give-up db) || rc=$?"),
            "{r}"
        );
        assert!(r.contains("exit 69\n"), "{r}");
        assert!(f.contains("if [ -e .svkit-start-error ]"), "{f}");
        let (f, r) = scripts(&m, "web");
        assert!(
            r.contains("svctl wait \"up\" --forever db || exit 111"),
            "{r}"
        );
        assert!(
            !r.contains("--give-up") && !f.contains(".svkit-start-error"),
            "{r}"
        );
        // A redirect decides at run time.
        let (_, r) = scripts(&m, "gw");
        assert!(r.contains("if [ -e .svkit-essential ]; then svctl wait \"up\" --forever --give-up db; else svctl wait \"up\" --forever db; fi"), "{r}");
    }
}
