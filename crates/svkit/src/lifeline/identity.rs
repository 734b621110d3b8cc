//! Who a process is: pid, start time, uids, executable and argv, read from
//! `/proc/PID`.
//!
//! A pid alone is not an identity (pids are reused); pid plus start time
//! (field 22 of `/proc/PID/stat`, clock ticks since boot) is, for as long as
//! the machine stays up. Every kill decision re-reads both right before
//! signalling.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// Fields of `/proc/PID/stat` that lifeline uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub start_time: u64,
}

/// Parses `/proc/PID/stat`. `comm` may hold spaces and parentheses, so the
/// fixed fields are found after the *last* `)`.
pub fn parse_stat(text: &str) -> Result<Stat, String> {
    let open = text.find('(').ok_or("no '(' in stat")?;
    let close = text.rfind(')').ok_or("no ')' in stat")?;
    if close < open {
        return Err("')' before '(' in stat".into());
    }
    let pid = text[..open]
        .trim()
        .parse::<i32>()
        .map_err(|_| "bad pid in stat")?;
    let comm = text[open + 1..close].to_string();
    // Field 3 (state) is the first after the comm; field 22 is start time.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Result<&str, String> {
        rest.get(n - 3)
            .copied()
            .ok_or_else(|| format!("stat has no field {n}"))
    };
    let num = |n: usize| -> Result<i64, String> {
        field(n)?
            .parse::<i64>()
            .map_err(|_| format!("bad stat field {n}"))
    };
    let state = field(3)?.chars().next().ok_or("empty state")?;
    let start_time = field(22)?
        .parse::<u64>()
        .map_err(|_| "bad start time (field 22)")?;
    Ok(Stat {
        pid,
        comm,
        state,
        ppid: num(4)? as i32,
        pgrp: num(5)? as i32,
        session: num(6)? as i32,
        start_time,
    })
}

/// Reads `/proc/PID/stat`; `Ok(None)` when the process is gone.
pub fn read_stat(pid: i32) -> io::Result<Option<Stat>> {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => parse_stat(&text).map(Some).map_err(|why| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/proc/{pid}/stat: {why}"),
            )
        }),
        Err(e)
            if e.kind() == io::ErrorKind::NotFound
                || e.raw_os_error() == Some(nix::libc::ESRCH) =>
        {
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
    pub pgrp: i32,
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
    /// The command line for messages: arguments joined by spaces, lossy
    /// UTF-8, falling back to `[comm]` as `ps` does for empty cmdlines.
    pub fn command_line(&self) -> String {
        if self.cmdline.is_empty() {
            return format!("[{}]", self.comm);
        }
        let joined: Vec<String> = self
            .cmdline
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        // Escape control characters: a hostile argv must not forge lines in
        // our error messages.
        let mut s: String = joined
            .join(" ")
            .chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        if s.len() > 200 {
            let mut cut = 200;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push('…');
        }
        s
    }
}

fn parse_status_uids(status: &str) -> Option<(u32, u32)> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    let mut it = line["Uid:".len()..]
        .split_whitespace()
        .map(|f| f.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// Reads the identity of `pid`; `Ok(None)` when it is gone or a zombie.
pub fn read_identity(pid: i32) -> io::Result<Option<Identity>> {
    let Some(stat) = read_stat(pid)? else {
        return Ok(None);
    };
    if stat.state == 'Z' || stat.state == 'X' {
        return Ok(None);
    }
    let status = match fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (ruid, euid) = parse_status_uids(&status).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/status: no Uid line"),
        )
    })?;
    let exe_link = format!("/proc/{pid}/exe");
    let exe = fs::read_link(&exe_link).ok();
    let exe_file = fs::metadata(&exe_link).ok().map(|m| (m.dev(), m.ino()));
    let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| OsString::from_vec(a.to_vec()))
                .collect()
        })
        .unwrap_or_default();
    // Reading the files one by one races with pid reuse: re-check that the
    // process is the one whose stat we read first.
    if live_start_time(pid) != Some(stat.start_time) {
        return Ok(None);
    }
    Ok(Some(Identity {
        pid,
        start_time: stat.start_time,
        comm: stat.comm,
        session: stat.session,
        pgrp: stat.pgrp,
        ruid,
        euid,
        exe,
        exe_file,
        cmdline,
    }))
}

/// Sends `sig` to `pid` only if it is still the process that started at
/// `start_time`. Returns whether a signal was delivered.
pub fn signal_if_same(
    pid: i32,
    start_time: u64,
    sig: nix::sys::signal::Signal,
) -> io::Result<bool> {
    match crate::sys::pidfd_open(pid) {
        Ok(fd) => {
            if !is_alive(pid, start_time) {
                return Ok(false);
            }
            match crate::sys::pidfd_send_signal(&fd, sig) {
                Ok(()) => Ok(true),
                Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => Ok(false),
        Err(e) if e.raw_os_error() == Some(nix::libc::ENOSYS) => {
            // Old kernel: the check-then-kill window remains, but is tiny.
            if !is_alive(pid, start_time) {
                return Ok(false);
            }
            match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig) {
                Ok(()) => Ok(true),
                Err(nix::errno::Errno::ESRCH) => Ok(false),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e),
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
    fn uids_from_status() {
        assert_eq!(
            parse_status_uids("Name:\tx\nUid:\t1000\t1001\t1001\t1001\n"),
            Some((1000, 1001))
        );
        assert_eq!(parse_status_uids("Name:\tx\n"), None);
    }
}
