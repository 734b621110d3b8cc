//! lifeline: run a helper process bound to its parent's lifetime, after
//! reaping a stale instance of it that squats its port.
//!
//! Concerns, one module each:
//! - [`procnet`]: `/proc/net/tcp{,6}` → listening sockets and their inodes;
//! - [`owners`]: socket inode → pids, through `/proc/PID/fd`;
//! - [`identity`]: pid → start time, uids, executable, argv;
//! - [`reap`]: stale-or-stranger verdicts, TERM/grace/KILL;
//! - [`spawn`]: the child in its own session, pdeathsig, stdin pipe, stop;
//! - [`ready`]: `--ready`, a [`crate::probe::Probe`] tried until it passes;
//! - [`statefile`]: the 0600, atomic, symlink-refusing record of the child;
//! - [`stop`]: what asks a running lifeline to stop (signals, stdin EOF);
//! - [`run`]: the sequence, which `svkit-lifeline` runs on its main thread.
//!
//! `docs/lifeline.md` is the user-facing description.

pub mod error;
pub mod identity;
pub mod owners;
pub mod procnet;
pub mod ready;
pub mod reap;
pub mod run;
pub mod spawn;
pub mod statefile;
pub mod stop;

pub use error::{Error, Result};
pub use ready::parse_ready;
pub use reap::{inspect_port, MatchArgs, PortReport};
pub use run::{Launched, Spec};
pub use spawn::{exit_code, WATCH_STDIN_ENV};
pub use stop::StopSources;
