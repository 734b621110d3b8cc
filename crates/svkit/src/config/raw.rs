//! Raw config types: exactly what a JSON layer may contain, nothing checked
//! beyond JSON types. Numbers are `i64` so that "out of range" is reported
//! by validation with a field path instead of a bare serde type error, and
//! polymorphic fields (`autostart`) are `Value` for the same reason.

use std::collections::BTreeMap;

use serde::Deserialize;
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
}

/// Names of every top-level key, for unknown-key detection.
pub const TOP_KEYS: &[&str] = &[
    "user",
    "state_dir",
    "sentinel_env",
    "default_program",
    "slots",
    "redirects",
];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlot {
    pub name: String,
    pub instances: Option<RawInstances>,
    pub command: Vec<String>,
    pub user: Option<String>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub autostart: Option<Value>,
    pub log: Option<RawLog>,
    pub restart: Option<RawRestart>,
    pub readiness: Option<RawReadiness>,
    pub down_signal: Option<String>,
    pub stop_timeout_ms: Option<i64>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub essential: Option<bool>,
    pub depends_on: Option<BTreeMap<String, String>>,
    /// A path or a list of paths: `Value` so a wrong type is located.
    pub env_file: Option<Value>,
    pub secrets: Option<BTreeMap<String, String>>,
    pub liveness: Option<RawLiveness>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLiveness {
    pub exec: Option<Vec<String>>,
    /// A port (number) or `host:port` (string).
    pub tcp: Option<Value>,
    pub http: Option<String>,
    pub interval_ms: Option<i64>,
    pub timeout_ms: Option<i64>,
    pub failures: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstances {
    #[serde(default)]
    pub names: Vec<String>,
    pub from_dir: Option<RawFromDir>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFromDir {
    pub path: String,
    pub require_file: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLog {
    pub dir: String,
    pub stdout: Option<bool>,
    pub keep: Option<i64>,
    pub max_bytes: Option<i64>,
    pub prefix: Option<String>,
    pub format: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRestart {
    pub permanent_exit_codes: Option<Vec<i64>>,
    pub on_clean_exit: Option<String>,
    pub backoff: Option<RawBackoff>,
    pub max_deaths: Option<i64>,
    pub within_s: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBackoff {
    pub max_s: Option<i64>,
    pub reset_after_s: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReadiness {
    pub notification_fd: Option<i64>,
    pub check: Option<RawCheck>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    pub command: Vec<String>,
    pub interval_ms: Option<i64>,
    pub timeout_ms: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRedirect {
    #[serde(rename = "match")]
    pub match_: Vec<String>,
    pub slot: String,
    pub opt_out_flag: Option<String>,
    pub opt_out_env: Option<String>,
    #[serde(default)]
    pub also_start: Vec<String>,
}
