//! How s6-svstat names a signal.

/// skalibs' `sig_name`: its table order decides aliases (ABRT over IOT,
/// CHLD over CLD, POLL over IO); unknown numbers are `???`.
pub fn sig_name(sig: u8) -> &'static str {
    use nix::libc as c;
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
    TABLE
        .iter()
        .find(|(n, _)| *n == i32::from(sig))
        .map_or("???", |(_, s)| s)
}
