//! `svkit-wrap`, the CMD wrapper: [`main`] is the whole program, and
//! `svkit-docgen` builds the man page from [`HELP`]. It parses its argv by
//! hand (everything after `--` belongs to the wrapped command), so there is
//! no clap definition to share.

mod entry;
mod foreground;

pub use entry::main;

/// What `svkit-wrap --help` prints (followed by a newline).
pub const HELP: &str = "svkit-wrap: run the container's command, supervised when the config says so

Usage: svkit-wrap [--] [ARGV...]

Routing: no ARGV runs default_program; an ARGV[0] found on PATH runs as is;
otherwise default_program is prepended (`gateway run` -> `app gateway run`).

A routed command matching a redirect in the config is started in its s6
slot instead, and the process stays alive until the container is stopped
(128+signal): svkit-wrap execs s6-overlay's s6-pause in its place. It runs in the foreground when the redirect's opt-out
flag is given (and removed), its opt-out variable is truthy (1/true/yes),
the slot's sentinel variable is set (a supervised child never redirects),
or s6-overlay is not running (with one warning). Opted out, it runs as its
slot would (user, cwd, env, env files, secrets), after the slot's
depends_on when s6 runs (120 s for them all). Run as the CMD under
s6-overlay, a foreground command is recorded in /run/svkit/foreground:
at docker stop the stop hook sends it its slot's down_signal (else TERM)
and waits up to its stop_timeout_ms (else 5 s); an opt-out's slot does not
start while it runs (svctl start refuses, exit 5). Words after a redirect's
match are refused (100), never dropped: the slot runs its own command.

Exit codes: the foreground command's own; 128+N after signal N while
holding a redirect; 1 invalid config, or a depends_on that never came; 78
an env file or secret refused; 100 nothing to run (no ARGV and no
default_program), or words after a redirect's match; 111 system error; 126
command not executable; 127 command not found.

Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_SCANDIR
(default /run/service), SVKIT_S6_BIN.";

/// What `svkit-wrap --version` prints after `svkit-wrap `.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
