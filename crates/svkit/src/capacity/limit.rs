//! How many services the running s6-svscan takes: its `-C` (`-c` before
//! s6 2.14 renamed it), read from PID 1's argv, else its default.
//!
//! s6-svscan sizes its tables once, at start, from that option: nothing
//! changes it later, so PID 1's argv is the whole truth. s6-overlay
//! 3.2.3.0's stage 1 (s6-linux-init) runs it as `s6-svscan -dN --
//! /run/service`, with no `-C` and no setting that adds one: under it the
//! limit is always the default.

use std::fmt;
use std::path::Path;

use crate::msg::strerror;

/// s6-svscan's own default when it gets no `-C`.
pub const DEFAULT_MAX: u32 = 1000;
/// s6-svscan clamps `-C` into this range (s6 2.15).
const CLAMP: (u32, u32) = (4, 160_000);
/// Where the running s6-svscan's argv is, when it is PID 1.
pub const PID1_CMDLINE: &str = "/proc/1/cmdline";

/// A limit, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub max: u32,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Read from PID 1's argv: its `-C` when `explicit`, else it runs
    /// without one and has the default.
    Pid1 { explicit: bool },
    /// The default, assumed: PID 1's argv says nothing (why).
    Assumed(String),
}

impl Limit {
    /// The default, assumed for `why`.
    pub fn assumed(why: impl Into<String>) -> Limit {
        Limit {
            max: DEFAULT_MAX,
            source: Source::Assumed(why.into()),
        }
    }

    /// The limit of the s6-svscan running as PID 1 under s6-overlay;
    /// the default, assumed and saying why, when there is none or its
    /// argv cannot be read.
    pub fn running() -> Limit {
        match crate::container::supervision() {
            crate::container::Supervision::Overlay => {
                Limit::from_cmdline_file(Path::new(PID1_CMDLINE))
            }
            // svkit-init runs s6-svscan without -c: its default.
            crate::container::Supervision::Init(_) => {
                Limit::assumed("svkit-init runs s6-svscan with its default")
            }
            crate::container::Supervision::Missing(why) => {
                Limit::assumed(format!("no s6-overlay here: {why}"))
            }
        }
    }

    /// The limit an argv file (`/proc/PID/cmdline`) gives.
    pub fn from_cmdline_file(path: &Path) -> Limit {
        match std::fs::read(path) {
            Ok(raw) => match parse_cmdline(&raw) {
                Ok((max, explicit)) => Limit {
                    max,
                    source: Source::Pid1 { explicit },
                },
                Err(why) => Limit::assumed(format!("{}: {why}", path.display())),
            },
            Err(e) => Limit::assumed(format!(
                "unable to read {}: {}",
                path.display(),
                strerror(&e)
            )),
        }
    }
}

impl fmt::Display for Limit {
    /// `1,000 (its default; -C in /proc/1/cmdline: none)`-like, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", super::thousands(self.max))?;
        match &self.source {
            Source::Pid1 { explicit: true } => write!(f, " (its -C, in {PID1_CMDLINE})"),
            Source::Pid1 { explicit: false } => {
                write!(f, " (its default: no -C in {PID1_CMDLINE})")
            }
            Source::Assumed(why) => write!(f, " (its default, assumed; {why})"),
        }
    }
}

/// Why an argv is not a running s6-svscan's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmdlineError {
    Empty,
    /// argv[0] names another program.
    NotSvscan(String),
    /// An option s6-svscan does not take, or one without its value: it
    /// would not have started with it.
    BadOption(String),
    /// `-C` whose value has no leading digit (s6-svscan refuses it).
    BadValue(String),
}

impl fmt::Display for CmdlineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdlineError::Empty => f.write_str("empty argv"),
            CmdlineError::NotSvscan(p) => write!(f, "PID 1 runs {p}, not s6-svscan"),
            CmdlineError::BadOption(o) => write!(f, "unexpected s6-svscan option {o}"),
            CmdlineError::BadValue(v) => write!(f, "s6-svscan -C {v} is not a number"),
        }
    }
}

/// Options of s6-svscan (2.15, and 2.11's `-c`); every one takes a value.
const SHORT: &[u8] = b"CcLtdX";
const LONG: &[&str] = &[
    "services-max",
    "name-max",
    "timeout",
    "notification-fd",
    "console-holder",
];

