//! `svkit log-stdout`: the stdout copy of a slot's log (`docker logs`),
//! each line whole in the container's output.
//!
//! The container's output is one pipe that PID 1, the CMD, every slot
//! without a logger and every logger's copy write into. A pipe takes a
//! write of up to `PIPE_BUF` (4096) bytes whole; s6-log writes its copy in
//! buffers of many lines, on a non-blocking fd, so a buffer the pipe takes
//! in part ends inside a line, and another writer's bytes land there. So
//! s6-log's `1` action writes into a pipe read by this filter, which writes
//! whole lines only, gathered while they fit in `PIPE_BUF` ([`Lines`]).
//! `svkit log-stdout --slot NAME [--json] -- s6-log ...` starts itself as
//! the filter (reading the pipe, writing to the logger's stdout), then
//! execs s6-log with its stdout on the pipe. s6-log stays the supervised
//! process (signals, locking and rotation as without a filter) and reaps
//! the filter; the filter blocks TERM, HUP and INT so that whatever s6-log
//! writes on its way out still gets through, and ends when s6-log closes
//! the pipe. Its output waits while full, whatever its flags: the copy
//! never ends on a full pipe.
//!
//! Without `--json` each line goes out as s6-log made it (its prefix, `p`,
//! included). With `--json` (`log.format: "json"`) each input line gives
//! exactly one output line:
//! `{"time":"2026-12-01T10:00:00.123456Z","slot":"web","line":"..."}`;
//! `time` is when the filter read the line (UTC, microseconds), `line` the
//! line without its newline. Bytes that are not UTF-8 become U+FFFD (one
//! for each invalid sequence); control characters are escaped (`\u001b`),
//! as JSON requires. A line longer than [`MAX_LINE_BYTES`] is cut there,
//! as s6-log itself cuts it.

use std::ffi::OsString;
use std::io::{self, BufRead as _, Read as _, Write};
use std::os::fd::AsRawFd as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, ExitCode, Stdio};
use std::time::SystemTime;

use crate::msg::{self, exit, strerror, Lines};
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

/// Copies `input` to `output` until EOF, as JSON lines of the slot `json`
/// names, else as they are. What is gathered is written whenever no more
/// input is waiting, so a line never sits in a buffer while the filter
/// blocks.
pub fn filter<R: io::Read>(
    json: Option<&str>,
    input: &mut io::BufReader<R>,
    output: impl Write,
) -> io::Result<()> {
    let mut out = Lines::new(output);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = MAX_LINE_BYTES as u64;
        if (&mut *input).take(limit).read_until(b'\n', &mut line)? == 0 {
            return out.flush();
        }
        match json {
            Some(slot) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                out.push(&record(slot, &line, SystemTime::now()))?;
            }
            None => out.push(&line)?,
        }
        if input.buffer().is_empty() {
            out.flush()?;
            // A long line's room goes back to the system once idle: the
            // filter lives as long as its logger.
            if line.capacity() > msg::PIPE_BUF {
                line = Vec::new();
                crate::sys::release_free_heap();
            }
        }
    }
}

fn usage(why: &str) -> ExitCode {
    msg::fatal(format_args!(
        "usage: log-stdout --slot NAME [--json] [-- ARGV...]: {why}"
    ));
    ExitCode::from(exit::USAGE)
}

/// `svkit log-stdout --slot NAME [--json] [-- ARGV...]`: without ARGV,
/// the filter (stdin to stdout); with it, the filter started on a pipe and
/// ARGV exec'd writing into it.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut it = args.into_iter();
    let mut slot = None;
    let mut json = false;
    let mut argv = Vec::new();
    while let Some(a) = it.next() {
        if a == "--slot" {
            slot = it.next().map(|s| s.to_string_lossy().into_owned());
        } else if a == "--json" {
            json = true;
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
        return run_filter(&slot, json);
    }
    let Err(f) = spawn_and_exec(&slot, json, &argv);
    f.report()
}

