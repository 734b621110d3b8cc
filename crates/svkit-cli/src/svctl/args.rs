//! Arguments of each verb.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use svkit::s6::control::SvcCommand;

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Config directory (default: $SVKIT_CONFIG_DIR, else /etc/svkit)
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
}

impl ConfigArgs {
    pub fn dir(&self) -> PathBuf {
        self.config_dir
            .clone()
            .unwrap_or_else(svkit::config::config_dir_from_env)
    }
}

/// Where the config and the slots are.
#[derive(Debug, Args)]
pub struct WhereArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Scandir (default: $SVKIT_SCANDIR, else /run/service)
    #[arg(long, value_name = "DIR")]
    pub scandir: Option<PathBuf>,
}

impl WhereArgs {
    pub fn scandir(&self) -> PathBuf {
        self.scandir
            .clone()
            .unwrap_or_else(svkit::container::scandir)
    }
}

/// Where users are looked up, for the verbs that work without a live tree.
#[derive(Debug, Args)]
pub struct RootArgs {
    /// Look slots' users up in DIR/etc/passwd (an image's root): an unknown
    /// user is then an error, not a warning
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub users: RootArgs,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub users: RootArgs,
    /// Target directory: must be empty or not exist yet
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Slots to show (default: every svkit slot in the scandir)
    #[arg(value_name = "SLOT")]
    pub slots: Vec<String>,
    /// Print JSON (schema in docs/svctl.md)
    #[arg(long)]
    pub json: bool,
    /// Also show slots svkit did not make
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct TopArgs {
    /// Slots to show (default: every svkit slot in the scandir)
    #[arg(value_name = "SLOT")]
    pub slots: Vec<String>,
    /// How often to read the slots again: 500ms, 2s; a bare number is
    /// milliseconds (at least 100ms)
    #[arg(long, value_name = "DURATION", value_parser = top_interval, default_value = "1s")]
    pub interval: Duration,
    /// Also show slots svkit did not make
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

/// A refresh faster than this would cost more than it shows.
fn top_interval(s: &str) -> Result<Duration, String> {
    let d = crate::duration::millis(s)?;
    if d < Duration::from_millis(100) {
        return Err("at least 100ms".into());
    }
    Ok(d)
}

/// How long a wait lasts unless `--timeout` says otherwise: every wait is
/// bounded, so a health check or a script never hangs on a slot that will
/// not get there.
pub const DEFAULT_WAIT: &str = "60s";

#[derive(Debug, Args)]
pub struct CtlArgs {
    /// Slots to act on
    #[arg(value_name = "SLOT", required_unless_present = "all")]
    pub slots: Vec<String>,
    /// Every svkit slot in the scandir
    #[arg(long, conflicts_with = "slots")]
    pub all: bool,
    /// Return only when the state is reached
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after DURATION (exit 1): 500ms, 3s, 2m; a bare
    /// number is milliseconds
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis, requires = "wait", default_value = DEFAULT_WAIT)]
    pub timeout: Duration,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitFor {
    Up,
    Ready,
    Down,
    /// Finished: a oneshot (or on_clean_exit: stop) that exited 0
    Done,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// What to wait for
    #[arg(value_enum)]
    pub what: WaitFor,
    /// Slots to wait for
    #[arg(value_name = "SLOT", required = true)]
    pub slots: Vec<String>,
    /// Give up after DURATION (exit 1): 500ms, 3s, 2m; a bare number is
    /// milliseconds
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis, default_value = DEFAULT_WAIT)]
    pub timeout: Duration,
    /// No time limit, and keep waiting through a slot that is gone, not
    /// supervised yet or failed (a dependent's run script uses it)
    #[arg(long, conflicts_with_all = ["timeout", "any"])]
    pub forever: bool,
    /// With --forever: end (exit 2, the failed slot and why on stdout) once
    /// a slot failed for good (an essential slot's run script uses it)
    #[arg(long, requires = "forever")]
    pub give_up: bool,
    /// Return when any one slot is there (default: all of them)
    #[arg(long)]
    pub any: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job (a slot with a schedule)
    #[arg(value_name = "SLOT")]
    pub slot: String,
    /// Wait for the run to end; exit with its exit code
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after DURATION (exit 1)
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis, requires = "wait", default_value = "3600s")]
    pub timeout: Duration,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The slot
    #[arg(value_name = "SLOT")]
    pub slot: String,
    /// Lines to show
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    pub lines: usize,
    /// Keep following the log, across rotations
    #[arg(short, long)]
    pub follow: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Print JSON: {"changes": bool, "slots": [{"name", "action", "state", "files"?, "restart"?}]}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// How long to wait for another reconcile to finish: 500ms, 3s, 2m; a
    /// bare number is milliseconds
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::millis, default_value = "30s")]
    pub lock_timeout: Duration,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct RegisterArgs {
    /// The instance name (e.g. a profile), as in `{instance}`
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The templated slot, e.g. 'gateway-{instance}' (needed when several exist)
    #[arg(long = "slot", value_name = "TEMPLATE")]
    pub template: Option<String>,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// A slot name (its remembered state) or a template name as declared,
    /// e.g. 'gw-{instance}' (its registered instances), that the config no
    /// longer declares
    #[arg(value_name = "NAME", required_unless_present = "all")]
    pub names: Vec<String>,
    /// Every such record
    #[arg(long, conflicts_with = "names")]
    pub all: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

fn parse_signal(s: &str) -> Result<SvcCommand, String> {
    SvcCommand::from_signal(s).ok_or_else(|| {
        format!(
            "unknown signal `{s}` (use {} or their numbers)",
            svkit::s6::control::signal_names()
        )
    })
}

#[derive(Debug, Args)]
pub struct SignalArgs {
    /// Signal: a name (TERM, SIGTERM) or a number
    #[arg(value_name = "SIG", value_parser = parse_signal, allow_hyphen_values = true)]
    pub signal: SvcCommand,
    /// Slots to signal
    #[arg(value_name = "SLOT", required = true)]
    pub slots: Vec<String>,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Slots to follow (default: every svkit slot, and those added later)
    #[arg(value_name = "SLOT")]
    pub slots: Vec<String>,
    /// One JSON object per line (schema in docs/svctl.md)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Slots to show (default: every svkit slot in the scandir)
    #[arg(value_name = "SLOT")]
    pub slots: Vec<String>,
    /// Also show slots svkit did not make
    #[arg(long, conflicts_with = "slots")]
    pub all: bool,
    #[command(flatten)]
    pub at: WhereArgs,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The slot whose user, cwd, env, env files and secrets the command gets
    #[arg(value_name = "SLOT")]
    pub slot: String,
    /// The command and its arguments (after `--`)
    #[arg(
        value_name = "CMD",
        required = true,
        last = true,
        allow_hyphen_values = true
    )]
    pub argv: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// `svctl import --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FromFormat {
    Supervisord,
    Procfile,
    S6,
    Crontab,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The format of every PATH (default: detected from each one's name and content)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<FromFormat>,
    /// A supervisord config, a Procfile, an s6-overlay services.d or s6-rc.d dir, or a crontab
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Write the config to FILE, all or nothing (default: stdout, also `-`)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing --output FILE
    #[arg(long)]
    pub force: bool,
    /// Also run svctl check's full check on the result before writing it
    #[arg(long)]
    pub check: bool,
    /// With --check: look users and programs up in the image at DIR
    #[arg(long, value_name = "DIR", requires = "check")]
    pub root: Option<PathBuf>,
    /// supervisord: a lower priority starts first (depends_on: up)
    #[arg(long)]
    pub priority_as_order: bool,
}
