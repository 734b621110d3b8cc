//! Deciding whether the holders of a port may be killed, and killing them.
//!
//! The rule is "provably a stale instance of ours, or nothing is killed":
//! - its pid and start time are the ones our state file recorded, or
//! - `--match`: it runs as our uid (real and effective), its executable is
//!   the very file our command resolves to (same device and inode), and its
//!   arguments after `argv[0]` equal ours (all of them, or the first N), or
//! - it is in the session led by an owner proven stale by the above (the
//!   lifeline child is a session leader; what it forked is its own).
//!
//! Everything else holding the port is a stranger: we report and stop.

use std::ffi::OsString;
use std::fmt;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use super::identity::{self, Identity};
use super::port::{inspect_port, PortReport};
use super::statefile::StateRecord;
use super::{Error, Result};
use crate::clock::poll_until;

/// How many arguments after `argv[0]` `--match` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchArgs {
    All,
    Prefix(usize),
}

/// The identity a stale instance of our command would have.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub exe: PathBuf,
    exe_file: (u64, u64),
    args: Vec<OsString>,
    mode: MatchArgs,
}

impl Matcher {
    /// Builds the matcher for `argv` (`argv[0]` is resolved through `PATH`),
    /// once [`super::run::Spec::validate`] has checked `mode` against it.
    pub fn new(argv: &[OsString], mode: MatchArgs) -> Result<Matcher> {
        let (first, args) = argv
            .split_first()
            .ok_or_else(|| Error::Usage("--match needs a command".into()))?;
        let exe = crate::container::find_program(Path::new(first)).ok_or_else(|| Error::Spawn {
            program: first.to_string_lossy().into_owned(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
        let meta = std::fs::metadata(&exe)
            .map_err(|e| Error::io(format!("unable to stat {}", exe.display()), e))?;
        Ok(Matcher {
            exe_file: (meta.dev(), meta.ino()),
            exe,
            args: args.to_vec(),
            mode,
        })
    }

    /// Why `id` is not a stale instance, or `None` if it is one.
    pub fn mismatch(&self, id: &Identity) -> Option<String> {
        let (ruid, euid) = (nix::unistd::getuid(), nix::unistd::geteuid());
        if id.ruid != ruid.as_raw() || id.euid != euid.as_raw() {
            return Some(format!("runs as uid {} (we are uid {euid})", id.euid));
        }
        if id.exe_file != Some(self.exe_file) {
            let theirs = (id.exe.as_ref()).map_or("unknown".into(), |p| p.display().to_string());
            return Some(format!("executable {theirs} is not {}", self.exe.display()));
        }
        let theirs = id.cmdline.get(1..).unwrap_or(&[]);
        let same = match self.mode {
            MatchArgs::All => theirs == self.args.as_slice(),
            MatchArgs::Prefix(n) => theirs
                .get(..n)
                .is_some_and(|t| self.args.get(..n) == Some(t)),
        };
        (!same).then(|| "arguments differ".into())
    }
}

/// A process holding the port, with the verdict on it.
#[derive(Debug, Clone)]
pub struct PortHolder {
    pub id: Identity,
    /// `Ok` stale (by one of the rules above), `Err(why not)` a stranger.
    pub verdict: std::result::Result<(), String>,
}

/// What the port's holders were judged to be.
#[derive(Debug, Clone)]
pub struct StrangerReport {
    pub report: PortReport,
    pub owners: Vec<PortHolder>,
}

impl fmt::Display for StrangerReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.report;
        let at = r.bind.map_or(String::new(), |ip| format!(" ({ip})"));
        write!(
            f,
            "port {}{at} is in use and not provably by a stale instance; nothing was killed",
            r.port
        )?;
        for o in &self.owners {
            if let Err(why) = &o.verdict {
                let (pid, uid, cmd) = (o.id.pid, o.id.euid, o.id.command_line());
                write!(f, "; held by pid {pid} uid {uid} ({cmd}): {why}")?;
            }
        }
        let unreadable = match r.unreadable.len() {
            0 => String::new(),
            n => format!(" ({n} processes unreadable)"),
        };
        for s in &r.unowned {
            write!(
                f,
                "; a listening socket on {} (inode {}, created by uid {}) is held by no process we can see: \
                 it belongs to another user's process we may not inspect{unreadable} or to another PID namespace",
                s.local, s.inode, s.uid,
            )?;
        }
        Ok(())
    }
}

/// Judges each holder of the port. `Ok(owners)` when every holder is a
/// stale instance; `Err(PortHeld)` otherwise (nothing has been done).
pub fn classify(
    report: &PortReport,
    state: Option<&StateRecord>,
    matcher: Option<&Matcher>,
) -> Result<Vec<PortHolder>> {
    let verdict = |id: &Identity| {
        if state.is_some_and(|s| {
            s.port == report.port && s.pid == id.pid && s.start_time == id.start_time
        }) {
            return Ok(());
        }
        match matcher.map(|m| m.mismatch(id)) {
            Some(None) => Ok(()),
            Some(Some(why)) => Err(format!("not in the state file, and for --match: {why}")),
            None if state.is_some() => Err("not the process the state file records".into()),
            None => Err("no --state or --match identifies it as ours".into()),
        }
    };
    let mut owners: Vec<PortHolder> = (report.owners.iter())
        .map(|id| PortHolder {
            id: id.clone(),
            verdict: verdict(id),
        })
        .collect();
    // In the session of a stale leader: stale too.
    let leaders: Vec<i32> = (owners.iter())
        .filter(|o| o.verdict.is_ok() && o.id.session == o.id.pid)
        .map(|o| o.id.pid)
        .collect();
    for o in owners.iter_mut() {
        if leaders.contains(&o.id.session) {
            o.verdict = Ok(());
        }
    }
    if owners.iter().any(|o| o.verdict.is_err()) || !report.unowned.is_empty() {
        let report = report.clone();
        return Err(Error::PortHeld(Box::new(StrangerReport { report, owners })));
    }
    Ok(owners)
}

/// How long to wait, after SIGKILL, for the process to vanish and the port to
/// be released (the kernel closes sockets as the process exits).
pub const AFTER_KILL: Duration = Duration::from_secs(5);

/// What reaping did, for logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapOutcome {
    pub terminated: Vec<i32>,
    pub killed: Vec<i32>,
}

