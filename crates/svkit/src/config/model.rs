//! The validated model: what the renderer and reconcile consume. Every value
//! here has passed validation and every `{instance}` is expanded; nothing in
//! it needs checking again.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::Site;
use crate::probe::Probe;

/// Default `sentinel_env`.
pub const DEFAULT_SENTINEL_ENV: &str = "SVKIT_SLOT";
/// Default `state_dir`.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/svkit";
/// Default `permanent_exit_codes`: EX_CONFIG.
pub const DEFAULT_PERMANENT_EXIT_CODES: &[u8] = &[crate::msg::exit::START_FAILED];
pub const DEFAULT_LOG_KEEP: u32 = 10;
pub const DEFAULT_LOG_MAX_BYTES: u32 = 1_000_000;
pub const DEFAULT_BACKOFF_MAX_S: u32 = 30;
pub const DEFAULT_BACKOFF_RESET_AFTER_S: u32 = 60;
pub const DEFAULT_WITHIN_S: u32 = 60;
/// Default `max_deaths`: a slot that dies this often within
/// [`DEFAULT_WITHIN_S`] is failed (with the default backoff, about 15 s of
/// a program that dies at once), as supervisord's `startretries` ends in
/// FATAL.
pub const DEFAULT_MAX_DEATHS: u32 = 5;
/// Exit codes of a command that is not executable (126) or not found
/// (127), by the shell's and s6's exec: no retry can help, so they are
/// permanent whatever `permanent_exit_codes` says.
pub const EXEC_FAILURE_EXIT_CODES: &[u8] = &[
    crate::msg::exit::CANNOT_EXECUTE,
    crate::msg::exit::NOT_FOUND,
];
pub const DEFAULT_CHECK_INTERVAL_MS: u32 = 1000;
/// The fd s6-notifyoncheck writes to when a readiness check passes.
pub const CHECK_NOTIFICATION_FD: u32 = 3;

/// The whole validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// Config files read, in layer order.
    pub files: Vec<PathBuf>,
    /// Default user of every slot (a slot may override it).
    pub user: Option<String>,
    pub state_dir: String,
    pub sentinel_env: String,
    pub default_program: Option<String>,
    /// Expanded slots, in declaration order (layer, then array order, then
    /// instance order).
    pub slots: Vec<Slot>,
    pub redirects: Vec<Redirect>,
    /// Templated slots as declared, instances or not: where `svctl
    /// register` adds one.
    pub templates: Vec<Template>,
    /// `http`: `svkit serve` runs (in the slot [`SERVE_SLOT`]) only with it.
    pub http: Option<Http>,
}

/// The slot boot renders for `svkit serve` when the config has `http`.
pub const SERVE_SLOT: &str = "svkit-serve";

/// `http`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http {
    pub listen: Listen,
    /// Absolute; without it logs and control answer 403.
    pub token_file: Option<String>,
}

/// `http.listen`: `IP:PORT`, or `unix:/ABS/PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Tcp(std::net::SocketAddr),
    Unix(String),
}

impl Model {
    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }
}

/// A slot declared with `{instance}` in its name and `instances`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The declared name (e.g. `gateway-{instance}`).
    pub name: String,
    /// Its own user, else the top-level one.
    pub user: Option<String>,
}

/// Where a slot was declared: for messages and for the marker file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// Index in that file's `slots` array.
    pub index: usize,
    /// The declared name, before expansion (e.g. `gateway-{instance}`).
    pub template: String,
}

/// One supervised slot (a service directory in the scandir).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub instance: Option<String>,
    pub origin: Origin,
    pub command: Vec<String>,
    /// Effective user: the slot's own, else the top-level one. `None` (or
    /// `root`) means no privilege drop.
    pub user: Option<String>,
    /// Where that user was set: the slot's own `user` key, else the
    /// top-level one.
    pub user_site: Option<Site>,
    pub cwd: Option<String>,
    pub env: BTreeMap<String, String>,
    pub autostart: Autostart,
    pub log: Option<Log>,
    pub restart: Restart,
    pub readiness: Option<Readiness>,
    /// Canonical `SIGxxx` spelling.
    pub down_signal: Option<String>,
    pub stop_timeout_ms: Option<u32>,
    pub kind: Kind,
    /// `essential` as written; `None` lets a redirect make its slot
    /// essential for the container it runs in.
    pub essential: Option<bool>,
    /// What must hold before it starts (resolved: every instance of a
    /// template named).
    pub depends_on: Vec<Dependency>,
    /// `env_file`: dotenv files read at every start, in this order.
    pub env_files: Vec<String>,
    /// `secrets`: VAR → file read at every start; only paths live here.
    pub secrets: BTreeMap<String, String>,
    pub liveness: Option<Liveness>,
    /// `schedule`: a oneshot run at each tick (a job), not once per boot.
    pub schedule: Option<Schedule>,
}