fn run_filter(slot: &str, json: bool) -> ExitCode {
    use nix::sys::signal::{SigSet, Signal};
    use std::os::fd::AsFd as _;
    // Blocked, they stay pending for good (this process never unblocks
    // them): the filter outlives a TERM sent to s6-log's process group.
    let held: SigSet = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT]
        .into_iter()
        .collect();
    let _ = held.thread_block();
    let mut input = io::BufReader::with_capacity(64 * 1024, io::stdin().lock());
    // Straight to the fd: std's stdout would cut writes at its own lines.
    let stdout = io::stdout();
    let output = Waiting(stdout.as_fd());
    match filter(json.then_some(slot), &mut input, output) {
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
/// sharing it, and a full pipe must make the copy wait, never end it. A
/// write of at most `PIPE_BUF` bytes to a pipe is whole or `EAGAIN`: it
/// stays one write.
struct Waiting<'a>(std::os::fd::BorrowedFd<'a>);

impl Write for Waiting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        loop {
            match rustix::io::write(self.0, buf) {
                Err(rustix::io::Errno::AGAIN) => {
                    let mut fds = [PollFd::new(self.0, PollFlags::POLLOUT)];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                other => return other.map_err(io::Error::from),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn spawn_and_exec(
    slot: &str,
    json: bool,
    argv: &[OsString],
) -> Result<std::convert::Infallible, msg::Fatal> {
    let (reader, writer) = io::pipe().map_err(|e| msg::Fatal::io("unable to make a pipe", &e))?;
    Command::new("/proc/self/exe")
        .arg0("svkit")
        .args(["log-stdout", "--slot", slot])
        .args(json.then_some("--json"))
        .stdin(Stdio::from(reader))
        .spawn()
        .map_err(|e| msg::Fatal::io("unable to start the log filter", &e))?;
    nix::unistd::dup2(writer.as_raw_fd(), 1)
        .map_err(|e| msg::Fatal::io("unable to redirect stdout", &io::Error::from(e)))?;
    drop(writer);
    let (prog, rest) = argv
        .split_first()
        .ok_or_else(|| msg::Fatal::usage("log-stdout", "no command after --"))?;
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
        Waiting(std::os::fd::AsFd::as_fd(&w))
            .write_all(&vec![b'x'; want])
            .expect("waits, never EAGAIN");
        drop(w);
        assert_eq!(reader.join().expect("reader"), want);
    }

    fn run(input: &[u8]) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut r = io::BufReader::with_capacity(7, input);
        filter(Some("web"), &mut r, &mut out).unwrap_or_else(|e| panic!("{e}"));
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

    /// Every `write` call it gets.
    struct Writes(Vec<Vec<u8>>);

    impl Write for &mut Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn each_write_is_whole_lines_that_a_pipe_takes_whole() {
        let short = format!("[p] {}\n", "s".repeat(296));
        let long = format!("{}\n", "l".repeat(5000));
        let input = [
            short.repeat(40),
            long.clone(),
            short.repeat(3),
            "tail".into(),
        ]
        .concat();
        for json in [None, Some("web")] {
            let mut writes = Writes(Vec::new());
            let mut r = io::BufReader::with_capacity(64 * 1024, input.as_bytes());
            filter(json, &mut r, &mut writes).unwrap_or_else(|e| panic!("{e}"));
            let all: Vec<u8> = writes.0.concat();
            if json.is_none() {
                assert_eq!(all, input.as_bytes());
            }
            for w in &writes.0 {
                let alone = w.len() > msg::PIPE_BUF;
                assert!(
                    w.ends_with(b"\n") || w.ends_with(b"tail"),
                    "a write ends inside a line"
                );
                // Only a line longer than PIPE_BUF is written alone, in one piece.
                assert!(!alone || w.iter().filter(|&&b| b == b'\n').count() == 1);
            }
            // Gathered: 40 short lines take a few writes, not 40.
            assert!(writes.0.len() < 12, "{} writes", writes.0.len());
        }
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
