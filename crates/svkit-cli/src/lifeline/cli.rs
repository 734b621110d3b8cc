//! The command line of `svkit-lifeline`, with its value parsers.

use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use nix::sys::signal::Signal;

use svkit::lifeline::MatchArgs;

const AFTER_HELP: &str = "\
Identity rules (a holder of the port is reaped only if one holds):
  state file   its pid and start time (field 22 of /proc/PID/stat) are the
               ones --state FILE recorded for this port;
  --match[=N]  it runs as our real and effective uid, its executable is the
               file CMD resolves to on PATH (same device and inode), and its
               arguments after argv[0] equal ours (all, or the first N);
  session      it is in the session led by a holder proven stale above.
Anything else holding the port is reported by pid and command; nothing is
killed.

Binding: the child gets its own session, a stdin pipe only lifeline writes
to, LIFELINE_WATCH_STDIN=1, and PR_SET_PDEATHSIG (--child-deathsig, default
KILL) so that lifeline's own hard death ends it. Lifeline itself takes
PR_SET_PDEATHSIG=TERM from its parent (unless --no-parent-deathsig), and with
--watch-stdin also stops when its stdin reaches EOF: killing lifeline's
parent with -9 stops the child either way. A parent outside lifeline's PID
namespace (`docker exec`, whose runtime process may exit at once under -d)
is not bound to: lifeline says so and runs until stopped.

Stop (SIGTERM, SIGINT, SIGHUP, or stdin EOF with --watch-stdin): close the
child's stdin, SIGTERM its process group, wait --grace, SIGKILL.

Exit codes:
  N      the child's exit code; 128+N if it died of signal N
  100    usage error
  101    port held by a process not provably stale (or by a socket no
         visible process owns); nothing was killed
  102    stale instance reaped but the port did not become free
  103    readiness timed out (child stopped)
  104    child exited before it was ready
  105    state file refused (symlink, other owner, not a regular file,
         malformed)
  111    system error
  126    CMD could not be executed; 127 CMD not found
  --which-port: 0 port held (holders printed), 1 port free

See docs/lifeline.md.";

/// Run CMD bound to the lifetime of lifeline's parent, after reaping a
/// provably stale instance squatting its port.
#[derive(Parser, Debug)]
#[command(name = "svkit-lifeline", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// TCP port the child listens on: if taken, reap a stale holder first.
    #[arg(long, value_name = "P", value_parser = parse_port)]
    pub port: Option<u16>,

    /// Address the child binds (IPv4 or IPv6 literal) [default: 127.0.0.1,
    /// or any address for --which-port].
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,

    /// State file recording the child ({"port","pid","start_time","cmdline"}, 0600).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// Treat a holder with CMD's executable, our uid and the same arguments
    /// (all, or the first N after the program) as a stale instance.
    #[arg(long = "match", value_name = "N", num_args = 0..=1, default_missing_value = "all", value_parser = parse_match)]
    pub match_args: Option<MatchArgs>,

    /// Time between SIGTERM and SIGKILL (reaping and stopping): 500ms, 3s,
    /// 2m; a bare number is seconds.
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = crate::duration::secs)]
    pub grace: Duration,

    /// Wait until the child answers: `tcp` (connect to --bind:--port) or
    /// http://HOST:PORT/PATH (GET must answer 2xx).
    #[arg(long, value_name = "tcp|URL")]
    pub ready: Option<String>,

    /// How long to wait for readiness: 500ms, 3s, 2m; a bare number is
    /// milliseconds.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::duration::millis)]
    pub ready_timeout: Duration,

    /// Stop the child and exit when lifeline's stdin reaches EOF (data read is discarded).
    #[arg(long)]
    pub watch_stdin: bool,

    /// Signal the child gets if lifeline dies hard: kill or term.
    #[arg(long, value_name = "SIG", default_value = "kill", value_parser = parse_deathsig)]
    pub child_deathsig: Signal,

    /// Do not take SIGTERM when lifeline's parent (the thread that spawned
    /// it) exits; use when spawning from a short-lived thread or in the background.
    #[arg(long)]
    pub no_parent_deathsig: bool,

    /// Print who holds port P (pid, uid, start time, command) and exit; no CMD.
    #[arg(long, value_name = "P", value_parser = parse_port, conflicts_with_all = ["port", "state", "match_args", "ready", "watch_stdin"])]
    pub which_port: Option<u16>,

    /// The command to run, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<OsString>,
}

fn parse_port(s: &str) -> Result<u16, String> {
    match s.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        Ok(p) => Err(format!("port {p} is out of range (want 1-65535)")),
        Err(_) => Err(format!("{s:?} is not a port number (want 1-65535)")),
    }
}

fn parse_match(s: &str) -> Result<MatchArgs, String> {
    if s == "all" {
        return Ok(MatchArgs::All);
    }
    s.parse::<usize>()
        .map(MatchArgs::Prefix)
        .map_err(|_| format!("{s:?}: want `all` or a number of arguments"))
}

fn parse_deathsig(s: &str) -> Result<Signal, String> {
    match s.to_ascii_lowercase().trim_start_matches("sig") {
        "kill" => Ok(Signal::SIGKILL),
        "term" => Ok(Signal::SIGTERM),
        _ => Err(format!("{s:?}: want kill or term")),
    }
}
