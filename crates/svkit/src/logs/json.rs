//! `svkit log-json`: the stdout copy of a slot's log as one JSON object a
//! line (`log.format: "json"`), for log shippers.
//!
//! s6-log cannot reshape a line, so its `1` action writes into a pipe
//! read by this filter: `svkit log-json --slot NAME -- s6-log ...` starts
//! itself as the filter (reading the pipe, writing to the logger's stdout),
//! then execs s6-log with its stdout on the pipe. s6-log stays the
//! supervised process (signals, locking and rotation as without a filter)
//! and reaps the filter; the filter blocks TERM, HUP and INT so that
//! whatever s6-log writes on its way out still gets through, and ends when
//! s6-log closes the pipe.
//!
//! Each input line gives exactly one output line:
//! `{"time":"2026-12-01T10:00:00.123456Z","slot":"web","line":"..."}`;
//! `time` is when the filter read the line (UTC, microseconds), `line` the
//! line without its newline. Bytes that are not UTF-8 become U+FFFD (one
//! for each invalid sequence); control characters are escaped (`\u001b`),
//! as JSON requires. A line longer than [`MAX_LINE_BYTES`] is cut there,
//! as s6-log itself cuts it.

use std::ffi::OsString;
use std::io::{self, BufRead as _, BufWriter, Read as _, Write};
use std::os::fd::AsRawFd as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, ExitCode, Stdio};
use std::time::SystemTime;

use crate::msg::{self, exit, strerror};
pub use crate::render::MAX_LINE_BYTES;

#[derive(serde::Serialize)]
struct Record<'a> {
    time: &'a str,
    slot: &'a str,
    line: &'a str,
}

/// One JSON line for `line` (without its newline), newline included.
pub fn record(slot: &str, line: &[u8], time: SystemTime) -> Vec<u8> {
    let text = String::from_utf8_lossy(line);
    let r = Record {
        time: &crate::clock::rfc3339_utc(time),
        slot,
        line: &text,
    };
    // Serializing strings cannot fail.
    let mut out = serde_json::to_vec(&r).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Copies `input` to `output` as JSON lines until EOF. Output is flushed
/// whenever no more input is waiting, so a line never sits in a buffer
/// while the filter blocks.
pub fn filter<R: io::Read>(
    slot: &str,
    input: &mut io::BufReader<R>,
    output: &mut impl Write,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = MAX_LINE_BYTES as u64;
        if (&mut *input).take(limit).read_until(b'\n', &mut line)? == 0 {
            return output.flush();
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        output.write_all(&record(slot, &line, SystemTime::now()))?;
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}

fn usage(why: &str) -> ExitCode {
    msg::fatal(format_args!(
        "usage: log-json --slot NAME [-- ARGV...]: {why}"
    ));
    ExitCode::from(exit::USAGE)
}

/// `svkit log-json --slot NAME [-- ARGV...]`: without ARGV, the filter
/// (stdin to stdout); with it, the filter started on a pipe and ARGV
/// exec'd writing into it.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut it = args.into_iter();
    let mut slot = None;
    let mut argv = Vec::new();
    while let Some(a) = it.next() {
        if a == "--slot" {
            slot = it.next().map(|s| s.to_string_lossy().into_owned());
        } else if a == "--" {
            argv = it.collect();
            break;
        } else {
            return usage(&format!("unknown argument {}", a.to_string_lossy()));
        }
    }
    let Some(slot) = slot.filter(|s| !s.is_empty()) else {
        return usage("--slot NAME is required");
    };
    if argv.is_empty() {
        return run_filter(&slot);
    }
    match spawn_and_exec(&slot, &argv) {
        Ok(never) => match never {},
        Err(f) => f.report(),
    }
}

fn run_filter(slot: &str) -> ExitCode {
    use nix::sys::signal::{SigSet, Signal};
    // Blocked, they stay pending for good (this process never unblocks
    // them): the filter outlives a TERM sent to s6-log's process group.
    let held: SigSet = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT]
        .into_iter()
        .collect();
    let _ = held.thread_block();
    let mut input = io::BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, Waiting(io::stdout().lock()));
    match filter(slot, &mut input, &mut output) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of the container's stdout went away: nothing to say.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            msg::fatal(format_args!("slot {slot}: log filter: {}", strerror(&e)));
            ExitCode::from(exit::SYSTEM)
        }
    }
}

