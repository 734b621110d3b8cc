//! `svkit-lifeline`: a thin main over `svkit::lifeline`.

use std::ffi::OsString;
use std::io::Write;
use std::net::IpAddr;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use nix::sys::signalfd::{SfdFlags, SignalFd};

use svkit::lifeline::{self, exit, reap, spawn::Event, Error, Launched, MatchArgs, Probe, Spec};

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
parent with -9 stops the child either way.

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
struct Cli {
    /// TCP port the child listens on: if taken, reap a stale holder first.
    #[arg(long, value_name = "P", value_parser = parse_port)]
    port: Option<u16>,

    /// Address the child binds (IPv4 or IPv6 literal) [default: 127.0.0.1,
    /// or any address for --which-port].
    #[arg(long, value_name = "ADDR")]
    bind: Option<IpAddr>,

    /// State file recording the child ({"port","pid","start_time","cmdline"}, 0600).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,

    /// Treat a holder with CMD's executable, our uid and the same arguments
    /// (all, or the first N after argv[0]) as a stale instance.
    #[arg(long = "match", value_name = "N", num_args = 0..=1, default_missing_value = "all", value_parser = parse_match)]
    match_args: Option<MatchArgs>,

    /// Seconds between SIGTERM and SIGKILL (reaping and stopping); `500ms` also works.
    #[arg(long, value_name = "SECS", default_value = "3", value_parser = parse_grace)]
    grace: Duration,

    /// Wait until the child answers: `tcp` (connect to --bind:--port) or
    /// http://HOST:PORT/PATH (GET must answer 2xx).
    #[arg(long, value_name = "tcp|URL")]
    ready: Option<String>,

    /// Milliseconds to wait for readiness; `5s` also works.
    #[arg(long, value_name = "MS", default_value = "10000", value_parser = parse_ready_timeout)]
    ready_timeout: Duration,

    /// Stop the child and exit when lifeline's stdin reaches EOF (data read is discarded).
    #[arg(long)]
    watch_stdin: bool,

    /// Signal the child gets if lifeline dies hard: kill or term.
    #[arg(long, value_name = "SIG", default_value = "kill", value_parser = parse_deathsig)]
    child_deathsig: Signal,

    /// Do not take SIGTERM when lifeline's parent (the thread that spawned
    /// it) exits; use when spawning from a short-lived thread or in the background.
    #[arg(long)]
    no_parent_deathsig: bool,

    /// Print who holds port P (pid, uid, start time, command) and exit; no CMD.
    #[arg(long, value_name = "P", value_parser = parse_port, conflicts_with_all = ["port", "state", "match_args", "ready", "watch_stdin"])]
    which_port: Option<u16>,

    /// The command to run, after `--`.
    #[arg(last = true, value_name = "CMD")]
    cmd: Vec<OsString>,
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

/// A duration: `NUMBERms`, `NUMBERs`, or a bare NUMBER in `bare_unit_ms`.
fn parse_duration(s: &str, bare_unit_ms: f64) -> Result<Duration, String> {
    let (num, unit_ms) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (s, bare_unit_ms)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * unit_ms <= 86_400_000.0 => {
            Ok(Duration::from_secs_f64(v * unit_ms / 1000.0))
        }
        _ => Err(format!(
            "{s:?} is not a duration (e.g. 3, 0.5, 500ms, 2s; at most a day)"
        )),
    }
}

fn parse_grace(s: &str) -> Result<Duration, String> {
    parse_duration(s, 1000.0)
}

fn parse_ready_timeout(s: &str) -> Result<Duration, String> {
    parse_duration(s, 1.0)
}

fn parse_deathsig(s: &str) -> Result<Signal, String> {
    match s.to_ascii_lowercase().trim_start_matches("sig") {
        "kill" => Ok(Signal::SIGKILL),
        "term" => Ok(Signal::SIGTERM),
        _ => Err(format!("{s:?}: want kill or term")),
    }
}

fn fatal(e: &Error) -> ExitCode {
    eprintln!("svkit-lifeline: fatal: {e}");
    code(e.exit_code())
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(c.clamp(0, 255) as u8)
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("svkit-lifeline: fatal: usage: {msg}");
    code(exit::USAGE)
}

fn main() -> ExitCode {
    // Read first: the longer we wait, the likelier a dead parent has already
    // been replaced by a reaper as our parent.
    let parent = nix::unistd::getppid();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
                _ => {
                    let text = e.render().to_string();
                    let first = text.lines().next().unwrap_or("bad arguments");
                    usage(&format!(
                        "{}; see --help",
                        first.trim_start_matches("error: ")
                    ))
                }
            };
        }
    };
    if let Some(port) = cli.which_port {
        if !cli.cmd.is_empty() {
            return usage("--which-port takes no command");
        }
        return which_port(port, cli.bind);
    }
    run(cli, parent)
}

fn which_port(port: u16, bind: Option<IpAddr>) -> ExitCode {
    let report = match reap::inspect_port(port, bind) {
        Ok(r) => r,
        Err(e) => return fatal(&e),
    };
    let mut out = std::io::stdout().lock();
    for id in &report.owners {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}",
            id.pid,
            id.euid,
            id.start_time,
            id.command_line()
        );
    }
    for s in &report.unowned {
        let _ = writeln!(
            out,
            "-\t{}\t-\tno visible process holds {} (socket inode {})",
            s.uid, s.local, s.inode
        );
    }
    if report.is_free() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What can ask lifeline to stop: signals (through a signalfd) and, with
