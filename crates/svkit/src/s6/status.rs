//! Native decoding of s6-supervise's `supervise/status` and `death_tally`.
//!
//! Layouts (from s6's `s6_svstatus_pack`): `stamp[12] readystamp[12] pid[8]
//! wstat[2] flags[1]` = 35 bytes in s6 2.11–2.12 and 2.14+; s6 2.13.0–2.13.2
//! (s6-overlay 3.2.0.0–3.2.1.0) insert `pgid[8]` after pid = 43 bytes. Both are
//! accepted. `death_tally` is a sequence of 14-byte records (`stamp[12]`,
//! exit code, signal), one per death since s6-supervise started (it
//! truncates the file then), capped at `max-death-tally`.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::tai64::{Tai64N, TAI64N_LEN};
use crate::msg::strerror;

#[cfg(test)]
mod tests;

pub use super::signal::name as sig_name;

/// `supervise/status` length written by s6 2.11–2.12 and 2.14+.
pub const STATUS_LEN: usize = 35;
/// `supervise/status` length written by s6 2.13.x (with a pgid).
pub const STATUS_LEN_2_13: usize = 43;
/// One `death_tally` record.
pub const DEATH_RECORD_LEN: u64 = 14;

const FLAG_PAUSED: u8 = 1;
const FLAG_FINISHING: u8 = 2;
const FLAG_WANTUP: u8 = 4;
const FLAG_READY: u8 = 8;

/// Exactly what the status file says, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawStatus {
    /// When the service last went up or down.
    pub stamp: Tai64N,
    /// When the service last became ready (or down-and-ready).
    pub ready_stamp: Tai64N,
    /// The run process, or the finish script while `finishing`; 0 when down.
    pub pid: u32,
    /// Only in the 43-byte layout of s6 2.13.x.
    pub pgid: Option<u32>,
    /// Raw `waitpid` status of the last run process death.
    pub wstat: u16,
    pub paused: bool,
    pub finishing: bool,
    pub want_up: bool,
    pub ready: bool,
}

/// One record of `supervise/death_tally`, as s6 writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Death {
    /// The exit code, or 128 + the signal for a process killed by one.
    pub code: u8,
    /// The signal that killed it, 0 if it exited.
    pub signal: u8,
}

impl Death {
    /// The process exited with code 0 (a signal death has code 128+N).
    pub fn exited_zero(self) -> bool {
        self.code == 0 && self.signal == 0
    }
}

/// The last death of the run process, as far as the status file tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastExit {
    /// Up, or never started since the supervisor started.
    None,
    Exited(u8),
    Signaled(u8),
    /// Neither (a stop status); s6-supervise never records one.
    Other(u16),
}

impl LastExit {
    /// How a process ended, from a raw wait status (glibc macro semantics).
    pub fn from_wstat(w: u16) -> LastExit {
        match w & 0x7f {
            0 => LastExit::Exited((w >> 8) as u8),
            0x7f => LastExit::Other(w),
            sig => LastExit::Signaled(sig as u8),
        }
    }

    /// `{"code": N}`, `{"signal": "SIGTERM", "signum": 15}`, `{"wstat": N}`,
    /// or null: how every JSON document svctl prints says it.
    pub fn json(self) -> serde_json::Value {
        use serde_json::json;
        match self {
            LastExit::None => serde_json::Value::Null,
            LastExit::Exited(c) => json!({ "code": c }),
            LastExit::Signaled(s) => {
                json!({ "signal": format!("SIG{}", sig_name(s)), "signum": s })
            }
            LastExit::Other(w) => json!({ "wstat": w }),
        }
    }
}

/// A supervised slot's state, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub raw: RawStatus,
    /// A run process exists and is not being finished (s6-svstat's "up").
    pub up: bool,
    pub want_up: bool,
    /// No `down` file in the service directory.
    pub normally_up: bool,
    /// Up and notified readiness.
    pub ready: bool,
    /// Up and stopped by `s6-svc -p`.
    pub paused: bool,
    /// `./finish` is running.
    pub finishing: bool,
    /// Nothing has run since the supervisor started.
    pub never_started: bool,
    /// The run process, when up.
    pub pid: Option<u32>,
    pub last_exit: LastExit,
    pub since: SystemTime,
    pub ready_since: SystemTime,
    /// Records in `death_tally`.
    pub deaths: u64,
}

/// Why a slot's state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// No `supervise/status` (no supervisor ever ran there, or not yet).
    #[error("unable to read status for {}: supervisor not running", .dir.display())]
    NotSupervised { dir: PathBuf },
    #[error("unable to read {}: {}", .path.display(), strerror(.source))]
    Io { path: PathBuf, source: io::Error },
    /// Not 35 nor 43 bytes (length capped at 64 when longer).
    #[error("invalid {}: length {len}, expected 35 or 43", name(.path))]
    BadLength { path: Option<PathBuf>, len: usize },
    /// A stamp with nanoseconds >= 10^9 or outside `SystemTime`.
    #[error("invalid {}: bad TAI64N stamp", name(.path))]
    BadStamp { path: Option<PathBuf> },
    /// A pid or pgid that no pid_t can hold.
    #[error("invalid {}: bad pid {pid}", name(.path))]
    BadPid { path: Option<PathBuf>, pid: u64 },
    /// `death_tally` length not a multiple of 14.
    #[error("invalid {}: length {len}, not a multiple of 14", .path.display())]
    BadDeathTally { path: PathBuf, len: u64 },
}

