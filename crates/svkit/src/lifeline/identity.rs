//! Who a process is: pid, start time, uids, executable and argv, read from
//! `/proc/PID`.
//!
//! A pid alone is not an identity (pids are reused); pid plus start time
//! (field 22 of `/proc/PID/stat`, clock ticks since boot) is, for as long as
//! the machine stays up. Every kill decision re-reads both right before
//! signalling.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::str::FromStr;

use nix::libc::ESRCH;
use nix::sys::signal::Signal;

use crate::{msg, sys};

/// Fields of `/proc/PID/stat` that svkit uses: who a process is, and
/// what it costs (a slot's usage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub start_time: u64,
    /// CPU time in clock ticks, user plus system, its own and that of the
    /// children it has waited for (so a short-lived helper's time is not
    /// lost once it is reaped).
    pub cpu_ticks: u64,
    pub threads: u64,
    /// Resident set, in pages.
    pub rss_pages: u64,
}

/// Parses `/proc/PID/stat`. `comm` may hold spaces and parentheses, so the
/// fixed fields are found after the *last* `)`.
pub fn parse_stat(text: &str) -> Result<Stat, String> {
    let (head, rest) = text.rsplit_once(')').ok_or("no ')' in stat")?;
    let (pid, comm) = head.split_once('(').ok_or("no '(' in stat")?;
    // Field 3 (state) is the first after the comm; field 22 is start time.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fn field<T: FromStr>(fields: &[&str], n: usize) -> Result<T, String> {
        let text = fields
            .get(n - 3)
            .ok_or_else(|| format!("stat has no field {n}"))?;
        text.parse().map_err(|_| format!("bad stat field {n}"))
    }
    Ok(Stat {
        pid: pid.trim().parse().map_err(|_| "bad pid in stat")?,
        comm: comm.to_string(),
        state: field(&fields, 3)?,
        ppid: field(&fields, 4)?,
        pgrp: field(&fields, 5)?,
        session: field(&fields, 6)?,
        start_time: field(&fields, 22)?,
        cpu_ticks: [14, 15, 16, 17]
            .iter()
            // Children's times are signed in the kernel's format.
            .map(|&n| field::<i64>(&fields, n).map(|t| t.max(0).unsigned_abs()))
            .sum::<Result<u64, String>>()?,
        threads: field(&fields, 20)?,
        rss_pages: field::<i64>(&fields, 24)?.max(0).unsigned_abs(),
    })
}

/// Every process `/proc` shows now (those that vanish while it is read
/// are left out).
pub fn processes() -> Vec<Stat> {
    (fs::read_dir("/proc").into_iter().flatten().flatten())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| read_stat(pid).ok().flatten())
        .collect()
}

/// `set` and every process in `procs` below one of its processes.
pub fn with_descendants(procs: &[Stat], mut set: BTreeSet<i32>) -> BTreeSet<i32> {
    loop {
        let children: Vec<i32> = (procs.iter())
            .filter(|p| set.contains(&p.ppid) && !set.contains(&p.pid))
            .map(|p| p.pid)
            .collect();
        if children.is_empty() {
            return set;
        }
        set.extend(children);
    }
}

