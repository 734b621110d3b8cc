//! `svkit slot-claim PID [--own-stdout USER]`: what a slot's `run` does
//! before anything else, as root, in the slot dir. It refuses the start
//! while the slot's program runs in the foreground ([`foreground`]: a
//! redirect's opt-out), ends a copy of the program that a killed
//! supervisor left ([`crate::stray`]), records the pid the script becomes,
//! and hands the slot's log pipe to the user the program will run as. One
//! process for all of it: it runs at every start. `svkit log-claim PID`
//! ([`log_main`]) is the same end-then-record for the slot's logger.

pub mod foreground;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::msg::{self, exit, Fatal};
use crate::s6::control::{self, SvcCommand};
use crate::stray::{end_stray, record, Copy, Ended, PROGRAM_FILE};

/// How long a refusing `run` waits for its supervisor to stop wanting the
/// slot up, so that its exit is a stop and not a crash to retry.
const UNWANT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a start of `slot` is refused while `copy` runs in the foreground,
/// and the way on: one text for `svctl` and the slot's `run`.
pub fn in_foreground_why(copy: Copy) -> String {
    format!(
        "its program runs in the foreground (pid {}): the container's command, run with its redirect's opt-out; a second copy would run beside it: end that command first (or run the container without the opt-out)",
        copy.pid
    )
}

/// `svkit slot-claim PID [--own-stdout USER]`, run by a slot's `run`
/// from the slot dir before anything else. While the slot's program runs
/// in the foreground it refuses (exit 5, `svctl start`'s refusal too, and
/// the slot's `run` exits with it): s6 stops wanting the
/// slot up (`s6-svc -O`: no signal to this `run`), and one line to the
/// container's output says why. Else it ends the copy the previous
/// record names if it still runs (one line to the container's output),
/// then records PID (the script, which becomes the program), then hands
/// the log pipe on its stdout to USER ([`own_stdout`]). Nothing else
/// keeps the slot from starting: a failure is said and the start goes on
/// (exit 0), except for bad usage.
pub fn main(args: std::env::ArgsOs) -> ExitCode {
    msg::init("svkit slot-claim");
    let args: Vec<OsString> = args.collect();
    let parsed = match args.as_slice() {
        [pid] => claim_pid(pid).map(|p| (p, None)),
        [pid, flag, user] if flag == "--own-stdout" => {
            claim_pid(pid).and_then(|p| Some((p, Some(user.to_str()?))))
        }
        _ => None,
    };
    let Some((me, owner)) = parsed else {
        let usage = "usage: svkit slot-claim PID [--own-stdout USER] (run by a slot's run script, in the slot dir)";
        return Fatal::usage(usage, "").report();
    };
    let slot = Path::new(".");
    let name = slot_name(0);
    if let Some(copy) = foreground::running(&name) {
        refuse(slot, &name, copy);
        return ExitCode::from(exit::svctl::IN_FOREGROUND);
    }
    take_over(slot, me, &name, "its program");
    if let Some((user, Err(why))) = owner.map(|u| (u, own_stdout(u))) {
        msg::warn(format_args!(
            "slot {name}: unable to hand its log pipe to {user}: {why}"
        ));
    }
    ExitCode::SUCCESS
}

/// `svkit log-claim PID`, run by a slot's `log/run` from the logger's
/// dir (`SLOT/log`) before anything else: the slot's rule for a copy left
/// by a killed supervisor ([`take_over`]), applied to its logger. An
/// s6-log left behind holds the log dir's lock and reads the same pipe
/// as the new one, which would find the dir locked and log to stdout
/// only, while the lines split between the two. TERM (the logger's down
/// signal: no `down-signal` in `log/`) makes s6-log write out what it read
/// and exit; KILL after 3 s. Exit 0 but for bad usage: the logger starts
/// whatever happened, and its lock probe copes with a stray left alive.
pub fn log_main(args: std::env::ArgsOs) -> ExitCode {
    msg::init("svkit log-claim");
    let args: Vec<OsString> = args.collect();
    let Some(me) = (match args.as_slice() {
        [pid] => claim_pid(pid),
        _ => None,
    }) else {
        let usage =
            "usage: svkit log-claim PID (run by a slot's log/run script, in the logger's dir)";
        return Fatal::usage(usage, "").report();
    };
    // The logger's dir is `SLOT/log`: the slot is its parent.
    take_over(Path::new("."), me, &slot_name(1), "its logger");
    ExitCode::SUCCESS
}

