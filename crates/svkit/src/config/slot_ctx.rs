//! The per-slot validation context: where a slot's problems are collected
//! and the checks its fields share (`{instance}` expansion, argv, paths,
//! variable names, ranges).

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::names::*;
use super::parse::Layer;

/// Per-slot validation context.
pub(crate) struct SlotCtx<'a> {
    pub layer: &'a Layer,
    pub base: FieldPath,
    pub instance: Option<&'a str>,
    pub sentinel_env: &'a str,
    pub diags: Vec<Diagnostic>,
}

impl SlotCtx<'_> {
    pub(super) fn err(&mut self, path: &FieldPath, msg: impl Into<String>) {
        let d = self.layer.diag(path, msg);
        self.diags.push(d);
    }

    /// A variable name the slot sets (`env`, `secrets`), expanded: reported
    /// when it is not a valid name or is the sentinel svkit sets itself.
    pub(super) fn env_name(&mut self, path: &FieldPath, raw: &str) -> String {
        let k = self.expand(path, raw);
        if let Err(e) = check_env_name(&k) {
            self.err(path, format!("`{k}`: {e}"));
        } else if k == self.sentinel_env {
            let msg = format!("`{k}` is the sentinel_env, which svkit sets to the slot name");
            self.err(path, msg);
        }
        k
    }

    /// Expand `{instance}`; in a slot without instances the variable is an
    /// error (it would otherwise reach a program literally).
    pub(super) fn expand(&mut self, path: &FieldPath, s: &str) -> String {
        match self.instance {
            Some(i) => s.replace(INSTANCE_VAR, i),
            None => {
                if s.contains(INSTANCE_VAR) {
                    self.err(path, "uses {instance} but the slot declares no `instances`");
                }
                s.to_string()
            }
        }
    }

    pub(super) fn int(
        &mut self,
        path: &FieldPath,
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

    pub(super) fn argv(&mut self, path: &FieldPath, raw: &[String], what: &str) -> Vec<String> {
        if raw.is_empty() {
            self.err(
                path,
                format!("{what} must not be empty (it is an argv array)"),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(raw.len());
        for (i, a) in raw.iter().enumerate() {
            let p = path.index(i);
            let a = self.expand(&p, a);
            if let Err(e) = check_no_nul(&a) {
                self.err(&p, e);
            }
            if let Err(e) = check_arg_len(a.len(), "this argument") {
                self.err(&p, e);
            }
            if i == 0 {
                if a.is_empty() {
                    self.err(&p, "the program name must not be empty");
                } else if a.starts_with('-') {
                    self.err(&p, "the program name must not start with `-`");
                }
            }
            out.push(a);
        }
        out
    }

    pub(super) fn abs_path(&mut self, path: &FieldPath, raw: &str) -> String {
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

/// The kernel's limit on argv and environment together, in bytes.
pub(super) fn arg_max() -> usize {
    let n = nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX).ok();
    n.flatten()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(2 * 1024 * 1024)
}