fn name(path: &Option<PathBuf>) -> String {
    path.as_ref().map_or_else(
        || "supervise/status".to_owned(),
        |p| p.display().to_string(),
    )
}

impl StatusError {
    /// Another user's `supervise/` (s6-supervise makes it 0700).
    pub fn is_denied(&self) -> bool {
        matches!(self, StatusError::Io { source, .. } if source.kind() == io::ErrorKind::PermissionDenied)
    }

    /// A decoding error, now that the file it was in is known.
    fn at(mut self, p: &Path) -> StatusError {
        use StatusError::{BadLength, BadPid, BadStamp};
        if let BadLength { path, .. } | BadStamp { path } | BadPid { path, .. } = &mut self {
            *path = Some(p.to_path_buf());
        }
        self
    }
}

fn stamp(b: &[u8]) -> Result<Tai64N, StatusError> {
    let t = Tai64N::from_bytes(b).map_err(|_| StatusError::BadStamp { path: None })?;
    // Rejected here so that `Status::since` needs no Option.
    t.to_system_time()
        .ok_or(StatusError::BadStamp { path: None })?;
    Ok(t)
}

fn pid(b: &[u8]) -> Result<u32, StatusError> {
    let p = u64::from_be_bytes(b.try_into().unwrap_or_default());
    // s6 packs a positive pid_t; anything past i32::MAX is corruption.
    u32::try_from(p)
        .ok()
        .filter(|&p| i32::try_from(p).is_ok())
        .ok_or(StatusError::BadPid { path: None, pid: p })
}

/// Decodes the bytes of a `supervise/status` file.
pub fn decode(bytes: &[u8]) -> Result<RawStatus, StatusError> {
    let has_pgid = match bytes.len() {
        STATUS_LEN => false,
        STATUS_LEN_2_13 => true,
        len => return Err(StatusError::BadLength { path: None, len }),
    };
    let stamp_ = stamp(&bytes[..TAI64N_LEN])?;
    let ready_stamp = stamp(&bytes[TAI64N_LEN..2 * TAI64N_LEN])?;
    let pid_ = pid(&bytes[24..32])?;
    let (pgid, rest) = if has_pgid {
        (Some(pid(&bytes[32..40])?), &bytes[40..])
    } else {
        (None, &bytes[32..])
    };
    let flags = rest[2];
    Ok(RawStatus {
        stamp: stamp_,
        ready_stamp,
        pid: pid_,
        pgid,
        wstat: u16::from_be_bytes([rest[0], rest[1]]),
        paused: flags & FLAG_PAUSED != 0,
        finishing: flags & FLAG_FINISHING != 0,
        want_up: flags & FLAG_WANTUP != 0,
        ready: flags & FLAG_READY != 0,
    })
}

impl RawStatus {
    /// s6-svstat's `isup`.
    pub fn is_up(&self) -> bool {
        self.pid != 0 && !self.finishing
    }

    /// s6 2.13.2+ marks "not started yet" with the paused flag on a down
    /// service. Earlier versions leave no marker, but their initial state is
    /// the only one with both stamps equal, exit status 0 and down-ready:
    /// a real death stamps `stamp` and `ready_stamp` at distinct clock reads.
    pub fn never_started(&self) -> bool {
        self.pid == 0
            && !self.finishing
            && (self.paused || (self.wstat == 0 && self.ready && self.stamp == self.ready_stamp))
    }
}

impl Status {
    pub fn from_parts(raw: RawStatus, normally_up: bool, deaths: u64) -> Status {
        let up = raw.is_up();
        let never_started = raw.never_started();
        let last_exit = if up || never_started {
            LastExit::None
        } else {
            LastExit::from_wstat(raw.wstat)
        };
        // decode() only accepts stamps that convert.
        let at = |t: Tai64N| t.to_system_time().unwrap_or(SystemTime::UNIX_EPOCH);
        Status {
            up,
            want_up: raw.want_up,
            normally_up,
            ready: up && raw.ready,
            paused: up && raw.paused,
            finishing: raw.finishing,
            never_started,
            pid: up.then_some(raw.pid),
            last_exit,
            since: at(raw.stamp),
            ready_since: at(raw.ready_stamp),
            deaths,
            raw,
        }
    }

    /// Whole seconds in the current up/down state, as s6-svstat's
    /// `updownfor` (a stamp in the future counts as now).
    pub fn secs_since(&self, now: SystemTime) -> u64 {
        secs_between(now, &self.raw.stamp)
    }

