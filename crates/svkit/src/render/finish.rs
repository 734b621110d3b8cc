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
//! Backoff is stateless: it is derived from the death tally through
//! `s6-permafailon` (which counts deaths within a window). After the k-th
//! death in a row the delay is min(max_s, 2^(k-2)) s (none after the first).
//! Deaths count as "in a row" while k of them fit in the time k-1 runs
//! shorter than `reset_after_s` plus their delays would take, so a run that
//! outlives `reset_after_s` resets the delay. The delay uses POSIX `sleep`;
//! if it is missing the delay is skipped with a warning and s6-supervise's
//! own one-second spacing still applies.

use std::fmt::Write as _;

use super::quote::sh_quote;
use super::{script, RenderEnv};
use crate::config::{Backoff, Kind, OnCleanExit, Slot, EXEC_FAILURE_EXIT_CODES};
use crate::container::RUN_DIR_ENV;
use crate::slot::end::{
    self, End, DECIDED_EXITCODE_NAME, END_FILE, ESSENTIAL_FILE, HALT, INIT_PID_ENV, REQUEST_PREFIX,
    RESULTS_DIR, START_ERROR_FILE,
};
use crate::slot::health;

/// Spare time for the probes around the sleep, so s6-supervise never kills
/// a finish script that is merely waiting out its delay.
const FINISH_SLACK_MS: u32 = 5000;

pub(super) fn timeout_finish_ms(slot: &Slot) -> u32 {
    let b = slot.restart.backoff;
    b.max_s.saturating_mul(1000).saturating_add(FINISH_SLACK_MS)
}

/// (k, window_s, delay_s): after the k-th death in a row, wait delay_s.
pub fn backoff_steps(b: Backoff) -> Vec<(u32, u64, u32)> {
    let mut steps = Vec::new();
    let mut window: u64 = 0;
    let mut prev_delay: u32 = 0;
    let mut k: u32 = 2;
    loop {
        // One more quick run: the previous delay, s6's 1 s respawn spacing,
        // 1 s of slack for the scripts, and a run shorter than reset_after_s.
        window += u64::from(prev_delay) + 2 + u64::from(b.reset_after_s);
        let delay = 1u32.checked_shl(k - 2).unwrap_or(u32::MAX).min(b.max_s);
        steps.push((k, window, delay));
        if delay >= b.max_s || k >= 100 {
            break;
        }
        prev_delay = delay;
        k += 1;
    }
    steps
}

/// `essential` and `end_container`: a slot that ends for good ends the
/// container with its exit code (a oneshot only when it fails), through
/// the init's exit code file and halt (s6-overlay's, or svkit-init's).
fn essential(slot: &Slot) -> String {
    let mut o = String::new();
    match slot.essential {
        Some(true) => o.push_str("essential=1\n"),
        Some(false) => o.push_str("essential=\n"),
        None => {
            let _ = writeln!(
                o,
                "essential=\n# A redirect made this slot essential for this container.\n[ -e {ESSENTIAL_FILE} ] && essential=1"
            );
        }
    }
    // The run dir and the halt are s6-overlay's unless svkit-init runs
    // the tree: it sets both variables for every slot (docs/image.md).
    let _ = writeln!(
        o,
        "end_container() {{\n  results=${{{RUN_DIR_ENV}:-/run}}/{RESULTS_DIR}\n  [ -d \"$results\" ] || return 0\n  e=$code\n  [ \"$code\" = 256 ] && e=$((128 + sig))\n  echo \"svkit: slot {name} is essential: stopping the container with exit code $e\" >&2\n  echo \"$e\" > \"$results/exitcode\"\n  echo \"$e\" > \"$results/{DECIDED_EXITCODE_NAME}\"\n  if [ -n \"${{{INIT_PID_ENV}:-}}\" ]; then\n    kill -USR1 \"${INIT_PID_ENV}\"\n  else\n    {HALT}\n  fi\n}}",
        name = slot.name,
    );
    o
}

/// s6-permafailon's status list of the records that are deaths
/// (`health::is_death`): every exit code and signal (a signal death is
/// recorded as exit 128+N), but the exit 0 of a slot that completes.
fn deaths_list(slot: &Slot) -> &'static str {
    if health::completes(slot) {
        "1-255"
    } else {
        "0-255"
    }
}