/// SIGTERM the stale owners, wait up to `grace`, SIGKILL survivors, then
/// wait (bounded) until nothing listens on the port.
pub fn reap(
    owners: &[PortHolder],
    port: u16,
    bind: Option<IpAddr>,
    grace: Duration,
) -> Result<ReapOutcome> {
    let targets: Vec<(i32, u64)> = owners.iter().map(|o| (o.id.pid, o.id.start_time)).collect();
    // The pids `sig` reached.
    let signal = |sig: Signal, verb: &str| -> Result<Vec<i32>> {
        let mut hit = Vec::new();
        for &(pid, st) in &targets {
            let sent = identity::signal_if_same(pid, st, sig, false);
            if sent.map_err(|e| Error::io(format!("unable to {verb} pid {pid}"), e))? {
                hit.push(pid);
            }
        }
        Ok(hit)
    };
    let all_gone = || (targets.iter()).all(|&(pid, st)| !identity::is_alive(pid, st));
    let mut outcome = ReapOutcome {
        terminated: signal(Signal::SIGTERM, "signal")?,
        ..Default::default()
    };
    if !poll_until(grace, all_gone) {
        outcome.killed = signal(Signal::SIGKILL, "kill")?;
        poll_until(AFTER_KILL, all_gone);
    }
    let mut owners = Vec::new();
    let free = poll_until(AFTER_KILL, || {
        inspect_port(port, bind).is_ok_and(|r| {
            owners = r.owners;
            r.listeners.is_empty()
        })
    });
    if !free {
        return Err(Error::PortStillBusy { port, owners });
    }
    Ok(outcome)
}
