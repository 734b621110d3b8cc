//! svkit-reconcile: the `/etc/cont-init.d/` hook. Reads the config, renders
//! the slots into the scandir, prunes stale ones, starts what should start.
//! The same algorithm as `svctl apply`.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;
use svkit::config::LoadError;
use svkit::reconcile::{self, ApplyOptions};
use svkit_reconcile::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            return ExitCode::from(100);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let config_dir = cli
        .config_dir
        .unwrap_or_else(svkit::config::config_dir_from_env);
    let scandir = cli.scandir.unwrap_or_else(svkit::container::scandir);
    let opts = ApplyOptions {
        lock_timeout: Duration::from_millis(cli.lock_timeout),
        ..Default::default()
    };
    let prepared = match reconcile::prepare(&config_dir) {
        Ok(p) => p,
        Err(LoadError::Invalid(diags)) => {
            eprintln!(
                "svkit-reconcile: fatal: invalid config in {}: nothing changed",
                config_dir.display()
            );
            for d in diags {
                eprintln!("{d}");
            }
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("svkit-reconcile: fatal: {e}");
            return ExitCode::from(111);
        }
    };
    for w in &prepared.warnings {
        eprintln!("svkit-reconcile: warning: {w}");
    }
    match reconcile::apply(&scandir, &prepared.desired, &opts) {
        Ok(outcome) => {
            for name in &outcome.swept {
                eprintln!("svkit-reconcile: info: swept {name} left by an interrupted reconcile");
            }
            print!("{}", outcome.audit());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "svkit-reconcile: fatal: unable to reconcile {}: {e}",
                scandir.display()
            );
            ExitCode::from(111)
        }
    }
}