/// The limit in a `/proc/PID/cmdline` (NUL-separated argv) of s6-svscan,
/// and whether `-C` set it, parsed as s6-svscan parses its options: the
/// last `-C` wins, `-CN` and `-C N`, `--services-max=N` and
/// `--services-max N`; options end at `--` or the first operand. Any
/// bytes at all give a value or an error, never a panic.
pub fn parse_cmdline(raw: &[u8]) -> Result<(u32, bool), CmdlineError> {
    let mut args = raw
        .strip_suffix(b"\0")
        .unwrap_or(raw)
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let argv0 = args
        .next()
        .filter(|a| !a.is_empty())
        .ok_or(CmdlineError::Empty)?;
    let prog = argv0.rsplit('/').next().unwrap_or_default();
    if prog != "s6-svscan" {
        return Err(CmdlineError::NotSvscan(argv0));
    }
    let mut max: Option<String> = None;
    while let Some(arg) = args.next() {
        if arg == "--" || arg == "-" || !arg.starts_with('-') {
            break;
        }
        let (is_max, inline) = if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            if !LONG.contains(&name) {
                return Err(CmdlineError::BadOption(arg.clone()));
            }
            (name == "services-max", value)
        } else {
            let opt = arg.as_bytes().get(1).copied().unwrap_or_default();
            if !SHORT.contains(&opt) {
                return Err(CmdlineError::BadOption(arg.clone()));
            }
            // The rest of the cluster is the value (`-d3`), else the next arg.
            let rest = arg.get(2..).filter(|r| !r.is_empty()).map(str::to_string);
            (opt.eq_ignore_ascii_case(&b'c'), rest)
        };
        let value = match inline {
            Some(v) => v,
            None => args.next().ok_or(CmdlineError::BadOption(arg.clone()))?,
        };
        if is_max {
            max = Some(value);
        }
    }
    match max {
        None => Ok((DEFAULT_MAX, false)),
        Some(v) => scan_u32(&v)
            .map(|n| (n.clamp(CLAMP.0, CLAMP.1), true))
            .ok_or(CmdlineError::BadValue(v)),
    }
}

