//! Saying a line without ever blocking, for what svkit writes into a
//! slot's log before the program starts (`svkit slot-env`, the `run`
//! script's own notices: `svkit say`), and for what it says beside the
//! running program (the liveness watcher: [`say_beside`]).
//!
//! A slot's log is its stdout: a pipe to its logger, about 64 KiB (the
//! program's stderr joins it; the `run` script's own stderr, before it
//! execs the program, is the container's, as `finish`'s is).
//! When the logger cannot write (a full disk, a stopped s6-log) the pipe
//! fills and every write to it blocks, not only the program's: a watcher
//! that logs before it restarts a program hung on that pipe would hang with
//! it. So a line is written through an open file description of its own,
//! opened with `O_NONBLOCK` from `/proc/self/fd/N` (setting `O_NONBLOCK` on
//! the inherited fd would change it for the program too, which shares that
//! description), in one `write(2)` cut to `PIPE_BUF` bytes, which a pipe
//! takes whole or not at all: never half a line between the program's.
//! When the pipe is full or unusable, the line goes to the container's own
//! output instead, PID 1's stderr under s6-overlay, opened the same way
//! (when this process may open it: another user's is refused by the
//! kernel); failing that, it is dropped.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::os::fd::{AsFd, AsRawFd as _, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::PIPE_BUF;
use nix::libc;

/// The container's own output under s6-overlay: s6-svscan's stderr, which
/// every supervisor inherits (`docker logs`).
pub const CONTAINER_STDERR: &str = "/proc/1/fd/2";

/// Where a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// To the log: the fd given, this process's stdout for [`say`].
    Log,
    /// To the container's own output (the log's pipe was full or unusable).
    Container,
    /// Nowhere: neither took it without blocking.
    Dropped,
}

/// Writes `text` as one line to this process's stdout (a slot's log pipe,
/// when run from a slot), else to the container's own output, without
/// ever blocking.
pub fn say(text: &str) -> Said {
    say_or(io::stdout().as_fd(), container_stderr, text)
}

/// `PROG: fatal: MSG`, said as [`say`] does.
pub fn say_fatal(msg: impl std::fmt::Display) -> Said {
    say(&format!("{}: fatal: {msg}", super::prog()))
}

/// `PROG: LEVEL: MSG` on this process's stderr, as [`say`] writes it,
/// never into the slot's pipe: for what svkit says while the program
/// writes there. A program's last line is often unfinished (`loading...`,
/// then it hangs), and s6-log keeps such a half line in its memory, where
/// no one else can see it: a line written into the pipe would end it,
/// glued to it. The liveness watcher's stderr is its supervisor's (its
/// `run` starts it before the program's stderr joins the pipe): the
/// container's output, a stream of its own in `docker logs`.
pub fn say_beside(level: &str, msg: impl std::fmt::Display) -> Said {
    let text = format!("{}: {level}: {msg}", super::prog());
    say_or(io::stderr().as_fd(), container_stderr, &text)
}

/// The stderr of the container's init (s6-overlay's PID 1, or svkit-init):
/// elsewhere PID 1's stderr is no container's output (a host's init, a
/// test runner).
fn container_stderr() -> Option<PathBuf> {
    // PID 1's is [`CONTAINER_STDERR`].
    let pid = crate::container::supervision().reaper()?;
    Some(PathBuf::from(format!("/proc/{pid}/fd/2")))
}

/// The fallback is only looked for when the log did not take the line.
fn say_or(log: BorrowedFd<'_>, container: impl FnOnce() -> Option<PathBuf>, text: &str) -> Said {
    let line = one_line(text);
    if write_to_fd(log, &line).is_ok() {
        return Said::Log;
    }
    let fallback = container().map(|p| reopen(&p).and_then(|f| write_once(&f, &line)));
    match fallback {
        Some(Ok(())) => Said::Container,
        _ => Said::Dropped,
    }
}

/// `text` on one line, escaped (a newline inside would split it), cut on
/// a character boundary to fit in one atomic pipe write, newline included.
fn one_line(text: &str) -> Vec<u8> {
    let flat = super::escape(text);
    let mut end = flat.len().min(PIPE_BUF - 1);
    while !flat.is_char_boundary(end) {
        end -= 1;
    }
    [&flat.as_bytes()[..end], b"\n"].concat()
}

fn write_to_fd(fd: BorrowedFd<'_>, line: &[u8]) -> io::Result<()> {
    let meta = rustix::fs::fstat(fd).map_err(io::Error::from)?;
    if rustix::fs::FileType::from_raw_mode(meta.st_mode) == rustix::fs::FileType::RegularFile {
        // A file never waits for a reader; a description of our own would
        // write at its own offset, over what the fd's owner writes next.
        let f = File::from(fd.try_clone_to_owned()?);
        return write_once(&f, line);
    }
    let own = reopen(Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))?;
    write_once(&own, line)
}

/// A write-only description of its own of what `path` names, that never
/// blocks (`O_APPEND`: a file is added to, never overwritten).
fn reopen(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// One `write(2)`: a full pipe is `EAGAIN`, never a wait. A short write
/// (not a pipe's: it takes `PIPE_BUF` whole) still delivered a part, so it
/// counts as said rather than being said twice.
fn write_once(mut f: &File, line: &[u8]) -> io::Result<()> {
    match f.write(line)? {
        0 => Err(io::ErrorKind::WriteZero.into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