/// Reads `/proc/PID/stat`; `Ok(None)` when the process is gone.
pub fn read_stat(pid: i32) -> io::Result<Option<Stat>> {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => parse_stat(&text).map(Some).map_err(|why| {
            let why = format!("/proc/{pid}/stat: {why}");
            io::Error::new(io::ErrorKind::InvalidData, why)
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(ESRCH) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Start time of a live process, `None` if gone or a zombie (a zombie holds
/// no sockets and cannot be signalled into doing anything).
pub fn live_start_time(pid: i32) -> Option<u64> {
    match read_stat(pid) {
        Ok(Some(st)) if st.state != 'Z' && st.state != 'X' => Some(st.start_time),
        _ => None,
    }
}

/// Is the process with this pid and start time still running?
pub fn is_alive(pid: i32, start_time: u64) -> bool {
    live_start_time(pid) == Some(start_time)
}

/// Everything lifeline knows about a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub pid: i32,
    pub start_time: u64,
    pub comm: String,
    pub session: i32,
    /// Real and effective uid (from `/proc/PID/status`).
    pub ruid: u32,
    pub euid: u32,
    /// Target of `/proc/PID/exe`; `None` when unreadable (another user's
    /// process without privilege, or a kernel thread).
    pub exe: Option<PathBuf>,
    /// Device and inode of the executable, compared instead of paths so
    /// symlinked paths (`/usr/bin/python3` vs `python3.11`) still match.
    pub exe_file: Option<(u64, u64)>,
    pub cmdline: Vec<OsString>,
}

impl Identity {
    /// The command line for messages: arguments joined by spaces, escaped
    /// as every message is ([`msg::bytes`]: a hostile argv must not forge
    /// lines), cut at 200 bytes; `[comm]` for an empty one, as `ps` shows.
    pub fn command_line(&self) -> String {
        if self.cmdline.is_empty() {
            return format!("[{}]", msg::escape(&self.comm));
        }
        let args: Vec<&[u8]> = self.cmdline.iter().map(|a| a.as_bytes()).collect();
        let mut s = msg::bytes(&args.join(&b' '));
        if s.len() > 200 {
            s.truncate(s.floor_char_boundary(200));
            s.push('…');
        }
        s
    }
}

fn parse_status_uids(status: &str) -> Option<(u32, u32)> {
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    let mut it = line.split_whitespace().map(|f| f.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// Reads the identity of `pid`; `Ok(None)` when it is gone or a zombie.
pub fn read_identity(pid: i32) -> io::Result<Option<Identity>> {
    let Some(stat) = read_stat(pid)?.filter(|st| st.state != 'Z' && st.state != 'X') else {
        return Ok(None);
    };
    let status = match fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        status => status?,
    };
    let (ruid, euid) = parse_status_uids(&status).ok_or_else(|| {
        let why = format!("/proc/{pid}/status: no Uid line");
        io::Error::new(io::ErrorKind::InvalidData, why)
    })?;
    let exe_link = format!("/proc/{pid}/exe");
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let identity = Identity {
        pid,
        start_time: stat.start_time,
        comm: stat.comm,
        session: stat.session,
        ruid,
        euid,
        exe: fs::read_link(&exe_link).ok(),
        exe_file: fs::metadata(&exe_link).ok().map(|m| (m.dev(), m.ino())),
        cmdline: (cmdline.split(|b| *b == 0))
            .filter(|a| !a.is_empty())
            .map(|a| OsString::from_vec(a.to_vec()))
            .collect(),
    };
    // Reading the files one by one races with pid reuse: re-check that the
    // process is the one whose stat we read first.
    Ok(is_alive(pid, stat.start_time).then_some(identity))
}

/// Sends `sig` to `pid` (to its process group with `group`) only if it is
/// still the process that started at `start_time`. Returns whether a
/// signal was delivered: `Ok(false)` when it was gone already.
///
/// Through a pidfd, opened before the check, the signal cannot reach
/// another process that took the pid since. To a group, or where no pidfd
/// can be had (kernel < 5.3, a seccomp profile that refuses the call, no
/// fd left), the check-then-kill window remains, but is tiny: a pidfd is
/// a refinement, never a reason to leave a process unsignalled.
pub fn signal_if_same(pid: i32, start_time: u64, sig: Signal, group: bool) -> io::Result<bool> {
    let pidfd = match (!group).then(|| sys::pidfd_open(pid)) {
        Some(Ok(fd)) => Some(fd),
        Some(Err(e)) if e.raw_os_error() == Some(ESRCH) => return Ok(false),
        _ => None,
    };
    if !is_alive(pid, start_time) {
        return Ok(false);
    }
    let sent = match &pidfd {
        Some(fd) => sys::pidfd_send_signal(fd, sig),
        None => {
            let to = nix::unistd::Pid::from_raw(if group { -pid } else { pid });
            nix::sys::signal::kill(to, sig).map_err(io::Error::from)
        }
    };
    match sent {
        // It ended (and was reaped) between the look and the signal:
        // right after a down signal, that is the usual way.
        Err(e) if e.raw_os_error() == Some(ESRCH) => Ok(false),
        sent => sent.map(|()| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_hostile_comm() {
        let line = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615";
        let st = parse_stat(line).unwrap();
        assert_eq!(st.pid, 4242);
        assert_eq!(st.comm, "a) b (c)");
        assert_eq!(st.state, 'S');
        assert_eq!(st.ppid, 1);
        assert_eq!(st.session, 4242);
        assert_eq!(st.start_time, 987654);
    }

    #[test]
    fn stat_truncated_is_an_error() {
        assert!(parse_stat("1 (x) S 0 1").is_err());
        assert!(parse_stat("garbage").is_err());
        assert!(parse_stat("x (y) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5").is_err());
    }

    #[test]
    fn reads_self() {
        let me = read_identity(std::process::id() as i32).unwrap().unwrap();
        assert_eq!(me.euid, nix::unistd::geteuid().as_raw());
        assert!(me.exe.is_some());
        assert!(is_alive(me.pid, me.start_time));
        assert!(!is_alive(me.pid, me.start_time + 1));
    }

    #[test]
    fn command_lines_are_escaped_as_every_message() {
        let mut id = read_identity(std::process::id() as i32).unwrap().unwrap();
        id.cmdline = vec!["a\x1bb\nc".into(), OsString::from_vec(b"\xffd".to_vec())];
        assert_eq!(id.command_line(), "a\\eb\\nc \\xffd");
        id.cmdline = vec!["é".repeat(150).into()];
        let cut = id.command_line();
        assert_eq!(cut, format!("{}…", "é".repeat(100)));
        id.cmdline.clear();
        id.comm = "k\x07".into();
        assert_eq!(id.command_line(), "[k\\x07]");
    }

    #[test]
    fn uids_from_status() {
        assert_eq!(
            parse_status_uids("Name:\tx\nUid:\t1000\t1001\t1001\t1001\n"),
            Some((1000, 1001))
        );
        assert_eq!(parse_status_uids("Name:\tx\n"), None);
    }
}
