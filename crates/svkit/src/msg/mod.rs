//! Messages and exit codes of every svkit binary, in one place.
//!
//! Like s6's `strerr`: a binary names itself once ([`init`]), and every line
//! it writes to stderr reads `PROG: fatal: what: why` ([`fatal`], [`Fatal`]),
//! `PROG: warning: ...` ([`warn`]) or `PROG: info: ...` ([`info`]); the
//! `why` of a system error is strerror's text ([`strerror`]). Bad usage
//! exits 100, a system error 111 ([`exit`] names every code).
//!
//! Like ripgrep's messages: stdout goes through [`out`] (or [`out_error`]
//! for a writer streaming to it), for which a reader that went away (EPIPE,
//! `svctl plan | head -1`) is a quiet end: the rest of the output is
//! dropped, nothing is printed, the exit code is the command's own. A
//! message that cannot reach stderr is dropped too: never a panic.
//!
//! What svkit writes into a slot's log from beside the program goes
//! through [`say`], which never blocks on a full log pipe.
//!
//! Every message is printable text ([`escape`]: control characters and
//! bytes that are not UTF-8 shown as escapes), and each of its lines
//! reaches stderr in one `write(2)`, so the lines of several programs
//! sharing the container's output (`docker logs`) never mix.
//!
//! Infrastructure: imports nothing of svkit's domain (only `container`).

pub mod exit;
mod say;

pub use say::{say, say_beside, say_fatal, Said, CONTAINER_STDERR};

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::{self, Write as _};
use std::io::{self, Write as _};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static PROG: OnceLock<&'static str> = OnceLock::new();

/// Stdout's reader went away: later output is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Names the program in every message (first call wins): once, first
/// thing in `main`.
pub fn init(prog: &'static str) {
    let _ = PROG.set(prog);
}

/// The name given to [`init`] (`svkit` before it).
pub fn prog() -> &'static str {
    PROG.get().copied().unwrap_or("svkit")
}

/// strerror's text of an OS error, as s6 prints it: `No such file or
/// directory`, without std's ` (os error 2)`. Other errors: their text.
pub fn strerror(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_owned(),
        None => e.to_string(),
    }
}

/// A pipe takes a write of at most this many bytes whole, never mixed
/// with another writer's.
pub const PIPE_BUF: usize = 4096;

fn line(level: &str, msg: &dyn fmt::Display) {
    let _ = write_lines(&mut io::stderr().lock(), [compose(level, msg)]);
}

/// `PROG: LEVEL: MSG` and its newline, MSG escaped.
fn compose(level: &str, msg: &dyn fmt::Display) -> String {
    format!("{}: {level}: {}\n", prog(), escape(&msg.to_string()))
}

/// Writes whole lines, each in one `write(2)`; consecutive lines share a
/// write while they fit in `PIPE_BUF`, which a pipe takes whole (a config
/// with thousands of errors is not thousands of system calls).
fn write_lines(w: &mut impl io::Write, lines: impl IntoIterator<Item = String>) -> io::Result<()> {
    let mut out = Lines::new(w);
    for l in lines {
        out.push(l.as_bytes())?;
    }
    out.flush()
}

/// A writer of whole lines to a file others write to as well (the
/// container's output): consecutive lines are gathered while they fit in
/// [`PIPE_BUF`] and go out in one `write(2)`, which a pipe takes whole, so
/// no other writer's bytes land inside them. A longer line is written
/// alone, after the lines before it: a pipe may then mix another writer's
/// bytes into it once it is full. [`Lines::flush`] writes what is
/// gathered; nothing is written otherwise until the next line does not fit.
pub struct Lines<W: io::Write> {
    buf: Vec<u8>,
    out: W,
}

impl<W: io::Write> Lines<W> {
    pub fn new(out: W) -> Self {
        Lines {
            buf: Vec::with_capacity(PIPE_BUF),
            out,
        }
    }

    /// Adds `line`, its newline included: the caller cuts lines, this
    /// only keeps each whole.
    pub fn push(&mut self, line: &[u8]) -> io::Result<()> {
        if self.buf.len() + line.len() > PIPE_BUF {
            self.flush()?;
            if line.len() > PIPE_BUF {
                return self.out.write_all(line);
            }
        }
        self.buf.extend_from_slice(line);
        Ok(())
    }

    /// Writes the lines gathered, in one `write(2)` on a pipe.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.out.flush()
    }
}

/// `PROG: fatal: MSG` on stderr (the caller then exits).
pub fn fatal(msg: impl fmt::Display) {
    line("fatal", &msg);
}

/// `PROG: warning: MSG` on stderr.
pub fn warn(msg: impl fmt::Display) {
    line("warning", &msg);
}

/// `PROG: info: MSG` on stderr.
pub fn info(msg: impl fmt::Display) {
    line("info", &msg);
}

/// A line of a slot's `finish` on stderr, the container's own output, as
/// it is (`svkit: slot web is crash-looping: …`, no level).
pub fn finish_line(text: &str) {
    let _ = write_lines(&mut io::stderr().lock(), [format!("{}\n", escape(text))]);
}

/// `PROG: fatal: invalid config in DIR[: tail]`, then each diagnostic on
/// its own line (`FILE:LINE:COL: FIELD: message`, as config's diagnostics
/// display: generic, so messages stay below config).
pub fn invalid_config(dir: &Path, tail: &str, diags: &[impl fmt::Display]) {
    let sep = if tail.is_empty() { "" } else { ": " };
    let what = format!("invalid config in {}{sep}{tail}", path(dir));
    let head = compose("fatal", &what);
    let each = diags
        .iter()
        .map(|d| format!("{}\n", escape(&d.to_string())));
    let _ = write_lines(&mut io::stderr().lock(), std::iter::once(head).chain(each));
}

