//! `svkit job`: what a job's scripts run (see `svkit::slot::job`): `wait`
//! (its `run`: sleep until the next tick, then exec the rest), `end` (its
//! `finish`: record the run), `timeout` (the watcher of a run's
//! `timeout_s`, started detached by `wait`).

use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use svkit::msg::exit::OK;
use svkit::schedule::{Cron, When};
use svkit::slot::job::{self, Job};

#[derive(Parser)]
struct JobArgs {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// Sleep until the next tick, then exec ARGV.
    Wait {
        #[command(flatten)]
        job: Schedule,
        /// A run still going after S seconds is ended as a stop would end it.
        #[arg(long, value_name = "S")]
        timeout: Option<u64>,
        #[arg(last = true, required = true, value_name = "ARGV")]
        argv: Vec<std::ffi::OsString>,
    },
    /// Record the end of a run (`finish`'s `$1`, `$2`).
    End {
        #[command(flatten)]
        job: Schedule,
        #[arg(long)]
        code: u32,
        #[arg(long)]
        signal: u32,
        /// Not empty: an operator's stop or restart ended it.
        #[arg(long, default_value = "")]
        requested: String,
    },
    /// Watch the run PID (started at START, /proc's clock ticks).
    Timeout {
        #[arg(long)]
        slot: String,
        #[arg(long)]
        pid: i32,
        #[arg(long)]
        start: u64,
        #[arg(long, value_name = "S")]
        after: u64,
        /// Start the watcher in the background and return at once.
        #[arg(long)]
        detach: bool,
    },
}

/// The job's schedule, as the rendered scripts pass it.
#[derive(Args)]
struct Schedule {
    #[arg(long)]
    slot: String,
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    #[arg(
        long,
        value_name = "S",
        conflicts_with = "cron",
        required_unless_present = "cron"
    )]
    every: Option<u32>,
    #[arg(long, value_name = "EXPR")]
    cron: Option<String>,
    #[arg(long, value_name = "ZONE")]
    timezone: Option<String>,
    #[arg(long, value_name = "S", default_value_t = 0)]
    jitter: u32,
    #[arg(long)]
    catch_up: bool,
}

impl Schedule {
    fn job(&self) -> Result<Job, String> {
        let when = match (&self.cron, self.every) {
            (Some(c), _) => When::Cron(Cron::parse(c)?),
            (None, Some(n)) if n > 0 => When::Every(n),
            _ => return Err("--every must be 1 or more".into()),
        };
        Ok(Job {
            slot: self.slot.clone(),
            state_dir: self.state_dir.clone(),
            when,
            timezone: self.timezone.clone(),
            jitter_s: self.jitter,
            catch_up: self.catch_up,
        })
    }
}

/// Run by a job's `run` and `finish`, in its slot dir.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    svkit::msg::init("svkit job");
    let args: JobArgs = super::parse("job", args);
    match run(args.verb) {
        Ok(()) => ExitCode::from(OK),
        Err(e) => {
            svkit::msg::say_beside("fatal", e);
            ExitCode::from(111)
        }
    }
}

/// Runs `verb`; what kept it from being done, in a line.
fn run(verb: Verb) -> Result<(), String> {
    let bad_schedule = |e: String| format!("bad schedule: {e}");
    match verb {
        Verb::Wait { job, timeout, argv } => {
            let job = job.job().map_err(bad_schedule)?;
            job::wait(&job).map_err(|e| format!("job {}: {e}", job.slot))?;
            if let Some(after) = timeout {
                let me = i32::try_from(std::process::id()).unwrap_or(0);
                if let Some(run) = svkit::stray::Copy::of(me) {
                    let watcher = Command::new("svkit")
                        .args(["job", "timeout", "--detach", "--slot", &job.slot])
                        .args(["--pid", &me.to_string()])
                        .args(["--start", &run.start_time.to_string()])
                        .args(["--after", &after.to_string()])
                        .stdin(Stdio::null())
                        .status();
                    if !watcher.is_ok_and(|s| s.success()) {
                        svkit::msg::say_beside(
                            "warning",
                            format_args!("job {}: its timeout watcher did not start", job.slot),
                        );
                    }
                }
            }
            let (prog, rest) = argv
                .split_first()
                .map_or((Default::default(), &[][..]), |(p, r)| (p.clone(), r));
            let e = Command::new(&prog).args(rest).exec();
            Err(format!("unable to run {}: {e}", prog.to_string_lossy()))
        }
        Verb::End {
            job,
            code,
            signal,
            requested,
        } => {
            let job = job.job().map_err(bad_schedule)?;
            job::end(&job, code, signal, !requested.is_empty())
                .map_err(|e| format!("job {}: {e}", job.slot))
        }
        Verb::Timeout {
            slot,
            pid,
            start,
            after,
            detach,
        } => {
            if detach {
                return super::detach_again()
                    .map_err(|e| format!("unable to start the timeout watcher: {e}"));
            }
            let run = svkit::stray::Copy {
                pid,
                start_time: start,
            };
            let after = Duration::from_secs(after);
            job::watch_timeout(std::path::Path::new("."), &slot, run, after)
                .map_err(|e| format!("job {slot}: {e}"))
        }
    }
}
