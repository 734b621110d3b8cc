//! The per-slot validation context: where a slot's problems are collected
//! and the checks its fields share (`{instance}` expansion, argv, paths,
//! variable names, ranges).

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::names::*;
use super::parse::Layer;

/// Where a value is, as the validation walks to it. Most values have
/// nothing to report, so their path is built (a [`FieldPath`], one
/// allocation per segment) only when a problem is reported: until then
/// it is a chain of borrowed segments ([`Sub`]) on the stack.
pub(crate) trait Place {
    fn path(&self) -> FieldPath;
}

impl Place for FieldPath {
    fn path(&self) -> FieldPath {
        self.clone()
    }
}

/// A key or an index under another place.
pub(crate) enum Sub<'a> {
    Key(&'a dyn Place, &'a str),
    Index(&'a dyn Place, usize),
}

impl Place for Sub<'_> {
    fn path(&self) -> FieldPath {
        match self {
            Sub::Key(p, k) => p.path().key(k.to_string()),
            Sub::Index(p, i) => p.path().index(*i),
        }
    }
}

/// Per-slot validation context.
pub(crate) struct SlotCtx<'a> {
    pub layer: &'a Layer,
    pub base: FieldPath,
    pub instance: Option<&'a str>,
    pub sentinel_env: &'a str,
    pub diags: Vec<Diagnostic>,
}

impl SlotCtx<'_> {
    pub(super) fn err(&mut self, path: &dyn Place, msg: impl Into<String>) {
        let d = self.layer.diag(&path.path(), msg);
        self.diags.push(d);
    }

    /// Expand `{instance}`; in a slot without instances the variable is an
    /// error (it would otherwise reach a program literally).
    /// A variable name the slot sets (`env`, `secrets`), expanded: reported
    /// when it is not a valid name or is the sentinel svkit sets itself.
    pub(super) fn env_name(&mut self, path: &dyn Place, raw: &str) -> String {
        let k = self.expand(path, raw);
        self.env_name_rules(path, &k);
        k
    }

    /// What a variable name the slot sets must be, once expanded.
    pub(super) fn env_name_rules(&mut self, path: &dyn Place, k: &str) {
        if let Err(e) = check_env_name(k) {
            self.err(path, format!("`{k}`: {e}"));
        } else if k == self.sentinel_env {
            let msg = format!("`{k}` is the sentinel_env, which svkit sets to the slot name");
            self.err(path, msg);
        }
    }

    pub(super) fn expand(&mut self, path: &dyn Place, s: &str) -> String {
        match self.instance {
            // Most strings hold no variable: skip the substring search.
            Some(i) if s.contains('{') => s.replace(INSTANCE_VAR, i),
            Some(_) => s.to_string(),
            None => {
                self.no_instance_var(path, s);
                s.to_string()
            }
        }
    }

    /// [`expand`](Self::expand) of a raw slot's own string, moved out of
    /// it where that gives the same text: a slot without instances is
    /// built once, and its strings are the model's as they are (a copy of
    /// each cost a big config more than checking them).
    pub(super) fn expand_take(&mut self, path: &dyn Place, s: &mut String) -> String {
        if self.instance.is_some() {
            return self.expand(path, s);
        }
        self.no_instance_var(path, s);
        std::mem::take(s)
    }

    /// In a slot without instances, `{instance}` would reach a program
    /// literally: an error.
    pub(super) fn no_instance_var(&mut self, path: &dyn Place, s: &str) {
        // `{` first: a byte search, where a substring search costs a
        // setup for every string of every slot.
        if s.contains('{') && s.contains(INSTANCE_VAR) {
            self.err(path, "uses {instance} but the slot declares no `instances`");
        }
    }

    pub(super) fn int(
        &mut self,
        path: &dyn Place,
        v: i64,
        lo: i64,
        hi: i64,
        unit: &str,
    ) -> Option<u32> {
        if v < lo || v > hi {
            self.err(path, format!("{v} is outside {lo}..{hi}{unit}"));
            None
        } else {
            u32::try_from(v).ok()
        }
    }

    pub(super) fn argv(&mut self, path: &dyn Place, raw: &[String], what: &str) -> Vec<String> {
        if raw.is_empty() {
            self.err(
                path,
                format!("{what} must not be empty (it is an argv array)"),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(raw.len());
        for (i, a) in raw.iter().enumerate() {
            let p = Sub::Index(path, i);
            let a = self.expand(&p, a);
            self.arg_rules(&p, i, &a);
            out.push(a);
        }
        out
    }

    /// [`argv`](Self::argv) of a raw slot's own list, moved out of it
    /// where that gives the same words (see [`expand_take`](Self::expand_take)).
    pub(super) fn argv_take(
        &mut self,
        path: &dyn Place,
        raw: &mut Vec<String>,
        what: &str,
    ) -> Vec<String> {
        if self.instance.is_some() || raw.is_empty() {
            return self.argv(path, raw, what);
        }
        let out = std::mem::take(raw);
        for (i, a) in out.iter().enumerate() {
            let p = Sub::Index(path, i);
            self.no_instance_var(&p, a);
            self.arg_rules(&p, i, a);
        }
        out
    }

    /// What every word of an argv must be, once expanded.
    fn arg_rules(&mut self, p: &dyn Place, i: usize, a: &str) {
        if let Err(e) = check_no_nul(a) {
            self.err(p, e);
        }
        if let Err(e) = check_arg_len(a.len(), "this argument") {
            self.err(p, e);
        }
        if i == 0 {
            if a.is_empty() {
                self.err(p, "the program name must not be empty");
            } else if a.starts_with('-') {
                self.err(p, "the program name must not start with `-`");
            }
        }
    }

    pub(super) fn abs_path(&mut self, path: &dyn Place, raw: &str) -> String {
        let s = self.expand(path, raw);
        match check_abs_path(&s) {
            Ok(p) => p,
            Err(e) => {
                self.err(path, format!("`{s}` {e}"));
                s
            }
        }
    }
}

/// The kernel's limit on argv and environment together, in bytes; asked
/// once, not once per slot (it is a system call).
pub(super) fn arg_max() -> usize {
    static ARG_MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *ARG_MAX.get_or_init(|| {
        let n = nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX).ok();
        n.flatten()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(2 * 1024 * 1024)
    })
}