/// Prints `PROG: fatal: MSG` and exits with `code`, for code that cannot
/// return to `main` (svkit-wrap on its way to an exec).
pub fn die(code: u8, msg: impl fmt::Display) -> ! {
    fatal(msg);
    std::process::exit(i32::from(code))
}

/// A failure to report: `PROG: fatal: what: why`, exit `code`; or one
/// already reported in full (every error of an invalid config), of which
/// only the exit code is left.
#[derive(Debug)]
pub struct Fatal {
    pub code: u8,
    pub what: String,
    /// Empty when `what` says it all (e.g. a library error's own text).
    pub why: String,
    reported: bool,
}

impl Fatal {
    pub fn new(code: u8, what: impl Into<String>, why: impl fmt::Display) -> Self {
        Fatal {
            code,
            what: what.into(),
            why: why.to_string(),
            reported: false,
        }
    }

    /// A failure already said: [`Fatal::report`] prints nothing more.
    pub fn reported(code: u8) -> Self {
        Fatal {
            reported: true,
            ..Fatal::new(code, "", "")
        }
    }

    /// Bad usage: exit 100.
    pub fn usage(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Fatal::new(exit::USAGE, what, why)
    }

    /// A system error: exit 111.
    pub fn system(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Fatal::new(exit::SYSTEM, what, why)
    }

    /// A failed system call: exit 111, `why` is strerror's text.
    pub fn io(what: impl Into<String>, e: &io::Error) -> Self {
        Fatal::system(what, strerror(e))
    }

    /// Prints the message (unless already said); the exit code for `main`
    /// to return.
    pub fn report(&self) -> ExitCode {
        if !self.reported {
            fatal(self);
        }
        ExitCode::from(self.code)
    }
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.why.is_empty() {
            return f.write_str(&self.what);
        }
        write!(f, "{}: {}", self.what, self.why)
    }
}

/// Writes `bytes` to stdout and flushes. A closed stdout (EPIPE) is not an
/// error: this and later output is dropped.
pub fn out(bytes: impl AsRef<[u8]>) -> Result<(), Fatal> {
    if stdout_closed() {
        return Ok(());
    }
    let mut stdout = io::stdout().lock();
    let written = stdout
        .write_all(bytes.as_ref())
        .and_then(|()| stdout.flush());
    written.or_else(out_error)
}

/// Stdout's reader went away: what is left to print is dropped (a command
/// that would only go on printing, like `svctl logs -f`, stops).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// What an error writing to stdout means: `Ok` for EPIPE (the reader went
/// away: a quiet end, later output dropped), else a system error.
pub fn out_error(e: io::Error) -> Result<(), Fatal> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        Ok(())
    } else {
        Err(Fatal::io("unable to write to stdout", &e))
    }
}

#[cfg(test)]
mod tests;

/// Where a located message points: a file and, when known, a 1-based line
/// and column. Shown as `FILE`, `FILE:LINE` or `FILE:LINE:COL`, the file
/// escaped as every path in a message. The one spelling of a place for
/// config errors, import notes, env files and `/proc` tables alike: a
/// located message is `At` followed by `: ` and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: std::path::PathBuf,
    pub line: Option<usize>,
    pub col: Option<usize>,
}

impl At {
    /// A whole file.
    pub fn file(file: impl Into<std::path::PathBuf>) -> At {
        At {
            file: file.into(),
            line: None,
            col: None,
        }
    }

    /// A line of a file.
    pub fn line(file: impl Into<std::path::PathBuf>, line: usize) -> At {
        At {
            line: Some(line),
            ..At::file(file)
        }
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&path(&self.file))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.col {
                write!(f, ":{c}")?;
            }
        }
        Ok(())
    }
}

// What a message may carry to a terminal or a log: printable text only.
//
// A message quotes what others wrote: config values, slot names, file
// names, argv. A newline among them would split a message in two (the
// second line free to imitate `FILE:LINE:COL: ...`); ESC, BEL and the
// other control characters would reach the operator's terminal as
// commands. So every control character is shown as a visible escape
// (`\n`, `\r`, `\t`, `\e`, `\x07`, C1 ones as `\u{9b}`), and bytes that are
// not UTF-8 (file names, argv) as `\xNN` rather than U+FFFD, so the reader
// can still tell which file is meant. A backslash is left as it is: the
// escapes are for reading, not for parsing back.

/// `text` with every control character shown as a visible escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if u32::from(c) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// Bytes as message text: UTF-8 runs escaped as [`escape`] does, every
/// other byte as `\xNN`.
pub fn bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// A file name as message text (see [`bytes`]).
pub fn path(p: &Path) -> String {
    bytes(p.as_os_str().as_bytes())
}

/// An argument or other OS string as message text (see [`bytes`]).
pub fn os(s: &OsStr) -> String {
    bytes(s.as_bytes())
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn control_characters_are_visible() {
        assert_eq!(escape("plain `x`"), "plain `x`");
        assert_eq!(
            escape("a\nt.json:1:1: fake\r\t\x1b[31m\x07\x7f\u{9b}"),
            "a\\nt.json:1:1: fake\\r\\t\\e[31m\\x07\\x7f\\u{9b}"
        );
        // Already escaped text stays as it is: escaping twice is harmless.
        let once = escape("x\ny").into_owned();
        assert_eq!(escape(&once), once);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_hex() {
        assert_eq!(bytes(b"caf\xc3\xa9 \xff\xfe\n"), "café \\xff\\xfe\\n");
        assert_eq!(
            path(Path::new(OsStr::from_bytes(b"/etc/svkit/\x1b.json"))),
            "/etc/svkit/\\e.json"
        );
    }
}