/// skalibs' `uint320_scan`: the leading decimal digits, stopping before
/// a digit that would overflow; None without one.
fn scan_u32(s: &str) -> Option<u32> {
    let mut n: u32 = 0;
    let mut any = false;
    for d in s.bytes().take_while(u8::is_ascii_digit) {
        match n
            .checked_mul(10)
            .and_then(|m| m.checked_add(u32::from(d - b'0')))
        {
            Some(m) => n = m,
            None => break,
        }
        any = true;
    }
    any.then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<(u32, bool), CmdlineError> {
        let mut raw = argv.join("\0").into_bytes();
        raw.push(0);
        parse_cmdline(&raw)
    }

    #[test]
    fn s6_overlays_own_argv_has_the_default() {
        let got = parse(&[
            "/package/admin/s6/command/s6-svscan",
            "-d4",
            "--",
            "/run/service",
        ]);
        assert_eq!(got, Ok((1000, false)));
        assert_eq!(parse(&["s6-svscan", "/run/service"]), Ok((1000, false)));
    }

    #[test]
    fn every_spelling_of_the_option_and_the_last_wins() {
        let s = "s6-svscan";
        assert_eq!(parse(&[s, "-C", "2000", "/s"]), Ok((2000, true)));
        assert_eq!(parse(&[s, "-C2000", "/s"]), Ok((2000, true)));
        assert_eq!(parse(&[s, "-c", "50", "/s"]), Ok((50, true)), "2.11's -c");
        assert_eq!(parse(&[s, "--services-max=7", "/s"]), Ok((7, true)));
        assert_eq!(parse(&[s, "--services-max", "8", "/s"]), Ok((8, true)));
        assert_eq!(
            parse(&[s, "-d", "3", "-C", "9", "-C", "10", "/s"]),
            Ok((10, true))
        );
        assert_eq!(
            parse(&[s, "-L", "100", "-t0", "-X3", "/s"]),
            Ok((1000, false))
        );
        // After `--` or the first operand nothing is an option.
        assert_eq!(parse(&[s, "--", "-C5"]), Ok((1000, false)));
        assert_eq!(parse(&[s, "/s", "-C5"]), Ok((1000, false)));
        // No trailing NUL (a truncated read) is the same argv.
        assert_eq!(parse_cmdline(b"s6-svscan\0-C\x00300"), Ok((300, true)));
    }

    #[test]
    fn values_are_scanned_and_clamped_as_s6_svscan_does() {
        let s = "s6-svscan";
        assert_eq!(parse(&[s, "-C", "1"]), Ok((4, true)));
        assert_eq!(parse(&[s, "-C", "0"]), Ok((4, true)));
        assert_eq!(parse(&[s, "-C", "999999"]), Ok((160_000, true)));
        assert_eq!(parse(&[s, "-C", "12abc"]), Ok((12, true)));
        // Past u32: the digits that fit, then the clamp.
        assert_eq!(
            parse(&[s, "-C", "99999999999999999999"]),
            Ok((160_000, true))
        );
        assert_eq!(scan_u32("4294967295"), Some(u32::MAX));
        assert_eq!(scan_u32("42949672951"), Some(u32::MAX));
        assert_eq!(scan_u32("4294967296"), Some(429_496_729));
    }

    #[test]
    fn malformed_and_hostile_argv_is_an_error_never_a_panic() {
        assert_eq!(parse_cmdline(b""), Err(CmdlineError::Empty));
        assert_eq!(parse_cmdline(b"\0"), Err(CmdlineError::Empty));
        assert_eq!(
            parse(&["/sbin/init", "-C", "5"]),
            Err(CmdlineError::NotSvscan("/sbin/init".into()))
        );
        assert!(matches!(
            parse(&["s6-svscan", "-C"]),
            Err(CmdlineError::BadOption(_))
        ));
        assert!(matches!(
            parse(&["s6-svscan", "-Z", "1"]),
            Err(CmdlineError::BadOption(_))
        ));
        assert!(matches!(
            parse(&["s6-svscan", "--max=1"]),
            Err(CmdlineError::BadOption(_))
        ));
        assert_eq!(
            parse(&["s6-svscan", "-C", "-5", "/s"]),
            Err(CmdlineError::BadValue("-5".into()))
        );
        assert!(matches!(
            parse(&["s6-svscan", "-C", ""]),
            Err(CmdlineError::BadValue(_))
        ));
        // Not UTF-8: read lossily, still parsed.
        assert_eq!(
            parse_cmdline(b"s6-svscan\0-C\x0012\xff\0/s\0"),
            Ok((12, true))
        );
        assert!(matches!(
            parse_cmdline(b"\xffs6-svscan\0"),
            Err(CmdlineError::NotSvscan(_))
        ));
        // Only NULs, a multibyte char right after `-`, a huge argv.
        assert!(parse_cmdline(b"\0\0\0").is_err());
        assert!(matches!(
            parse_cmdline("s6-svscan\0-é\0".as_bytes()),
            Err(CmdlineError::BadOption(_))
        ));
        let mut big = b"s6-svscan".to_vec();
        for _ in 0..10_000 {
            big.extend_from_slice(b"\0-C\x003");
        }
        assert_eq!(parse_cmdline(&big), Ok((4, true)));
    }

    #[test]
    fn an_unreadable_or_foreign_pid1_gives_the_default_assumed_and_why() {
        let t = tempfile::tempdir().expect("tempdir");
        let missing = Limit::from_cmdline_file(&t.path().join("nope"));
        assert_eq!(missing.max, DEFAULT_MAX);
        assert!(
            matches!(&missing.source, Source::Assumed(w) if w.contains("No such file")),
            "{missing:?}"
        );
        let f = t.path().join("cmdline");
        std::fs::write(&f, b"bash\0-c\0x\0").expect("write");
        let l = Limit::from_cmdline_file(&f);
        assert_eq!(l.max, DEFAULT_MAX);
        assert!(l.to_string().contains("assumed"), "{l}");
        std::fs::write(&f, b"s6-svscan\0-C1500\0/run/service\0").expect("write");
        let l = Limit::from_cmdline_file(&f);
        assert_eq!(
            (l.max, l.source.clone()),
            (1500, Source::Pid1 { explicit: true })
        );
        assert_eq!(l.to_string(), "1,500 (its -C, in /proc/1/cmdline)");
    }
}
