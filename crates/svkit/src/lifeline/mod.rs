//! lifeline: run a helper process bound to its parent's lifetime, after
//! reaping a stale instance of it that squats its port.
//!
//! Concerns, one module each:
//! - [`port`]: who holds a port: `/proc/net/tcp{,6}` → listening sockets
//!   → pids, through `/proc/PID/fd`;
//! - [`identity`]: pid → start time, uids, executable, argv;
//! - [`reap`]: stale-or-stranger verdicts, TERM/grace/KILL;
//! - [`spawn`]: the child in its own session, pdeathsig, stdin pipe, stop;
//! - [`statefile`]: the 0600, atomic, symlink-refusing record of the child;
//! - [`stop`]: what asks a running lifeline to stop (signals, stdin EOF);
//! - [`run`]: the sequence, which `svkit-lifeline` runs on its main thread,
//!   and its `--ready`, a [`crate::probe::Probe`] tried until it passes.
//!
//! `docs/lifeline.md` is the user-facing description.

pub mod error;
pub mod identity;
pub mod port;
pub mod reap;
pub mod run;
pub mod spawn;
pub mod statefile;
pub mod stop;

pub use error::{Error, Result};
pub use port::{inspect_port, PortReport};
pub use reap::MatchArgs;
pub use run::{parse_ready, Launched, Spec};
pub use spawn::{exit_code, WATCH_STDIN_ENV};
pub use stop::StopSources;
