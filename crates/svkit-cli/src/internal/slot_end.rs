//! `svkit slot-end`: where every path of a slot's `finish` that does not
//! simply restart it ends, exec'd (see `svkit::slot::end`): `keep` keeps
//! the slot down for good, `died` applies the crash-loop rule and its
//! backoff. Neither forks, so a `finish` under a pids limit that cannot
//! fork still counts the death and waits out its backoff.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use svkit::config::{Backoff, MaxDeaths};
use svkit::slot::end::{self, Exit};

#[derive(Parser)]
struct SlotEndArgs {
    #[command(subcommand)]
    then: Then,
}

#[derive(Subcommand)]
enum Then {
    /// Keep the slot down: RECORD in `.svkit-end`, `svkit: slot NAME SAID`.
    Keep {
        #[command(flatten)]
        death: Death,
        record: String,
        said: String,
    },
    /// A death no other rule decided: down at MAX_DEATHS (0: never) within
    /// WITHIN_S, else the backoff.
    Died {
        #[command(flatten)]
        death: Death,
        max_deaths: u32,
        within_s: u32,
        max_s: u32,
        reset_after_s: u32,
        /// Its exit 0 is a completion, not a death.
        #[arg(long)]
        completes: bool,
    },
}

/// `finish`'s `$1`, `$2`, and its `$essential` (empty: not essential).
#[derive(Args)]
struct Death {
    code: u32,
    signal: u32,
    essential: String,
}

impl Death {
    fn essential(&self) -> Option<Exit> {
        (!self.essential.is_empty()).then_some(Exit {
            code: self.code,
            signal: self.signal,
        })
    }
}

/// Run by `finish` in the slot dir.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    svkit::msg::init("svkit slot-end");
    let args: SlotEndArgs = super::parse("slot-end", args);
    let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    ExitCode::from(match args.then {
        Then::Keep {
            death,
            record,
            said,
        } => end::keep_down(&dir, &record, &said, death.essential()),
        Then::Died {
            death,
            max_deaths,
            within_s,
            max_s,
            reset_after_s,
            completes,
        } => {
            let max = (max_deaths > 0).then_some(MaxDeaths {
                deaths: max_deaths,
                within_s,
            });
            let backoff = Backoff {
                max_s,
                reset_after_s,
            };
            end::after_death(&dir, max, backoff, completes, death.essential())
        }
    })
}
