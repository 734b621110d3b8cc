//! Redirect: `docker run IMAGE app gateway run` lands in a supervised slot.
//!
//! [`route`] and [`decide`] (here) are pure: facts come in as arguments.
//! [`execute`] ensures the slot, wants it up and starts its companions,
//! then [`exec_keep_alive`] (or [`keep_alive`], in-process) holds the
//! container's command until a stop signal; an opt-out displaces the slot
//! ([`displace`]) and waits for its `depends_on` ([`await_deps`]).

mod deps;
mod execute;

pub use deps::{await_deps, DepsError, DEPENDS_TIMEOUT};
pub use execute::{
    breadcrumb, displace, exec_keep_alive, execute, keep_alive, refusal, RedirectError,
};

use crate::config::names::is_truthy;
use crate::config::{Model, Redirect};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

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
    if facts
        .process_env
        .get(&model.sentinel_env)
        .is_some_and(|v| !v.is_empty())
    {
        return plain(&stripped);
    }
    let foreground = |warning: Option<String>, displaces: Option<String>| Decision::Foreground {
        argv: stripped.clone(),
        warning,
        as_slot: Some(rule.slot.clone()),
        displaces,
    };
    let opted_out = flagged
        || rule
            .opt_out_env
            .as_deref()
            .and_then(|v| facts.var(v))
            .is_some_and(is_truthy);
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

#[cfg(test)]
mod tests;
