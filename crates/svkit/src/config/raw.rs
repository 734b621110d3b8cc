//! Raw config types: exactly what a JSON layer may contain, nothing checked
//! beyond JSON types. Numbers are `i64` so that "out of range" is reported
//! by validation with a field path instead of a bare serde type error, and
//! polymorphic fields (`autostart`) are `Value` for the same reason.
//! They serialize too (what `svctl import` prints), a key left out where
//! it is absent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Top-level keys other than the arrays. `slots` and `redirects` are parsed
/// element by element (see `parse.rs`), so they are not part of this type.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTop {
    pub user: Option<String>,
    pub state_dir: Option<String>,
    pub sentinel_env: Option<String>,
    pub default_program: Option<String>,
    pub http: Option<RawHttp>,
}

/// `http`: where `svkit serve` listens, and the token its control needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    pub listen: String,
    pub token_file: Option<String>,
}

/// Names of every top-level key, for unknown-key detection.
pub const TOP_KEYS: &[&str] = &[
    "user",
    "state_dir",
    "sentinel_env",
    "default_program",
    "http",
    "slots",
    "redirects",
];

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlot {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<RawInstances>,
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autostart: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<RawLog>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart: Option<RawRestart>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness: Option<RawReadiness>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub down_signal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_timeout_ms: Option<i64>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub essential: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<BTreeMap<String, String>>,
    /// A path or a list of paths: `Value` so a wrong type is located.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env_file: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness: Option<RawLiveness>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<RawSchedule>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSchedule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_s: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_s: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLiveness {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec: Option<Vec<String>>,
    /// A port (number) or `host:port` (string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstances {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// `0`…`N-1`: a number, or a string with `${VAR}` (`Value` so a wrong
    /// type is located).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_dir: Option<RawFromDir>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawFromDir {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_file: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLog {
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRestart {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permanent_exit_codes: Option<Vec<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_clean_exit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff: Option<RawBackoff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_deaths: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_s: Option<i64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBackoff {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_s: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_after_s: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawReadiness {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_fd: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<RawCheck>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRedirect {
    #[serde(rename = "match")]
    pub match_: Vec<String>,
    pub slot: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opt_out_flag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opt_out_env: Option<String>,
    #[serde(default)]
    pub also_start: Vec<String>,
}