    /// Whole seconds since `ready_since`, 0 when that is in the future.
    pub fn secs_ready(&self, now: SystemTime) -> u64 {
        secs_between(now, &self.raw.ready_stamp)
    }
}

fn secs_between(now: SystemTime, then: &Tai64N) -> u64 {
    // No label for `now` only when it is over 2^62 s before 1970 (a
    // `SystemTime` cannot reach past the last label): before `then` too.
    match Tai64N::from_wallclock(now) {
        Some(n) if n >= *then => n.wrapping_sub(then).0,
        _ => 0,
    }
}

// Reading a slot's state from disk: the one place status does I/O.

fn io_err(path: &Path, source: io::Error) -> StatusError {
    StatusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads a service directory's state: open+read of `supervise/status`, one
/// stat of `supervise/death_tally` (only its length matters), one access of
/// `down`. Does not check that a supervisor holds the lock: see
/// `supervisor_running`.
pub fn read_slot(dir: &Path) -> Result<Status, StatusError> {
    let mut path = dir.join("supervise/status");
    let mut buf = [0u8; 64];
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StatusError::NotSupervised {
                dir: dir.to_path_buf(),
            })
        }
        Err(e) => return Err(io_err(&path, e)),
    };
    // One read of up to the buffer, so that a longer (unknown) layout is
    // reported, not cut. A short read of a regular file is its end: no
    // second read for the EOF (this is on the health-check path).
    let len = loop {
        match f.read(&mut buf) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(&path, e)),
        }
    };
    let raw = decode(&buf[..len]).map_err(|e| e.at(&path))?;

    path.set_file_name("death_tally");
    // s6_dtally_read treats a missing tally as empty.
    let deaths = match std::fs::metadata(&path) {
        Ok(m) if m.len() % DEATH_RECORD_LEN == 0 => m.len() / DEATH_RECORD_LEN,
        Ok(m) => return Err(StatusError::BadDeathTally { path, len: m.len() }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
        Err(e) => return Err(io_err(&path, e)),
    };

    let down = dir.join("down");
    let normally_up = !down.try_exists().map_err(|e| io_err(&down, e))?;
    Ok(Status::from_parts(raw, normally_up, deaths))
}

/// Every record of the slot's `supervise/death_tally`, oldest first
/// (none when there is no tally, as s6 reads it).
pub fn death_tally(dir: &Path) -> Result<Vec<Death>, StatusError> {
    Ok(death_tally_stamped(dir)?
        .into_iter()
        .map(|(_, d)| d)
        .collect())
}

/// [`death_tally`], each record with its stamp: when s6-supervise saw the
/// death.
pub fn death_tally_stamped(dir: &Path) -> Result<Vec<(Tai64N, Death)>, StatusError> {
    let path = dir.join("supervise/death_tally");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(&path, e)),
    };
    let len = bytes.len() as u64;
    if !len.is_multiple_of(DEATH_RECORD_LEN) {
        return Err(StatusError::BadDeathTally { path, len });
    }
    (bytes.chunks_exact(DEATH_RECORD_LEN as usize))
        .map(|r| {
            let stamp =
                Tai64N::from_bytes(&r[..TAI64N_LEN]).map_err(|_| StatusError::BadStamp {
                    path: Some(path.clone()),
                })?;
            let death = Death {
                code: r[TAI64N_LEN],
                signal: r[TAI64N_LEN + 1],
            };
            Ok((stamp, death))
        })
        .collect()
}

/// Whether an s6-supervise holds `supervise/lock`, as s6's `s6_svc_ok`
/// checks it (s6-svstat refuses stale status files this way). Separate from
/// `read_slot` to keep that one to three syscalls per file.
pub fn supervisor_running(dir: &Path) -> Result<bool, StatusError> {
    let path = dir.join("supervise/lock");
    match lock_holder(&path) {
        Ok(holder) => Ok(holder.is_some()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(&path, e)),
    }
}

/// The pid of the process holding a lock on `path` the way skalibs takes
/// one (an fcntl lock over the whole file: s6-supervise's
/// `supervise/lock`, s6-log's `lock` in its log dir), if one does (as the
/// kernel reports it: 0 when it holds it from another pid namespace).
/// Takes no lock itself.
pub fn lock_holder(path: &Path) -> io::Result<Option<u32>> {
    use std::os::fd::AsRawFd;
    let f = File::open(path)?;
    let mut fl = nix::libc::flock {
        l_type: nix::libc::F_RDLCK as nix::libc::c_short,
        l_whence: nix::libc::SEEK_SET as nix::libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    };
    match nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_GETLK(&mut fl)) {
        Ok(_) if fl.l_type == nix::libc::F_UNLCK as nix::libc::c_short => Ok(None),
        Ok(_) => Ok(Some(u32::try_from(fl.l_pid).unwrap_or(0))),
        Err(e) => Err(io::Error::from_raw_os_error(e as i32)),
    }
}
