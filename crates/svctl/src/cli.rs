//! Command line. One subcommand per verb; each verb's code is in
//! `verbs/<verb>.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "svctl",
    version,
    about = "See and steer the svkit slots of an s6-overlay container",
    after_help = "Examples:
  svctl check                              validate /etc/svkit/*.json
  svctl check --config-dir ./svkit.d       validate another config dir
  svctl render --to /tmp/slots             write the slots for inspection

Exit codes: 0 ok, 1 invalid config, 100 bad usage, 111 system error.
Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_S6_BIN."
)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Validate the config and print every error found
    #[command(after_help = "Examples:
  svctl check
  svctl check --config-dir /etc/svkit

Prints one line per error, FILE:LINE:COL: FIELD: message.
Exit codes: 0 valid, 1 invalid, 100 bad usage, 111 unreadable config dir.")]
    Check(ConfigArgs),
    /// Render every declared slot into an empty directory (never a live scandir)
    #[command(after_help = "Examples:
  svctl render --to /tmp/slots
  svctl render --to ./out --config-dir ./svkit.d && cat ./out/*/run

Nothing is written when the config is invalid.
Exit codes: 0 rendered, 1 invalid config, 100 bad usage (e.g. DIR not empty), 111 system error.")]
    Render(RenderArgs),
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Config directory (default: $SVKIT_CONFIG_DIR, else /etc/svkit)
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Target directory: must be empty or not exist yet
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
}

impl ConfigArgs {
    pub fn dir(&self) -> PathBuf {
        self.config_dir
            .clone()
            .unwrap_or_else(svkit::config::config_dir_from_env)
    }
}