pub(super) fn finish(slot: &Slot, env: &RenderEnv) -> String {
    let r = &slot.restart;
    // Slot names are [a-z0-9._-]: safe inside double quotes as they are.
    let name = &slot.name;
    let mut o = script();
    let _ = writeln!(
        o,
        "# svkit restart policy of slot {}. Generated: edit the config, not this file.",
        slot.name
    );
    o.push_str("# $1 = exit code (256 if killed by a signal), $2 = signal number, $4 = pid.\n");
    let _ = writeln!(
        o,
        "# Exiting 125 makes s6-supervise stop the slot for good; {END_FILE} says why\n# (svctl status reads it). A death svctl asked for is marked supervise/{REQUEST_PREFIX}PID."
    );
    // Every death runs this: a test is a builtin, `rm` a process.
    let _ = writeln!(
        o,
        "if [ -e {END_FILE} ] || [ -L {END_FILE} ]; then rm -f {END_FILE}; fi"
    );
    // Whether this death was asked for matters to the clean-exit rule, the
    // crash-loop count and the backoff; the records go after every death.
    let _ = writeln!(
        o,
        "requested=\n[ -e \"supervise/{REQUEST_PREFIX}${{4:-none}}\" ] && requested=1"
    );
    let _ = writeln!(
        o,
        "for f in supervise/{REQUEST_PREFIX}*; do\n  if [ -e \"$f\" ] || [ -L \"$f\" ]; then rm -f supervise/{REQUEST_PREFIX}*; fi\n  break\ndone"
    );
    o.push_str("code=${1:-0}\nsig=${2:-0}\n");
    let svstat = sh_quote(&env.tool("s6-svstat")).into_owned();
    o.push_str(&essential(slot));
    o.push_str(
        "# keep_down RECORD MESSAGE: unless a stop was asked for (nothing to decide then).\n# stderr is the container's own (s6-supervise's), never the slot's log pipe.\n",
    );
    let _ = writeln!(
        o,
        "keep_down() {{\n  [ \"$({svstat} -o wantedup .)\" = false ] && exit 0\n  printf '%s\\n' \"$1\" > {END_FILE}\n  echo \"svkit: slot {name} $2\" >&2\n  [ -n \"$essential\" ] && end_container\n  exit 125\n}}"
    );
    if super::inputs::may_not_start(slot) {
        let _ = writeln!(
            o,
            "# A refused env file or secret, or a dependency failed for good: a fix is\n# needed, not a retry.\nif [ -e {START_ERROR_FILE} ]; then\n  why=\n  IFS= read -r why < {START_ERROR_FILE}\n  rm -f {START_ERROR_FILE}\n  keep_down \"failed: $why\" \"could not start: $why\"\nfi"
        );
    }
    // After the start error (its file must not outlive this death), before
    // any rule: a stop (svctl stop, s6-svc -d, the shutdown) is neither a
    // failure nor a crash to count or wait after.
    let _ = writeln!(
        o,
        "# A stop leaves nothing to decide: no record, no count, no backoff.\n[ -z \"$requested\" ] && [ \"$({svstat} -o wantedup .)\" = false ] && exit 0"
    );
    o.push_str("# The shell or s6 could not exec the command: no retry can help.\n");
    let _ = writeln!(
        o,
        "case $code in\n  126) keep_down \"failed: exited 126: command not executable\" \"exited 126, its command is not executable: not restarting\" ;;\n  127) keep_down \"failed: exited 127: command not found\" \"exited 127, its command was not found: not restarting\" ;;\nesac"
    );
    let codes: Vec<String> = (r.permanent_exit_codes.iter())
        .filter(|c| !EXEC_FAILURE_EXIT_CODES.contains(c))
        .map(u8::to_string)
        .collect();
    if !codes.is_empty() {
        let _ = writeln!(o, "case $code in\n  {})", codes.join("|"));
        o.push_str("    keep_down \"failed: exited $code, a permanent exit code\" \"exited $code, a permanent failure: not restarting\" ;;\nesac\n");
    }
    if r.on_clean_exit == OnCleanExit::Stop {
        o.push_str(
            "# A clean exit of the program's own accord, not one asked for, ends the slot.\n",
        );
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
            "if [ \"$code\" = 0 ] && [ -z \"$requested\" ]; then\n{goes_on}  keep_down \"{}\" \"exited cleanly: not restarting (on_clean_exit: stop)\"\nfi",
            done.trim_end()
        );
    }
    o.push_str(
        "# An asked-for restart is neither a crash nor a reason to wait.\n[ -n \"$requested\" ] && exit 0\n",
    );
    let permafailon = sh_quote(&env.tool("s6-permafailon")).into_owned();
    let counted = deaths_list(slot);
    if let Some(m) = r.max_deaths {
        o.push_str(
            "# s6-permafailon counts this death and the earlier ones in supervise/death_tally.\n",
        );
        if health::completes(slot) {
            o.push_str("# Its exit 0 is a completion, not a death: not counted, here or below.\n");
        }
        let _ = writeln!(
            o,
            "rc=0\n{permafailon} {} {} {counted} true || rc=$?",
            m.within_s, m.deaths
        );
        let _ = writeln!(
            o,
            "if [ \"$rc\" -eq 125 ]; then\n  keep_down \"failed: died {d} times within {w} s\" \"died {d} times within {w} s: not restarting\"\nfi",
            d = m.deaths,
            w = m.within_s
        );
    }
    // max_s 0: no delay of svkit's (s6 still waits 1 s between starts).
    if r.backoff.max_s > 0 {
        let b = r.backoff;
        let _ = writeln!(
            o,
            "# Backoff: k deaths within the window k-1 runs shorter than {} s would take\n# are a crash loop; wait longer after each one, up to {} s.",
            b.reset_after_s, b.max_s
        );
        o.push_str("died() {\n");
        let _ = writeln!(
            o,
            "  rc=0\n  {permafailon} \"$2\" \"$1\" {counted} true >/dev/null 2>&1 || rc=$?\n  [ \"$rc\" -eq 125 ]\n}}"
        );
        o.push_str("delay=0\n");
        // Each step only when the one before it held.
        let mut after_prev = String::new();
        for (k, window, delay) in backoff_steps(b) {
            let _ = writeln!(o, "{after_prev}died {k} {window} && delay={delay}");
            after_prev = format!("[ \"$delay\" = {delay} ] && ");
        }
        o.push_str("if [ \"$delay\" -gt 0 ]; then\n");
        let _ = writeln!(
            o,
            "  echo \"svkit: slot {name} is crash-looping: restarting in $delay s\" >&2"
        );
        o.push_str("  sleep \"$delay\" || echo \"svkit: sleep failed: restarting without delay\" >&2\nfi\n");
    }
    o.push_str("exit 0\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Model};

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
        (finish(slot, &env), super::super::run::run(m, slot, &env))
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
        let (a, _) = scripts(&m, "a");
        assert!(
            a.contains("/command/s6-permafailon 60 5 0-255 true || rc=$?"),
            "{a}"
        );
        assert!(a.contains("died 2 62 && delay=1"), "{a}");
        assert!(a.contains("  127) keep_down"), "{a}");
        let (never, _) = scripts(&m, "never");
        assert!(!never.contains("permafailon 60 5"), "{never}");
        assert!(never.contains("died 2 62 && delay=1"), "{never}");
        let (now, _) = scripts(&m, "now");
        assert!(!now.contains("delay=") && !now.contains("sleep"), "{now}");
        // 126/127 stay permanent without any permanent_exit_codes.
        let (job, _) = scripts(&m, "job");
        assert!(job.contains("s6-permafailon 30 5 1-255"), "{job}");
        assert!(
            job.contains("  126) keep_down") && !job.contains("  78)"),
            "{job}"
        );
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

    /// The records s6-permafailon counts are exactly the deaths of
    /// `health::is_death`, for a slot that completes and one that does not.
    #[test]
    fn finish_counts_the_deaths_status_counts() {
        use crate::s6::status::Death;
        let m = model(
            r#"{ "name": "svc", "command": ["x"] },
               { "name": "job", "command": ["x"], "type": "oneshot" },
               { "name": "until", "command": ["x"], "restart": { "on_clean_exit": "stop" } }"#,
        );
        for name in ["svc", "job", "until"] {
            let slot = m.slot(name).expect("slot");
            let (lo, hi) = deaths_list(slot).split_once('-').expect("a range");
            let (lo, hi): (u8, u8) = (lo.parse().expect("lo"), hi.parse().expect("hi"));
            let (f, _) = scripts(&m, name);
            assert!(f.contains(&format!("60 5 {lo}-{hi} true")), "{f}");
            assert!(f.contains(&format!("\"$1\" {lo}-{hi} true")), "{f}");
            let mut records: Vec<Death> = (0..=255).map(|code| Death { code, signal: 0 }).collect();
            records.extend((1..=64).map(|signal| Death {
                code: 128 + signal,
                signal,
            }));
            for d in records {
                // s6-permafailon: a listed signal, or a listed exit code.
                let counted = (lo..=hi).contains(&d.code);
                assert_eq!(
                    counted,
                    health::is_death(d, health::completes(slot)),
                    "{name}: {d:?}"
                );
            }
        }
        let job = m.slot("job").expect("job");
        assert!(health::completes(job) && !health::completes(m.slot("svc").expect("svc")));
    }

    #[test]
    fn steps_grow_to_max() {
        let s = backoff_steps(Backoff {
            max_s: 30,
            reset_after_s: 60,
        });
        let delays: Vec<u32> = s.iter().map(|x| x.2).collect();
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 30]);
        assert_eq!(s[0], (2, 62, 1));
        assert_eq!(s[1], (3, 62 + 1 + 62, 2));
    }
}
