//! Reading a slot's state from disk: the one place status does I/O.

use super::*;

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
    let mut len = 0;
    {
        let mut f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StatusError::NotSupervised {
                    dir: dir.to_path_buf(),
                })
            }
            Err(e) => return Err(io_err(&path, e)),
        };
        // Reads up to the buffer so that a longer (unknown) layout is
        // reported, not cut. A short read of a regular file is its end: no
        // second read for the EOF (this is on the health-check path).
        while len < buf.len() {
            match f.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => {
                    len += n;
                    if len < buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&path, e)),
            }
        }
    }
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
    let normally_up = match nix::unistd::access(&down, nix::unistd::AccessFlags::F_OK) {
        Ok(()) => false,
        Err(nix::errno::Errno::ENOENT) => true,
        Err(e) => return Err(io_err(&down, io::Error::from_raw_os_error(e as i32))),
    };
    Ok(Status::from_parts(raw, normally_up, deaths))
}

/// Every record of the slot's `supervise/death_tally`, oldest first
/// (none when there is no tally, as s6 reads it).
pub fn death_tally(dir: &Path) -> Result<Vec<Death>, StatusError> {
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
    Ok(bytes
        .chunks_exact(DEATH_RECORD_LEN as usize)
        .map(|r| Death {
            code: r[TAI64N_LEN],
            signal: r[TAI64N_LEN + 1],
        })
        .collect())
}

/// Whether an s6-supervise holds `supervise/lock`, as s6's `s6_svc_ok`
/// checks it (s6-svstat refuses stale status files this way). Separate from
/// `read_slot` to keep that one to three syscalls per file.
pub fn supervisor_running(dir: &Path) -> Result<bool, StatusError> {
    let path = dir.join("supervise/lock");
    match locked(&path) {
        Ok(held) => Ok(held),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(&path, e)),
    }
}

/// Whether some process holds a lock on `path` the way skalibs takes one
/// (an fcntl lock over the whole file): s6-supervise's `supervise/lock`,
/// s6-log's `lock` in its log dir. Takes no lock itself.
pub fn locked(path: &Path) -> io::Result<bool> {
    lock_holder(path).map(|p| p.is_some())
}

/// The pid of the process holding that lock, if one does (as the kernel
/// reports it: 0 when it holds it from another pid namespace).
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
