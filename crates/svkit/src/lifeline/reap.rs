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

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;

use super::error::{Error, Result};
use super::identity::{self, Identity};
use super::owners;
use super::procnet::{self, TcpEntry};
use super::statefile::StateRecord;
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
    ruid: u32,
    euid: u32,
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
            ruid: nix::unistd::getuid().as_raw(),
            euid: nix::unistd::geteuid().as_raw(),
        })
    }

    /// Why `id` is not a stale instance, or `None` if it is one.
    pub fn mismatch(&self, id: &Identity) -> Option<String> {
        if id.ruid != self.ruid || id.euid != self.euid {
            return Some(format!(
                "runs as uid {} (we are uid {})",
                id.euid, self.euid
            ));
        }
        if id.exe_file != Some(self.exe_file) {
            let theirs = id
                .exe
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "unknown".into());
            return Some(format!("executable {theirs} is not {}", self.exe.display()));
        }
        let theirs = id.cmdline.get(1..).unwrap_or(&[]);
        let same = match self.mode {
            MatchArgs::All => theirs == self.args.as_slice(),
            MatchArgs::Prefix(n) => theirs
                .get(..n)
                .is_some_and(|t| self.args.get(..n) == Some(t)),
        };
        if !same {
            return Some("arguments differ".into());
        }
        None
    }
}

/// Why an owner may be reaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    StateFile,
    Match,
    SessionOf(i32),
}

/// A process holding the port, with the verdict on it.
#[derive(Debug, Clone)]
pub struct PortHolder {
    pub id: Identity,
    /// `Ok(reason)` stale, `Err(why not)` a stranger.
    pub verdict: std::result::Result<Stale, String>,
}

/// Who holds a port.
#[derive(Debug, Clone, Default)]
pub struct PortReport {
    pub port: u16,
    pub bind: Option<IpAddr>,
    pub listeners: Vec<TcpEntry>,
    pub owners: Vec<Identity>,
    /// Listening sockets no visible process holds.
    pub unowned: Vec<TcpEntry>,
    /// Pids whose descriptors we could not read.
    pub unreadable: BTreeSet<i32>,
}

impl PortReport {
    pub fn is_free(&self) -> bool {
        self.listeners.is_empty()
    }
}

/// Finds the listeners blocking `bind:port` (any address when `bind` is
/// `None`) and the processes holding them.
pub fn inspect_port(port: u16, bind: Option<IpAddr>) -> Result<PortReport> {
    let tables =
        procnet::read_tables().map_err(|e| Error::io("unable to read /proc/net/tcp", e))?;
    let listeners = procnet::listeners_blocking(&tables, bind, port);
    let mut report = PortReport {
        port,
        bind,
        listeners,
        ..Default::default()
    };
    if report.listeners.is_empty() {
        return Ok(report);
    }
    let wanted: BTreeSet<u64> = report.listeners.iter().map(|l| l.inode).collect();
    let scan = owners::scan(&wanted).map_err(|e| Error::io("unable to scan /proc", e))?;
    for pid in scan.pids() {
        match identity::read_identity(pid) {
            Ok(Some(id)) => report.owners.push(id),
            Ok(None) => {}
            Err(e) => return Err(Error::io(format!("unable to read /proc/{pid}"), e)),
        }
    }
    report.unowned = report
        .listeners
        .iter()
        .filter(|l| !scan.owners.contains_key(&l.inode))
        .cloned()
        .collect();
    report.unreadable = scan.unreadable;
    Ok(report)
}

/// What the port's holders were judged to be.
#[derive(Debug, Clone)]
pub struct StrangerReport {
    pub port: u16,
    pub bind: Option<IpAddr>,
    pub owners: Vec<PortHolder>,
    pub unowned: Vec<TcpEntry>,
    pub unreadable: usize,
}

impl fmt::Display for StrangerReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = match self.bind {
            Some(ip) => format!("port {} ({ip})", self.port),
            None => format!("port {}", self.port),
        };
        write!(
            f,
            "{at} is in use and not provably by a stale instance; nothing was killed"
        )?;
        for o in &self.owners {
            if let Err(why) = &o.verdict {
                write!(
                    f,
                    "; held by pid {} uid {} ({}): {why}",
                    o.id.pid,
                    o.id.euid,
                    o.id.command_line()
                )?;
            }
        }
        for s in &self.unowned {
            write!(
                f,
                "; a listening socket on {} (inode {}, created by uid {}) is held by no process we can see: \
                 it belongs to another user's process we may not inspect{} or to another PID namespace",
                s.local,
                s.inode,
                s.uid,
                if self.unreadable > 0 { format!(" ({} processes unreadable)", self.unreadable) } else { String::new() }
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
    let mut owners: Vec<PortHolder> = report
        .owners
        .iter()
        .map(|id| {
            let by_state = state.is_some_and(|s| {
                s.port == report.port && s.pid == id.pid && s.start_time == id.start_time
            });
            let verdict = if by_state {
                Ok(Stale::StateFile)
            } else {
                match matcher.map(|m| m.mismatch(id)) {
                    Some(None) => Ok(Stale::Match),
                    Some(Some(why)) => {
                        Err(format!("not in the state file, and for --match: {why}"))
                    }
                    None if state.is_some() => Err("not the process the state file records".into()),
                    None => Err("no --state or --match identifies it as ours".into()),
                }
            };
            PortHolder {
                id: id.clone(),
                verdict,
            }
        })
        .collect();
    let leaders: Vec<i32> = owners
        .iter()
        .filter(|o| o.verdict.is_ok() && o.id.session == o.id.pid)
        .map(|o| o.id.pid)
        .collect();
    for o in owners.iter_mut() {
        if o.verdict.is_err() && leaders.contains(&o.id.session) {
            o.verdict = Ok(Stale::SessionOf(o.id.session));
        }
    }
    if owners.iter().any(|o| o.verdict.is_err()) || !report.unowned.is_empty() {
        return Err(Error::PortHeld(StrangerReport {
            port: report.port,
            bind: report.bind,
            owners,
            unowned: report.unowned.clone(),
            unreadable: report.unreadable.len(),
        }));
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
    let mut outcome = ReapOutcome::default();
    for &(pid, st) in &targets {
        if identity::signal_if_same(pid, st, Signal::SIGTERM)
            .map_err(|e| Error::io(format!("unable to signal pid {pid}"), e))?
        {
            outcome.terminated.push(pid);
        }
    }
    let all_gone = || {
        targets
            .iter()
            .all(|&(pid, st)| !identity::is_alive(pid, st))
    };
    if !poll_until(grace, all_gone) {
        for &(pid, st) in &targets {
            if identity::signal_if_same(pid, st, Signal::SIGKILL)
                .map_err(|e| Error::io(format!("unable to kill pid {pid}"), e))?
            {
                outcome.killed.push(pid);
            }
        }
        poll_until(AFTER_KILL, all_gone);
    }
    let mut last = None;
    let free = poll_until(AFTER_KILL, || match inspect_port(port, bind) {
        Ok(r) if r.is_free() => true,
        Ok(r) => {
            last = Some(r);
            false
        }
        Err(_) => false,
    });
    if !free {
        let owners = last
            .map(|r| {
                r.owners
                    .into_iter()
                    .map(|id| PortHolder {
                        id,
                        verdict: Err("still listening".into()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Err(Error::PortStillBusy { port, owners });
    }
    Ok(outcome)
}