/// The one rule for a start under a supervisor that may be new: end the
/// copy the previous record in `dir` names when it still runs and is not
/// `me` (the pid the supervisor started), the way that supervisor would
/// stop it ([`crate::stray`]), then record `me`. `what` names the process
/// in the messages (`its program`, `its logger`); each outcome is one line
/// to the container's output, and none keeps the start from going on.
fn take_over(dir: &Path, me: i32, name: &str, what: &str) {
    let pid = u32::try_from(me).unwrap_or(0);
    match end_stray(dir, pid) {
        Ok(None) => {}
        Ok(Some((c, how))) => msg::warn(format_args!(
            "slot {name}: a copy of {what} from before its supervisor was restarted still ran (pid {}): {}",
            c.pid,
            match how {
                Ended::Stopped => "stopped it before starting anew",
                Ended::Killed => "killed it (it outlived its down signal) before starting anew",
            }
        )),
        Err(e) => msg::warn(format_args!(
            "slot {name}: unable to end a copy of {what} from before its supervisor was restarted: {}; starting anyway",
            msg::strerror(&e)
        )),
    }
    match Copy::of(me).map(|c| record(dir, c)) {
        Some(Ok(())) => {}
        Some(Err(e)) => msg::warn(format_args!(
            "slot {name}: unable to record {what}'s pid in {PROGRAM_FILE}: {}",
            msg::strerror(&e)
        )),
        None => msg::warn(format_args!("slot {name}: pid {me} is not running")),
    }
}

/// Refuses this start: s6 no longer wants the slot up (`O` leaves the
/// running `run` alone, unlike `d`), so the exit that follows is a stop,
/// which `finish` leaves undecided: no crash count, no restart.
fn refuse(slot: &Path, name: &str, copy: Copy) {
    let unwanted = control::write(slot, &[SvcCommand::Once]).map(|()| {
        crate::clock::poll_until(UNWANT_TIMEOUT, || {
            crate::s6::status::read_slot(slot).is_ok_and(|st| !st.want_up)
        })
    });
    let after = match unwanted {
        Ok(true) => String::new(),
        Ok(false) => format!(
            "; its supervisor still wants it up after {} ms, so it may try again",
            UNWANT_TIMEOUT.as_millis()
        ),
        Err(e) => format!("; unable to tell its supervisor to stop wanting it up: {e}"),
    };
    msg::warn(format_args!(
        "slot {name}: not starting: {}{after}",
        in_foreground_why(copy)
    ));
}

/// The slot's name: the current dir's, `up` dirs above it.
fn slot_name(up: usize) -> String {
    let dir = std::env::current_dir().unwrap_or_default();
    dir.ancestors()
        .nth(up)
        .map(crate::s6::slot_name)
        .unwrap_or_default()
}

fn claim_pid(arg: &std::ffi::OsStr) -> Option<i32> {
    arg.to_str()?.parse::<i32>().ok().filter(|p| *p > 1)
}

/// s6-svscan makes the pipe from a slot to its logger as root, mode 0600:
/// a program dropped to another user can write to its fd 1 but not open
/// `/dev/stdout` (nginx's `access_log /dev/stdout`). Our stdout is that
/// pipe (the run script's, inherited), so it becomes `user`'s, as
/// `chown USER` would make it: a name from `/etc/passwd` (its group
/// stays), or the numeric `uid:gid` a config may give.
fn own_stdout(user: &str) -> Result<(), String> {
    let (uid, gid) = match crate::passwd::lookup(user).map_err(|e| e.to_string())? {
        crate::passwd::User::Ids(u, g) => (u, Some(g)),
        crate::passwd::User::Named(a) => (a.uid, None),
    };
    let stdout = std::io::stdout();
    std::os::unix::fs::fchown(std::os::fd::AsFd::as_fd(&stdout), Some(uid), gid)
        .map_err(|e| msg::strerror(&e))
}
