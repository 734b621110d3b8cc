//! How long the stop hook (`50-svkit-stop`) gives the foreground command
//! and the slots at `docker stop`, derived from the config, and whether
//! that fits in the bounds around the hook.
//!
//! The hook stops the foreground command first (its slot's
//! `stop_timeout_ms`, else [`DEFAULT_TIMEOUT`]), then the slots with
//! `svctl stop --all --wait`, which stops them a layer at a time in
//! reverse dependency order, each layer down before the next. So the
//! time the config may ask for is the foreground command's wait plus,
//! for each layer, its longest declared `stop_timeout_ms`. A fixed budget
//! below that would cut a slot's declared grace short (the hook gives up
//! and s6-overlay's final TERM/KILL ends the slot), silently. An explicit
//! `SVKIT_STOP_TIMEOUT_MS` still wins: the image author chose it.
//!
//! Around the hook: s6-overlay kills each cont-finish hook after
//! `S6_KILL_FINISH_MAXTIME` ms (0 or unset: never), and Docker KILLs the
//! whole container after its stop timeout (10 s unless `docker stop -t`).
//! [`note`] says, in one line, which of them the config's stop times do
//! not fit in and what to raise; `svctl check` and the boot hook say it.

use std::io::ErrorKind;
use std::process::ExitCode;

use crate::claim::foreground::DEFAULT_TIMEOUT;
use crate::config::{self, depends, LoadError, Model};
use crate::container::{self, S6_DEFAULT_KILL_GRACE_MS};
use crate::msg::{self, Fatal};

/// The image's override of the budget.
pub const ENV: &str = "SVKIT_STOP_TIMEOUT_MS";

/// The budget when no slot declares a `stop_timeout_ms` (or the config
/// cannot be read): what the foreground command may take by default.
pub const DEFAULT_MS: u64 = DEFAULT_TIMEOUT.as_secs() * 1000;

/// What the hook may take beyond its budget: the slots get at least
/// 500 ms even after the foreground command used it all, svctl is cut
/// 1 s after its timeout, then up to 500 ms for the stopped slots'
/// loggers and 500 ms for strays (`crate::leftovers`).
pub const HOOK_OVERHEAD_MS: u64 = 2500;

/// s6-overlay's bound (ms) on each cont-finish hook.
pub const FINISH_MAXTIME_ENV: &str = "S6_KILL_FINISH_MAXTIME";

/// `docker stop`'s default grace before it KILLs the container.
pub const DOCKER_STOP_GRACE_MS: u64 = 10_000;

/// A layer whose slot is KILLed by its supervisor at its
/// `stop_timeout_ms` is seen down a moment later: without this margin
/// svctl's wait would give up at the very moment s6 ends the slot, and
/// the hook would report a slot left to the final TERM/KILL.
const KILL_SLACK_MS: u64 = 500;

/// What the config may ask of the stop hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The budget it asks for (ms), never below [`DEFAULT_MS`].
    pub ms: u64,
    /// The slot with the longest declared `stop_timeout_ms`, and that
    /// value; None when no slot declares one.
    pub longest: Option<(String, u32)>,
}

/// The foreground command's longest wait (a redirect's slot's declared
/// `stop_timeout_ms`, or the default for a command no slot describes),
/// then each stop layer's longest declared `stop_timeout_ms`. A slot
/// without one is never KILLed by its supervisor: what it takes is not
/// the config's to say, and it shares what is left.
pub fn need(model: &Model) -> Need {
    let foreground = (model.redirects.iter())
        .filter_map(|r| model.slot(&r.slot)?.stop_timeout_ms)
        .map(u64::from)
        .fold(DEFAULT_MS, u64::max);
    let names: Vec<String> = model.slots.iter().map(|s| s.name.clone()).collect();
    let slots: u64 = depends::stop_layers(&model.slots, &names)
        .iter()
        .filter_map(|layer| {
            (layer.iter())
                .filter_map(|n| model.slot(n)?.stop_timeout_ms)
                .max()
        })
        .map(|ms| u64::from(ms) + KILL_SLACK_MS)
        .sum();
    let longest = (model.slots.iter())
        .filter_map(|s| Some((s.name.clone(), s.stop_timeout_ms?)))
        .max_by_key(|(_, ms)| *ms);
    Need {
        ms: (foreground + slots).max(DEFAULT_MS),
        longest,
    }
}

