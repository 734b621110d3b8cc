//! The observability and deployment keys of a slot: `log.prefix` and
//! `log.format` (what the stdout copy of the log looks like), `env_file`
//! and `secrets` (what the run script reads at start). Only names and paths
//! are checked here: the files themselves are read when the slot starts
//! (`crate::slotenv`), never at render time.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_pos::FieldPath;
use super::model::LogFormat;
use super::raw::{RawLog, RawSlot};
use super::slot::SlotCtx;

/// The slot's name in a `log.prefix`.
pub const SLOT_VAR: &str = "{slot}";
/// Longest `log.prefix`, in bytes, after expansion: it is on every line.
pub const MAX_PREFIX_BYTES: usize = 256;

/// `log.prefix` (expanded) and `log.format`, checked against `stdout`.
pub(super) fn log_output(
    ctx: &mut SlotCtx<'_>,
    p: &FieldPath,
    l: &RawLog,
    stdout: bool,
    slot: &str,
) -> (Option<String>, LogFormat) {
    let pf = p.key("format");
    let format = match l.format.as_deref().map(|f| ctx.expand(&pf, f)).as_deref() {
        None | Some("text") => LogFormat::Text,
        Some("json") => LogFormat::Json,
        Some(other) => {
            ctx.err(&pf, format!("`{other}`: expected \"text\" or \"json\""));
            LogFormat::Text
        }
    };
    if format == LogFormat::Json && !stdout {
        ctx.err(
            &pf,
            "\"json\" shapes the stdout copy, and `stdout` is false: there is none",
        );
    }
    let Some(raw) = &l.prefix else {
        return (None, format);
    };
    let pp = p.key("prefix");
    let prefix = ctx.expand(&pp, raw).replace(SLOT_VAR, slot);
    if prefix.trim_matches(' ').is_empty() {
        ctx.err(
            &pp,
            "a prefix must hold more than spaces (leave `prefix` out for none)",
        );
    } else if let Some(c) = prefix.chars().find(|c| c.is_control()) {
        ctx.err(
            &pp,
            format!(
                "must not contain control characters (found {c:?}): the prefix is on every line"
            ),
        );
    } else if prefix.len() > MAX_PREFIX_BYTES {
        ctx.err(
            &pp,
            format!(
                "is {} bytes once expanded: at most {MAX_PREFIX_BYTES}",
                prefix.len()
            ),
        );
    }
    if !stdout {
        ctx.err(
            &pp,
            "the prefix goes on the stdout copy, and `stdout` is false: there is none",
        );
    }
    if format == LogFormat::Json {
        ctx.err(
            &pp,
            "a prefix is for the text format: each JSON line names its slot in `slot`",
        );
    }
    (Some(prefix), format)
}

/// `env_file` (a path or a list of paths) and `secrets` (VAR → path).
pub(super) fn env_inputs(
    ctx: &mut SlotCtx<'_>,
    b: &FieldPath,
    raw: &RawSlot,
    env: &BTreeMap<String, String>,
) -> (Vec<String>, BTreeMap<String, String>) {
    let mut files = Vec::new();
    let pf = b.key("env_file");
    match &raw.env_file {
        None => {}
        Some(Value::String(s)) => files.push(ctx.abs_path(&pf, s)),
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                let pi = pf.index(i);
                match v {
                    Value::String(s) => files.push(ctx.abs_path(&pi, s)),
                    _ => ctx.err(&pi, "expected a path (a string)"),
                }
            }
        }
        Some(_) => ctx.err(&pf, "expected a path or a list of paths"),
    }
    let mut secrets = BTreeMap::new();
    let psecrets = b.key("secrets");
    for (k, path) in raw.secrets.iter().flatten() {
        let p = psecrets.key(k.as_str());
        let k = ctx.env_name(&p, k);
        if env.contains_key(&k) {
            ctx.err(
                &p,
                format!(
                    "`{k}` is also set in `env`: a variable is a secret or a plain value, not both"
                ),
            );
        }
        let path = ctx.abs_path(&p, path);
        secrets.insert(k, path);
    }
    (files, secrets)
}