/// --watch-stdin, EOF on stdin.
struct StopSources {
    signals: SignalFd,
    watch_stdin: bool,
    stdin: std::io::Stdin,
    stop_signal: Option<Signal>,
}

impl StopSources {
    fn fds(&self) -> Vec<BorrowedFd<'_>> {
        let mut v = vec![self.signals.as_fd()];
        if self.watch_stdin {
            v.push(self.stdin.as_fd());
        }
        v
    }

    /// Drains what is pending on source `i`; true if it means "stop".
    /// Called only after poll reported `i` ready, so the read does not block
    /// (stdin is left blocking: O_NONBLOCK would leak to whoever shares it).
    fn drain(&mut self, i: usize) -> bool {
        if i == 0 {
            if let Ok(Some(info)) = self.signals.read_signal() {
                self.stop_signal = Signal::try_from(info.ssi_signo as i32).ok();
                return true;
            }
            return false;
        }
        let mut buf = [0u8; 4096];
        match nix::unistd::read(0, &mut buf) {
            Ok(0) => true,
            Ok(_) | Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => false,
            // An unreadable stdin cannot tell us anything any more: treat it
            // like EOF rather than spin on it.
            Err(_) => true,
        }
    }

    /// Non-blocking check of every source.
    fn requested(&mut self) -> bool {
        let ready: Vec<usize> = {
            let fds = self.fds();
            let mut pfds: Vec<PollFd> = fds
                .iter()
                .map(|fd| PollFd::new(*fd, PollFlags::POLLIN))
                .collect();
            if nix::poll::poll(&mut pfds, PollTimeout::ZERO).unwrap_or(0) <= 0 {
                return false;
            }
            pfds.iter()
                .enumerate()
                .filter(|(_, p)| !p.revents().unwrap_or(PollFlags::empty()).is_empty())
                .map(|(i, _)| i)
                .collect()
        };
        let mut stop = false;
        for i in ready {
            stop |= self.drain(i);
        }
        stop
    }
}

fn run(cli: Cli, parent: nix::unistd::Pid) -> ExitCode {
    if cli.cmd.is_empty() {
        return usage("no command given (svkit-lifeline [OPTIONS] -- CMD ARGS...)");
    }
    let bind = cli
        .bind
        .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    let mut spec = Spec::new(cli.cmd.clone());
    spec.port = cli.port;
    spec.bind = bind;
    spec.state = cli.state.clone();
    spec.match_args = cli.match_args;
    spec.grace = cli.grace;
    spec.ready_timeout = cli.ready_timeout;
    spec.death_signal = cli.child_deathsig;
    if let Some(r) = &cli.ready {
        match Probe::parse(r, cli.port, bind) {
            Ok(p) => spec.ready = Some(p),
            Err(e) => return fatal(&e),
        }
    }
    if let Err(e) = spec.validate() {
        return fatal(&e);
    }

    // Signals are blocked before anything else so a SIGTERM that arrives
    // while reaping or probing is queued, not fatal: it is read from the
    // signalfd and turned into an orderly stop.
    let mask =
        match lifeline::spawn::block_signals(&[Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP]) {
            Ok(m) => m,
            Err(e) => return fatal(&e),
        };
    let signals = match SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
    {
        Ok(s) => s,
        Err(e) => {
            return fatal(&Error::Io {
                what: "unable to create a signalfd".into(),
                source: e.into(),
            })
        }
    };
    if !cli.no_parent_deathsig {
        // TERM (not KILL) so the parent's death goes through the orderly
        // stop below; it arrives through the signalfd like any SIGTERM.
        if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM) {
            return fatal(&Error::Io {
                what: "unable to set PR_SET_PDEATHSIG".into(),
                source: e.into(),
            });
        }
        if nix::unistd::getppid() != parent {
            eprintln!(
                "svkit-lifeline: fatal: parent exited before lifeline started: nothing spawned"
            );
            return code(exit::SYSTEM);
        }
    }
    let mut stop = StopSources {
        signals,
        watch_stdin: cli.watch_stdin,
        stdin: std::io::stdin(),
        stop_signal: None,
    };

    let (launched, reaped) = match lifeline::run::launch(&spec, &mut || stop.requested()) {
        Ok(x) => x,
        Err(e) => return fatal(&e),
    };
    if let Some(r) = reaped {
        if !r.terminated.is_empty() {
            eprintln!("svkit-lifeline: info: reaped stale instance(s) on port {}: pids {:?} (SIGKILL needed for {:?})",
                spec.port.unwrap_or(0), r.terminated, r.killed);
        }
    }
    let (mut running, mut stopping) = match launched {
        Launched::Ready(r) => (r, false),
        Launched::StopRequested(r) => (r, true),
    };
    while !stopping {
        let event = {
            let fds = stop.fds();
            running.wait_event(&fds)
        };
        match event {
            Ok(Event::Exited(_)) => break,
            Ok(Event::Fd(i)) => stopping = stop.drain(i),
            Err(e) => {
                eprintln!("svkit-lifeline: warning: {e}: stopping the child");
                stopping = true;
            }
        }
    }
    match lifeline::run::finish(&spec, &mut running, stopping) {
        Ok(status) => code(lifeline::exit_code(status)),
        Err(e) => fatal(&e),
    }
}