/// The container's settings around the stop hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Settings {
    /// `SVKIT_STOP_TIMEOUT_MS` when set to milliseconds.
    pub explicit: Option<u64>,
    /// `S6_KILL_FINISH_MAXTIME`; None (or 0): s6-overlay never cuts a hook.
    pub finish_maxtime: Option<u64>,
    /// `S6_KILL_GRACETIME`, s6-overlay's default when not set to digits.
    pub kill_grace: u64,
}

impl Settings {
    /// From our environment, else the container environment
    /// (`container::setting`), as the hook and s6-overlay read them.
    pub fn from_container() -> Settings {
        let ms = |var| container::setting(var).as_deref().and_then(hook_ms);
        Settings {
            explicit: ms(ENV),
            finish_maxtime: ms(FINISH_MAXTIME_ENV),
            kill_grace: ms("S6_KILL_GRACETIME").unwrap_or(S6_DEFAULT_KILL_GRACE_MS),
        }
    }
}

/// Milliseconds as the hook takes them: digits only, at most 8 (the
/// hook's shell arithmetic never overflows).
pub fn hook_ms(v: &str) -> Option<u64> {
    (v.len() <= 8 && container::all_digits(v)).then(|| v.parse().ok())?
}

/// One line when a slot's declared `stop_timeout_ms` cannot be honoured
/// at `docker stop`: an explicit `SVKIT_STOP_TIMEOUT_MS` below what the
/// config asks, `S6_KILL_FINISH_MAXTIME` below the hook's bound, or a
/// shutdown longer than `docker stop`'s default 10 s; each with the
/// setting to raise. None when no slot declares one (the defaults are
/// the image's to size) or everything fits.
pub fn note(model: &Model, s: &Settings) -> Option<String> {
    let need = need(model);
    let (slot, declared) = need.longest?;
    let mut fixes = Vec::new();
    if let Some(e) = s.explicit.filter(|e| *e < need.ms) {
        fixes.push(format!(
            "{ENV}={e} cuts that short: raise it to {} or unset it (the hook then gives what the config asks)",
            need.ms
        ));
    }
    let bound = need.ms.max(s.explicit.unwrap_or(0)) + HOOK_OVERHEAD_MS;
    if let Some(m) = s.finish_maxtime.filter(|m| *m > 0 && *m < bound) {
        fixes.push(format!(
            "{FINISH_MAXTIME_ENV}={m} (s6-overlay's bound on each cont-finish hook) ends the stop hook first: raise it to at least {bound}"
        ));
    }
    let total = bound + s.kill_grace;
    if total > DOCKER_STOP_GRACE_MS {
        fixes.push(format!(
            "with S6_KILL_GRACETIME the shutdown may take {total} ms, beyond docker stop's default 10 s: raise the container's stop timeout to at least {} s (docker stop -t, Compose stop_grace_period, Kubernetes terminationGracePeriodSeconds)",
            total.div_ceil(1000)
        ));
    }
    (!fixes.is_empty()).then(|| {
        format!(
            "the stop hook needs up to {} ms to stop the foreground command and the slots in order (longest: {slot}'s stop_timeout_ms {declared}); {}",
            need.ms,
            fixes.join("; ")
        )
    })
}

