//! `svkit-init`, the entrypoint that supervises wherever the container
//! runs: [`main`] parses its argv by hand (everything after `--` is the
//! CMD, flags included) and hands the rest to `svkit::init`.

/// What `svkit-init --help` prints (followed by a newline).
pub const HELP: &str = "svkit-init: the container's entrypoint, supervised wherever it runs

Usage: svkit-init [--] [CMD...]       (ENTRYPOINT [\"svkit-init\", \"--\"])

As PID 1 of an image with s6-overlay, it execs s6-overlay's /init with
`svkit-wrap -- CMD...`: nothing changes. Anywhere else (not PID 1:
docker run --init, a shared pid namespace, an injected init; no
s6-overlay in the image; SVKIT_INIT=s6) it supervises itself with s6's
own tools (s6-overlay's /command, or a distribution's s6 on PATH): it
adopts orphans, starts s6-svscan on a fresh scandir (/run/service, else
/tmp/svkit/service), runs /etc/cont-init.d/*, links /etc/services.d/* in,
then carries out the CMD as svkit-wrap does. At SIGTERM, SIGINT, SIGHUP or
SIGQUIT (or when the CMD or an essential slot ends) it runs
/etc/cont-finish.d/*, stops the tree, and sends TERM, then KILL after
S6_KILL_GRACETIME, to what is left, only if something is. One line at
boot says which mode runs, and why.

Exit codes: the CMD's own; an essential slot's; 0 after a requested stop
(with S6_CMD_RECEIVE_SIGNALS=1 the signal goes to the CMD and its code
is the container's); 1 no s6-svscan, no writable and exec-able run dir,
s6-rc user services it cannot run, or a failed cont-init hook with
S6_BEHAVIOUR_IF_STAGE2_FAILS=2; 100 bad usage or SVKIT_INIT value; 111
system error, or s6-svscan ended under it.

Environment: SVKIT_INIT (s6 | overlay; unset: chosen as above),
SVKIT_RUN_DIR (the run dir, instead of /run then /tmp/svkit),
S6_CMD_RECEIVE_SIGNALS, S6_BEHAVIOUR_IF_STAGE2_FAILS,
S6_KILL_FINISH_MAXTIME, S6_SERVICES_GRACETIME, S6_KILL_GRACETIME, as
s6-overlay reads them. It sets SVKIT_RUN_DIR, SVKIT_INIT_PID and
S6_KEEP_ENV=1 for everything it starts.";

/// The whole program: it never returns.
pub fn main() -> std::process::ExitCode {
    svkit::msg::init("svkit-init");
    let args = crate::clapmsg::hand_parsed("svkit-init", HELP);
    std::process::exit(svkit::init::start(args))
}
