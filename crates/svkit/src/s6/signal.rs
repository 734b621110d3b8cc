//! Signal names, as s6 spells them: one table for s6-svstat's names
//! (status, events), `s6-svc`'s signals (`svctl signal`), a slot's
//! `down-signal` (config's `down_signal`, a stray's stop) and the records
//! svkit writes with a signal in them.

use nix::libc as c;
use nix::sys::signal::Signal;

/// skalibs' `sig_name` table: its order decides aliases (ABRT over IOT,
/// CHLD over CLD, POLL over IO).
const TABLE: &[(i32, &str)] = &[
    (c::SIGABRT, "ABRT"),
    (c::SIGALRM, "ALRM"),
    (c::SIGBUS, "BUS"),
    (c::SIGCHLD, "CHLD"),
    (c::SIGCONT, "CONT"),
    (c::SIGFPE, "FPE"),
    (c::SIGHUP, "HUP"),
    (c::SIGILL, "ILL"),
    (c::SIGINT, "INT"),
    (c::SIGKILL, "KILL"),
    (c::SIGPIPE, "PIPE"),
    (c::SIGQUIT, "QUIT"),
    (c::SIGSEGV, "SEGV"),
    (c::SIGSTOP, "STOP"),
    (c::SIGTERM, "TERM"),
    (c::SIGTSTP, "TSTP"),
    (c::SIGTTIN, "TTIN"),
    (c::SIGTTOU, "TTOU"),
    (c::SIGUSR1, "USR1"),
    (c::SIGUSR2, "USR2"),
    (c::SIGPOLL, "POLL"),
    (c::SIGPROF, "PROF"),
    (c::SIGSYS, "SYS"),
    (c::SIGTRAP, "TRAP"),
    (c::SIGURG, "URG"),
    (c::SIGVTALRM, "VTALRM"),
    (c::SIGXCPU, "XCPU"),
    (c::SIGXFSZ, "XFSZ"),
    (c::SIGSTKFLT, "STKFLT"),
    (c::SIGWINCH, "WINCH"),
    (c::SIGPWR, "PWR"),
];

/// How s6-svstat names signal `sig` (skalibs' `sig_name`); unknown
/// numbers are `???`.
pub fn name(sig: u8) -> &'static str {
    TABLE
        .iter()
        .find(|(n, _)| *n == i32::from(sig))
        .map_or("???", |(_, s)| s)
}

/// The signal `SIGNAME` names, as svkit writes one (a rendered
/// `down-signal`, a record): the table's name, upper case, `SIG` first.
pub fn parse(s: &str) -> Option<Signal> {
    let bare = s.strip_prefix("SIG")?;
    let (num, _) = TABLE.iter().find(|(_, n)| *n == bare)?;
    Signal::try_from(*num).ok()
}

/// What a slot's `down_signal` may be (s6-supervise's `down-signal`
/// file), in the order its message lists them.
const DOWN_SIGNALS: &[&str] = &[
    "HUP", "INT", "QUIT", "ABRT", "KILL", "USR1", "USR2", "ALRM", "TERM", "CONT", "STOP", "WINCH",
    "PWR",
];

/// A `down_signal` checked, as its canonical `SIGNAME` spelling; else
/// why not, worded to follow "`value`: ".
pub fn down_signal(s: &str) -> Result<String, String> {
    let bare = s.strip_prefix("SIG").unwrap_or(s);
    if DOWN_SIGNALS.contains(&bare) {
        Ok(["SIG", bare].concat())
    } else {
        Err(format!(
            "unknown signal (expected one of: {})",
            DOWN_SIGNALS.join(", ")
        ))
    }
}

/// What `s6-svc -s` takes: a name in any case, with or without `SIG`, or
/// its number; the number, or None.
pub fn svc_number(s: &str) -> Option<i32> {
    let upper = s.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    (TABLE.iter())
        .find(|(num, n)| *n == bare || num.to_string() == bare)
        .map(|(num, _)| *num)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(parse("SIGTERM"), Some(Signal::SIGTERM));
        assert_eq!(parse("SIGPOLL"), Some(Signal::SIGIO));
        assert_eq!(parse("HUP"), None);
        assert_eq!(parse("sigterm"), None);
        assert_eq!(down_signal("TERM").unwrap(), "SIGTERM");
        assert_eq!(down_signal("SIGHUP").unwrap(), "SIGHUP");
        assert!(down_signal("SIGFOO").is_err());
        assert!(down_signal("SIGSEGV").is_err());
        assert_eq!(svc_number("sigterm"), Some(c::SIGTERM));
        assert_eq!(svc_number("SIG15"), Some(c::SIGTERM));
        assert_eq!(svc_number("015"), None);
        assert_eq!(
            crate::s6::control::signal_names(),
            "TERM KILL HUP INT QUIT ALRM USR1 USR2 STOP CONT WINCH"
        );
    }
}