/// `svkit stop-budget`, run by the stop hook when `SVKIT_STOP_TIMEOUT_MS`
/// is not set: prints the budget (ms) the config asks for. A config that
/// cannot be used is said in one line and gives [`DEFAULT_MS`]: the hook
/// must stop the slots whatever the config's state. Exit 0, but 100 on
/// bad usage.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    msg::init("svkit stop-budget");
    if args.len() > 0 {
        return Fatal::usage("usage: svkit stop-budget (run by the stop hook)", "").report();
    }
    let dir = config::config_dir_from_env();
    let ms = match config::load(&dir, &crate::state::LiveInstances) {
        Ok(v) => need(&v.model).ms,
        Err(LoadError::Io { path, source })
            if path == dir && source.kind() == ErrorKind::NotFound =>
        {
            DEFAULT_MS
        }
        Err(e) => {
            let why = e.to_string();
            msg::warn(format_args!(
                "config {} not used ({}): the stop hook gives the default {DEFAULT_MS} ms",
                dir.display(),
                why.lines().next().unwrap_or_default()
            ));
            DEFAULT_MS
        }
    };
    match msg::out(format!("{ms}\n")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => f.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_model;

    fn settings(explicit: Option<u64>, maxtime: Option<u64>, grace: u64) -> Settings {
        Settings {
            explicit,
            finish_maxtime: maxtime,
            kill_grace: grace,
        }
    }

    #[test]
    fn without_declared_stop_times_the_budget_is_the_default_and_nothing_is_said() {
        let m = test_model(r#"{ "slots": [ { "name": "a", "command": ["a"] } ] }"#);
        assert_eq!(
            need(&m),
            Need {
                ms: 5000,
                longest: None
            }
        );
        assert_eq!(note(&m, &settings(Some(100), Some(1), 3000)), None);
    }

    #[test]
    fn the_budget_adds_the_foreground_wait_and_each_stop_layer() {
        // web depends on db: two layers (web, then db and the lone job).
        let m = test_model(
            r#"{ "slots": [
                { "name": "db", "command": ["db"], "stop_timeout_ms": 3000 },
                { "name": "job", "command": ["job"], "stop_timeout_ms": 1000 },
                { "name": "web", "command": ["web"], "stop_timeout_ms": 10000,
                  "depends_on": { "db": "up" } } ],
              "redirects": [ { "match": ["web"], "slot": "web" } ] }"#,
        );
        let n = need(&m);
        // foreground 10000 (web's), layer web 10000, layer {db, job} 3000.
        assert_eq!(n.ms, 10_000 + 10_500 + 3_500);
        assert_eq!(n.longest, Some(("web".to_string(), 10_000)));
    }

    #[test]
    fn the_note_names_each_setting_to_raise() {
        let m = test_model(
            r#"{ "slots": [ { "name": "slow", "command": ["s"], "stop_timeout_ms": 10000 } ] }"#,
        );
        assert_eq!(need(&m).ms, 15_500);
        // Beyond docker stop's 10 s whatever the other settings.
        let line = note(&m, &settings(None, Some(18_000), 0)).expect("a note");
        assert!(line.contains("at least 18 s (docker stop -t"), "{line}");
        assert!(!line.contains("S6_KILL_FINISH_MAXTIME"), "{line}");
        // A short one fits: 5000 + 1500 + 2500 ms.
        let m1 = test_model(
            r#"{ "slots": [ { "name": "quick", "command": ["q"], "stop_timeout_ms": 1000 } ] }"#,
        );
        assert_eq!(note(&m1, &settings(None, Some(9000), 0)), None);
        assert!(note(&m1, &settings(None, Some(8000), 0)).is_some());
        let line = note(&m, &settings(Some(5000), Some(8000), 0)).expect("a note");
        assert!(line.contains("slow's stop_timeout_ms 10000"), "{line}");
        assert!(
            line.contains("SVKIT_STOP_TIMEOUT_MS=5000 cuts that short: raise it to 15500"),
            "{line}"
        );
        assert!(line.contains("S6_KILL_FINISH_MAXTIME=8000"), "{line}");
        assert!(line.contains("raise it to at least 18000"), "{line}");
        assert!(line.contains("docker stop -t"), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn hook_ms_takes_what_the_hook_takes() {
        assert_eq!(hook_ms("0250"), Some(250));
        for bad in ["", "5s", "-1", "123456789", "1 2"] {
            assert_eq!(hook_ms(bad), None, "{bad:?}");
        }
    }
}