/// `schedule`: when a job runs, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub when: crate::schedule::When,
    /// As written: `cron 0 3 * * *`, `every 300s`.
    pub text: String,
    /// An IANA name; None: the container's local time.
    pub timezone: Option<String>,
    /// Where `timezone` was written: whether the image has it is checked
    /// where the job runs (`unknown_timezones`).
    pub timezone_site: Option<Site>,
    /// A random delay of 0..jitter_s s added to each tick.
    pub jitter_s: u32,
    /// A run still going after this long gets the down signal.
    pub timeout_s: Option<u32>,
    /// At boot, run once if a tick passed while the container was down.
    pub catch_up: bool,
}

/// `liveness`: a check run every `interval_ms` while the slot runs (and is
/// ready); `failures` failed checks in a row restart it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Liveness {
    /// `Exec` (run as the slot's user), `Tcp` or `Http`.
    pub probe: Probe,
    pub interval_ms: u32,
    pub timeout_ms: u32,
    pub failures: u32,
}

/// One `depends_on` entry, resolved to a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub on: String,
    pub condition: Condition,
}

/// What a dependency must be before its dependent starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Up,
    Ready,
    /// Done: exited 0 and kept down (a oneshot).
    Completed,
}

impl Condition {
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::Up => "up",
            Condition::Ready => "ready",
            Condition::Completed => "completed",
        }
    }
}

/// `type`: a long-running service, or a job run to completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    Longrun,
    /// Runs once per boot (and per `svctl start`/`restart`); exit 0 is
    /// `done`. Its clean exit is never restarted.
    Oneshot,
}

impl Slot {
    /// The user to drop to, if any (`root` means none).
    pub fn run_as(&self) -> Option<&str> {
        self.user.as_deref().filter(|u| *u != "root" && *u != "0:0")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Autostart {
    Always,
    Never,
    /// The desired state last set by an operator; down when never set.
    Remember,
    /// Up when this variable is truthy (`1`, `true`, `yes`, any case).
    IfEnv(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    /// Absolute, normalized.
    pub dir: String,
    /// Also copy raw lines to the logger's stdout (`docker logs`).
    pub stdout: bool,
    /// Archived files kept (s6-log `n`).
    pub keep: u32,
    /// Size at which `current` is rotated (s6-log `s`).
    pub max_bytes: u32,
    /// `log.prefix`, expanded: before each line of the stdout copy.
    pub prefix: Option<String>,
    /// `log.format` of the stdout copy.
    pub format: LogFormat,
}

/// `log.format`: what the stdout copy looks like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// The line as the program wrote it (after `prefix`, if any).
    #[default]
    Text,
    /// One JSON object a line: `time`, `slot`, `line`.
    Json,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub permanent_exit_codes: Vec<u8>,
    pub on_clean_exit: OnCleanExit,
    /// Always on: a crash loop waits longer after each death.
    pub backoff: Backoff,
    /// Stop for good after this many deaths within `within_s` seconds;
    /// None (`max_deaths: 0`): never.
    pub max_deaths: Option<MaxDeaths>,
}

impl Default for Restart {
    fn default() -> Self {
        Restart {
            permanent_exit_codes: DEFAULT_PERMANENT_EXIT_CODES.to_vec(),
            on_clean_exit: OnCleanExit::Restart,
            backoff: Backoff {
                max_s: DEFAULT_BACKOFF_MAX_S,
                reset_after_s: DEFAULT_BACKOFF_RESET_AFTER_S,
            },
            max_deaths: Some(MaxDeaths {
                deaths: DEFAULT_MAX_DEATHS,
                within_s: DEFAULT_WITHIN_S,
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCleanExit {
    Restart,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub max_s: u32,
    /// A run longer than this resets the delay.
    pub reset_after_s: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxDeaths {
    pub deaths: u32,
    pub within_s: u32,
}

/// `readiness`: `Notification` (the daemon writes a newline to its fd
/// when ready), or `Exec`, a check command run (as the slot's user, in
/// its cwd) every `interval_ms` until it exits 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub probe: Probe,
    /// Between check runs (0 for a notification: s6 sees it).
    pub interval_ms: u32,
    /// How long the check may take to pass; 0 = keep trying forever.
    pub timeout_ms: u32,
}

impl Readiness {
    /// The check command, when readiness is a check svkit runs.
    pub fn check_command(&self) -> Option<&[String]> {
        match &self.probe {
            Probe::Exec(argv) => Some(argv),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub matches: Vec<String>,
    pub slot: String,
    pub opt_out_flag: Option<String>,
    pub opt_out_env: Option<String>,
    pub also_start: Vec<String>,
}