/// A writer that waits while its file is full, whatever its flags: the
/// container's output may have been made non-blocking by another process
/// sharing it (an s6-log that could not open its own), and a full pipe
/// must make the copy wait, never end it.
struct Waiting<W>(W);

impl<W: Write + std::os::fd::AsFd> Write for Waiting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        loop {
            match self.0.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLOUT)];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

fn spawn_and_exec(slot: &str, argv: &[OsString]) -> Result<std::convert::Infallible, msg::Fatal> {
    let (reader, writer) = io::pipe().map_err(|e| msg::Fatal::io("unable to make a pipe", &e))?;
    Command::new("/proc/self/exe")
        .arg0("svkit")
        .args(["log-json", "--slot", slot])
        .stdin(Stdio::from(reader))
        .spawn()
        .map_err(|e| msg::Fatal::io("unable to start the log filter", &e))?;
    nix::unistd::dup2(writer.as_raw_fd(), 1)
        .map_err(|e| msg::Fatal::io("unable to redirect stdout", &io::Error::from(e)))?;
    drop(writer);
    let (prog, rest) = argv
        .split_first()
        .ok_or_else(|| msg::Fatal::usage("log-json", "no command after --"))?;
    let err = Command::new(prog).args(rest).exec();
    Err(msg::Fatal::io(
        format!("unable to run {}", prog.to_string_lossy()),
        &err,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_non_blocking_output_makes_the_copy_wait_not_fail() {
        use std::io::Read as _;
        let (mut r, w) = io::pipe().expect("pipe");
        let flags = nix::fcntl::fcntl(w.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL).expect("getfl");
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(w.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(flags)).expect("setfl");
        // Four times what a pipe holds: the writes meet a full pipe.
        let want = 4 * 65536;
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            r.read_to_end(&mut got).expect("read");
            got.len()
        });
        let mut out = Waiting(w);
        out.write_all(&vec![b'x'; want])
            .expect("waits, never EAGAIN");
        drop(out);
        assert_eq!(reader.join().expect("reader"), want);
    }

    fn run(input: &[u8]) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut r = io::BufReader::with_capacity(7, input);
        filter("web", &mut r, &mut out).unwrap_or_else(|e| panic!("{e}"));
        out.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    #[test]
    fn one_object_per_line_whatever_the_bytes() {
        let long = "x".repeat(100_000);
        let input = format!("a \"q\"\n\n{long}\nesc\x1b[0m\nlast");
        let mut bytes = input.into_bytes();
        bytes.extend_from_slice(b"\nbad\xff\xfeend\n");
        let v = run(&bytes);
        let lines: Vec<&str> = v
            .iter()
            .map(|o| o["line"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(
            lines,
            [
                "a \"q\"",
                "",
                long.as_str(),
                "esc\u{1b}[0m",
                "last",
                "bad\u{fffd}\u{fffd}end"
            ]
        );
        assert!(v
            .iter()
            .all(|o| o["slot"] == "web" && o["time"].as_str().is_some_and(|t| t.ends_with('Z'))));
    }

    #[test]
    fn a_line_over_the_limit_is_cut_there() {
        let mut bytes = vec![b'y'; MAX_LINE_BYTES + 10];
        bytes.push(b'\n');
        let v = run(&bytes);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0]["line"].as_str().map(str::len), Some(MAX_LINE_BYTES));
        assert_eq!(v[1]["line"].as_str().map(str::len), Some(10));
    }
}
