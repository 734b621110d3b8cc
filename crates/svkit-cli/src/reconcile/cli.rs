//! The command line of `svkit-reconcile`.

use clap::Parser;
use std::path::PathBuf;

const AFTER: &str = "Prints one audit line per slot on stdout:
  reconcile: slot=gateway-default action=create state=up

Slot by slot: a slot that cannot be applied (its log dir cannot be made,
its user is unknown, ...) is left as it was and named on stderr with the
path and why; the other slots are applied and the exit code is 0 (the
container runs degraded; `svctl status` exits 3). `svctl apply` is all or
nothing.

The whole config is refused, nothing written, when it needs more s6
services (each slot, each logger, everything else in the scandir and in
/etc/services.d) than s6-svscan supervises (1,000 under s6-overlay).

Exit codes: 0 done, every slot that could be applied applied; 1 invalid
config or too many services for s6-svscan (nothing written); 100 bad
usage; 111 nothing could be reconciled (lock held too long, the scandir
unusable).

Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_SCANDIR (default
/run/service), SVKIT_S6_BIN (default /command, else PATH).";

#[derive(Parser)]
#[command(
    name = "svkit-reconcile",
    version,
    about = "Boot hook: render the declared svkit slots into the s6 scandir",
    after_help = AFTER
)]
pub struct Cli {
    /// Config dir [default: $SVKIT_CONFIG_DIR or /etc/svkit].
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
    /// Scandir [default: $SVKIT_SCANDIR or /run/service].
    #[arg(long, value_name = "DIR")]
    pub scandir: Option<PathBuf>,
    /// How long to wait for another reconcile to finish: 500ms, 3s, 2m; a
    /// bare number is milliseconds.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::duration::millis)]
    pub lock_timeout: std::time::Duration,
}
