//! `${VAR}` and `${VAR:-default}`: the container's environment in a
//! `user` (top-level or a slot's) and in `instances.count`, read when the
//! config is loaded (the boot, `svctl plan`, `svctl apply`), as a shell
//! reads them: `:-` also takes the default when `VAR` is set but empty.
//! Nothing else is expanded, and an expanded value is not expanded again.
//! A `$` that starts neither form is an error: no user name or count holds
//! one, so `$VAR` is a `${VAR}` written wrong, never a literal.
//!
//! The environment comes from the [`InstanceSource`], read once per load
//! and only when a value holds a `$` (`state::LiveInstances`: the
//! container's, `container::container_env`).

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

use super::discover::InstanceSource;
use super::error::{Diagnostic, Warning};
use super::json_pos::FieldPath;
use super::parse::Layer;
use crate::container::is_env_name;

/// The environment `${VAR}` reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
    /// Whether `vars` is the environment the slots run with (the boot,
    /// `plan`, `apply`): an unset variable without a default is then an
    /// error. Else (`svctl check`, an import: maybe where the image is
    /// built) it is a warning, and the value is left out of the check.
    pub complete: bool,
}

/// Why a value was not expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unexpanded {
    /// Not written as `${NAME}` or `${NAME:-default}`: why.
    #[error("{0}")]
    Bad(String),
    /// `${NAME}`, `NAME` unset and no default.
    #[error(
        "{0} is not set in the container's environment and has no default (`${{{0}:-DEFAULT}}`)"
    )]
    Unset(String),
}

/// `text` with each `${NAME}` and `${NAME:-default}` replaced from `env`.
/// A default is taken as written, up to the first `}`.
pub fn expand(text: &str, env: &BTreeMap<String, String>) -> Result<String, Unexpanded> {
    const FORMS: &str = "only `${NAME}` and `${NAME:-default}` are expanded";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let Some(body) = rest[at + 1..].strip_prefix('{') else {
            return Err(Unexpanded::Bad(format!(
                "a `$` that does not start `${{…}}`: {FORMS}"
            )));
        };
        let Some(close) = body.find('}') else {
            return Err(Unexpanded::Bad(format!("`${{` without its `}}`: {FORMS}")));
        };
        let inner = &body[..close];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if !is_env_name(name) {
            return Err(Unexpanded::Bad(format!(
                "`{name}` is no NAME ([A-Za-z_][A-Za-z0-9_]*): {FORMS}"
            )));
        }
        match (env.get(name), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => out.push_str(v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(Unexpanded::Unset(name.to_string())),
        }
        rest = &body[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A value in a message: as written, and what it expanded to when that
/// differs.
pub(crate) fn shown(raw: &str, value: &str) -> String {
    if raw == value {
        format!("`{raw}`")
    } else {
        format!("`{raw}` is `{value}`")
    }
}

/// The expansions of one load: the environment read at the first `$`,
/// and the warnings of an incomplete one.
pub(crate) struct Vars<'a> {
    pub(crate) src: &'a dyn InstanceSource,
    env: OnceCell<Env>,
    warnings: RefCell<Vec<Warning>>,
}

impl<'a> Vars<'a> {
    pub(crate) fn new(src: &'a dyn InstanceSource) -> Self {
        Vars {
            src,
            env: OnceCell::new(),
            warnings: RefCell::default(),
        }
    }

    /// `raw` (written at `path` of `layer`) expanded. `None`: it could not
    /// be, and why is in `diags`, or in the warnings when a variable is
    /// unset in an incomplete environment.
    pub(crate) fn get(
        &self,
        layer: &Layer,
        path: &FieldPath,
        raw: &str,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<String> {
        if !raw.contains('$') {
            return Some(raw.to_string());
        }
        let env = self.env();
        match expand(raw, &env.vars) {
            Ok(v) => Some(v),
            Err(Unexpanded::Unset(name)) if !env.complete => {
                let message = layer
                    .diag(path, format!("`{raw}`: {name} is not set here and has no default: the boot and `svctl apply` refuse the config unless the container's environment sets it; checked without it"))
                    .to_string();
                let mut w = self.warnings.borrow_mut();
                if !w.iter().any(|w| w.message == message) {
                    w.push(Warning { message });
                }
                None
            }
            Err(e) => {
                diags.push(layer.diag(path, format!("`{raw}`: {e}")));
                None
            }
        }
    }

    fn env(&self) -> &Env {
        self.env.get_or_init(|| self.src.env())
    }

    /// `raw` expanded, else as written (where it is written, [`Self::get`]
    /// reports why).
    pub(crate) fn quiet(&self, raw: &str) -> String {
        if !raw.contains('$') {
            return raw.to_string();
        }
        expand(raw, &self.env().vars).unwrap_or_else(|_| raw.to_string())
    }

    pub(crate) fn warnings(self) -> Vec<Warning> {
        self.warnings.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_two_forms_read_the_environment() {
        let e = env(&[("W", "3"), ("EMPTY", ""), ("U", "www-data")]);
        for (text, want) in [
            ("plain", "plain"),
            ("${W}", "3"),
            ("${W:-4}", "3"),
            ("${NOPE:-4}", "4"),
            ("${EMPTY:-4}", "4"),
            ("${EMPTY}", ""),
            ("${NOPE:-}", ""),
            ("${U}:${W}", "www-data:3"),
            ("a${W}b", "a3b"),
            ("${NOPE:-x{instance}}", "x{instance}"),
            ("${NOPE:-a:-b}", "a:-b"),
        ] {
            assert_eq!(expand(text, &e), Ok(want.to_string()), "{text}");
        }
    }

    #[test]
    fn what_is_not_one_of_them_is_refused() {
        let e = env(&[("W", "${X}")]);
        assert_eq!(expand("${W}", &e), Ok("${X}".into()), "never twice");
        assert_eq!(expand("${NOPE}", &e), Err(Unexpanded::Unset("NOPE".into())));
        for (text, part) in [
            ("${", "without its `}`"),
            ("x${W", "without its `}`"),
            ("${1X}", "`1X` is no NAME"),
            ("${}", "`` is no NAME"),
            ("${W-4}", "`W-4` is no NAME"),
            ("${W:=4}", "`W:=4` is no NAME"),
            ("${ W}", "` W` is no NAME"),
            ("$W", "does not start"),
            ("$", "does not start"),
            ("a$$", "does not start"),
        ] {
            match expand(text, &e) {
                Err(Unexpanded::Bad(why)) => assert!(why.contains(part), "{text}: {why}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
