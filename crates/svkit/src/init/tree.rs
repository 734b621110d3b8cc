//! The supervision svkit-init runs itself where s6-overlay's `/init`
//! cannot: it adopts orphans (child subreaper), starts `s6-svscan` on a
//! fresh scandir, runs the cont-init hooks and the legacy services, then
//! the CMD through `svkit-wrap`, and at the end the cont-finish hooks, the
//! tree's stop, and a TERM/KILL of what is left (only if something is).
//!
//! One thread, no handlers: every signal is blocked and read from a
//! signalfd, so none is lost between a spawn and the wait for it. Exit
//! codes follow s6-overlay's: the CMD's own when it ends, an essential
//! slot's (its `finish` writes the code and sends USR1), 0 for a requested
//! stop, 111 when s6-svscan dies under it.

use std::ffi::OsString;
use std::fs;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::stages::{self, CONT_FINISH, CONT_INIT, RC_SOURCES, SERVICES};
use crate::container::{self, RUN_DIRS, RUN_DIR_ENV};
use crate::leftovers::CMD_PID_ENV;
use crate::msg::{self, exit, strerror, Fatal};
use crate::slot::end::{DECIDED_EXITCODE_NAME, INIT_PID_ENV, RESULTS_DIR};

/// How long s6-svscan gets to listen on its control FIFO.
const SVSCAN_START: Duration = Duration::from_secs(5);
/// The longest pause between looks at what no event announces: whether
/// s6-svscan listens yet, whether what the end signalled is gone (not
/// all its children, so no SIGCHLD says so).
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// A number of ms as s6-overlay reads it, else the default.
fn env_ms(var: &str, default: u64) -> Duration {
    Duration::from_millis(container::s6_number(var).unwrap_or(default))
}

/// A child's end as an exit code: its own, or 128+N after signal N.
fn code_of(status: WaitStatus) -> Option<(Pid, i32)> {
    match status {
        WaitStatus::Exited(pid, code) => Some((pid, code)),
        WaitStatus::Signaled(pid, sig, _) => Some((pid, exit::signaled(sig as i32))),
        _ => None,
    }
}

/// The stop signals (SIGCHLD and USR1, the halt, are read as well).
const STOPS: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

struct Tree {
    sigfd: SignalFd,
    results: PathBuf,
    svscan: Option<Pid>,
    cmd: Option<Pid>,
    /// The hook being waited for, and its code once it ended (orphans
    /// reaped meanwhile are forgotten: nothing waits for them).
    waiting: Option<Pid>,
    ended: Option<i32>,
    /// Set by a stop signal or the halt: the end has begun.
    stopping: bool,
    /// Past the tree's stop: the CMD's end no longer sets the code.
    last_phase: bool,
}

impl Tree {
    /// The container's code so far: what the CMD or an essential slot
    /// wrote, else 0.
    fn code(&self) -> i32 {
        fs::read_to_string(self.results.join("exitcode"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Sets the container's code, unless an essential slot decided it.
    fn set_code(&self, code: i32) {
        if self.results.join(DECIDED_EXITCODE_NAME).exists() {
            return;
        }
        if let Err(e) = fs::write(self.results.join("exitcode"), format!("{code}\n")) {
            msg::warn(format_args!(
                "unable to record the exit code {code}: {}",
                strerror(&e)
            ));
        }
    }

    fn reap(&mut self) {
        while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            let Some((pid, code)) = code_of(status) else {
                if status == WaitStatus::StillAlive {
                    break;
                }
                continue;
            };
            if Some(pid) == self.cmd {
                self.cmd = None;
                if !self.last_phase {
                    self.set_code(code);
                }
            } else if Some(pid) == self.svscan {
                self.svscan = None;
                if !self.stopping {
                    msg::fatal(format_args!(
                        "s6-svscan (pid {pid}) ended ({}): the slots are no longer supervised; stopping the container",
                        ended_how(status)
                    ));
                    self.set_code(i32::from(exit::SYSTEM));
                    self.stopping = true;
                }
            } else if Some(pid) == self.waiting {
                self.ended = Some(code);
            }
        }
    }

    /// Waits for a signal or a child's end, at most until `deadline`;
    /// reaps, and acts on stop signals (`forward`: to the CMD).
    fn pause(&mut self, deadline: Option<Instant>, forward: bool) {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let timeout = left.map_or(PollTimeout::NONE, |l| {
            PollTimeout::try_from(l.min(Duration::from_secs(60))).unwrap_or(PollTimeout::MAX)
        });
        let mut fds = [PollFd::new(self.sigfd.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, timeout);
        while let Ok(Some(info)) = self.sigfd.read_signal() {
            let Ok(sig) = Signal::try_from(info.ssi_signo as i32) else {
                continue;
            };
            match sig {
                Signal::SIGCHLD => {}
                Signal::SIGUSR1 => self.stopping = true,
                s if STOPS.contains(&s) => match self.cmd {
                    Some(cmd) if forward && !self.stopping => {
                        let _ = kill(cmd, s);
                    }
                    _ => self.stopping = true,
                },
                _ => {}
            }
        }
        self.reap();
    }

    /// Runs `hook` to its end (at most `limit`, then KILL), reaping and
    /// noting stops meanwhile; its exit code.
    fn run(&mut self, hook: &Path, limit: Option<Duration>, env: &[(&str, String)]) -> i32 {
        let child = super::unblocked(hook)
            .stdin(Stdio::null())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .spawn();
        let pid = match child {
            Ok(c) => Pid::from_raw(c.id() as i32),
            Err(e) => {
                msg::warn(format_args!(
                    "unable to run {}: {}",
                    hook.display(),
                    strerror(&e)
                ));
                return i32::from(exit::CANNOT_EXECUTE);
            }
        };
        let deadline = limit.map(|l| Instant::now() + l);
        self.waiting = Some(pid);
        self.ended = None;
        let mut killed = false;
        let code = loop {
            if let Some(code) = self.ended.take() {
                break code;
            }
            if !killed && deadline.is_some_and(|d| Instant::now() >= d) {
                msg::warn(format_args!(
                    "{} still runs after {} ms: killed",
                    hook.display(),
                    limit.unwrap_or_default().as_millis()
                ));
                // KILL cannot be refused: its end comes.
                let _ = kill(pid, Signal::SIGKILL);
                killed = true;
            }
            self.pause(deadline.filter(|_| !killed), false);
        };
        self.waiting = None;
        code
    }
}

fn ended_how(status: WaitStatus) -> String {
    match status {
        WaitStatus::Signaled(_, sig, _) => format!("killed by {}", sig.as_str()),
        WaitStatus::Exited(_, code) => format!("exit code {code}"),
        other => format!("{other:?}"),
    }
}

/// Every process below `me` now, found from `/proc` (not all are our
/// children: a slot's program is s6-supervise's).
fn descendants(me: i32) -> Vec<i32> {
    let all = crate::lifeline::identity::processes();
    let below = crate::lifeline::identity::with_descendants(&all, [me].into());
    (all.iter())
        .filter(|p| p.pid != me && below.contains(&p.pid))
        .filter(|p| p.state != 'Z' && p.state != 'X')
        .map(|p| p.pid)
        .collect()
}

/// The whole portable run; the container's exit code.
pub fn run(argv: Vec<OsString>, why: &str) -> i32 {
    let me = std::process::id();
    let (mut tree, scandir, run_dir) = match start(why, me) {
        Ok(t) => t,
        Err(f) => {
            msg::fatal(&f);
            return i32::from(f.code);
        }
    };
    let control = scandir.join(".s6-svscan/control");
    // Each look reaps and reads the signals that came meanwhile.
    let listening = crate::clock::poll_by(Instant::now() + SVSCAN_START, LOOK_EVERY, || {
        tree.pause(Some(Instant::now()), false);
        tree.svscan.is_none() || crate::s6::control::listening(&control)
    });
    if !listening || tree.svscan.is_none() {
        msg::fatal(format_args!(
            "s6-svscan did not start on {} within {} s",
            scandir.display(),
            SVSCAN_START.as_secs()
        ));
        tree.stopping = true;
        tree.set_code(i32::from(exit::SYSTEM));
        return end(&mut tree, me);
    }
    if !tree.stopping {
        boot(&mut tree, &scandir, &run_dir);
    }
    if !tree.stopping {
        // The CMD, carried out by svkit-wrap as under s6-overlay (its
        // child: a foreground command keeps svkit-wrap's pid, a redirect's
        // keep-alive too).
        let mut wrap = Command::new("/proc/self/exe");
        match wrap.arg0("svkit-wrap").arg("--").args(&argv).spawn() {
            Ok(c) => tree.cmd = Some(Pid::from_raw(c.id() as i32)),
            Err(e) => {
                msg::fatal(format_args!("unable to run svkit-wrap: {}", strerror(&e)));
                tree.set_code(i32::from(exit::SYSTEM));
                tree.stopping = true;
            }
        }
    }
    let forward = container::s6_number("S6_CMD_RECEIVE_SIGNALS").is_some_and(|n| n > 0);
    while !tree.stopping && tree.cmd.is_some() {
        tree.pause(None, forward);
    }
    end(&mut tree, me)
}

/// Everything up to a running s6-svscan: signals read from a signalfd,
/// the reaper of orphans, a fresh run dir and scandir (returned), the
/// environment of what it starts.
fn start(why: &str, me: u32) -> Result<(Tree, PathBuf, PathBuf), Fatal> {
    let mask: SigSet = STOPS
        .into_iter()
        .chain([Signal::SIGCHLD, Signal::SIGUSR1])
        .collect();
    let errno = |what: &'static str| move |e: nix::errno::Errno| Fatal::system(what, e.desc());
    mask.thread_block()
        .map_err(errno("unable to block signals"))?;
    let flags = SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK;
    let sigfd = SignalFd::with_flags(&mask, flags).map_err(errno("unable to read signals"))?;
    // Its name is what svctl and the hooks recognise it by, also when run
    // as `svkit svkit-init` (whose name would be the binary's).
    let _ = nix::sys::prctl::set_name(c"svkit-init");
    if me != 1 {
        nix::sys::prctl::set_child_subreaper(true).map_err(errno(
            "unable to become the reaper of orphans (PR_SET_CHILD_SUBREAPER)",
        ))?;
    }
    let svscan = container::find_program(&container::s6_tool("s6-svscan")).ok_or_else(|| {
        Fatal::new(
            exit::NOT_OK,
            "no s6-svscan: svkit-init supervises with s6's own tools; install s6-overlay, or a distribution's s6 package (Debian: apt-get install s6)",
            "",
        )
    })?;
    msg::info(format_args!(
        "{why}: supervising with s6-svscan under svkit-init"
    ));
    let run_dir = match std::env::var(RUN_DIR_ENV).ok().filter(|v| !v.is_empty()) {
        Some(d) => stages::choose(&[Path::new(&d)]),
        None => stages::choose(&RUN_DIRS.map(Path::new)),
    };
    let run_dir = run_dir.map_err(|why| Fatal::new(exit::NOT_OK, stages::no_place(&why), ""))?;
    let scandir =
        container::setting("SVKIT_SCANDIR").map_or_else(|| run_dir.join("service"), PathBuf::from);
    stages::fresh(&run_dir, &scandir)
        .map_err(|e| Fatal::system(format!("unable to prepare {}", run_dir.display()), e))?;
    set_env(&run_dir, me);
    let record = run_dir.join(container::INIT_RECORD);
    stages::record(&run_dir, me)
        .map_err(|e| Fatal::io(format!("unable to write {}", record.display()), &e))?;
    let rc = stages::rc_user_services(Path::new(RC_SOURCES));
    if !rc.is_empty() {
        return Err(Fatal::new(exit::NOT_OK, format!(
            "s6-rc services cannot run without s6-overlay's /init ({} in {RC_SOURCES}): run the image as PID 1 with s6-overlay, or convert them to svkit slots (svctl import s6 {RC_SOURCES}; docs/import.md)",
            rc.join(", ")
        ), ""));
    }
    let child = super::unblocked(&svscan)
        .arg(&scandir)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Fatal::io(format!("unable to run {}", svscan.display()), &e))?;
    let tree = Tree {
        sigfd,
        results: run_dir.join(RESULTS_DIR),
        svscan: Some(Pid::from_raw(child.id() as i32)),
        cmd: None,
        waiting: None,
        ended: None,
        stopping: false,
        last_phase: false,
    };
    Ok((tree, scandir, run_dir))
}

/// What every process svkit-init starts inherits: where the tree is, who
/// to halt, s6-overlay's `with-contenv` told to keep this environment
/// (no dump of it exists), and s6's tools on `PATH`.
fn set_env(run_dir: &Path, me: u32) {
    std::env::set_var(RUN_DIR_ENV, run_dir);
    std::env::set_var(INIT_PID_ENV, me.to_string());
    std::env::set_var("S6_KEEP_ENV", "1");
    let Some(bin) = container::s6_bin_dir().map(PathBuf::from) else {
        return;
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if !dirs.contains(&bin) {
        if let Ok(joined) = std::env::join_paths([bin].into_iter().chain(dirs)) {
            std::env::set_var("PATH", joined);
        }
    }
}

/// cont-init hooks, then the legacy services, as s6-overlay's stage 2.
fn boot(tree: &mut Tree, scandir: &Path, run_dir: &Path) {
    let mut failed = Vec::new();
    for hook in stages::hooks(Path::new(CONT_INIT)) {
        let code = tree.run(&hook, None, &[]);
        if code != 0 {
            failed.push(format!("{} exited {code}", hook.display()));
        }
        if tree.stopping {
            return;
        }
    }
    if !failed.is_empty() {
        let behaviour = container::s6_number("S6_BEHAVIOUR_IF_STAGE2_FAILS").unwrap_or(0);
        if behaviour >= 1 {
            msg::warn(format_args!("cont-init: {}", failed.join(", ")));
        }
        if behaviour >= 2 {
            msg::fatal("a cont-init hook failed and S6_BEHAVIOUR_IF_STAGE2_FAILS=2: stopping the container");
            tree.set_code(i32::from(exit::NOT_OK));
            tree.stopping = true;
            return;
        }
    }
    let copies = run_dir.join("s6/legacy-services");
    let copied = fs::create_dir_all(&copies)
        .and_then(|()| stages::copy_services(Path::new(SERVICES), &copies, scandir));
    match copied {
        Ok(names) if names.is_empty() => {}
        Ok(_) => {
            if let Err(e) = crate::s6::control::svscanctl(scandir, "-a") {
                msg::warn(format_args!("unable to rescan {}: {e}", scandir.display()));
            }
        }
        Err(e) => msg::warn(format_args!(
            "unable to copy {SERVICES} into {}: {}",
            scandir.display(),
            strerror(&e)
        )),
    }
}

/// The end: cont-finish hooks (each bounded by `S6_KILL_FINISH_MAXTIME`
/// when set), the tree's stop (s6-svscan brings every slot down and waits
/// for its supervisors, `S6_SERVICES_GRACETIME`), then TERM to what is
/// left and KILL after `S6_KILL_GRACETIME`, only while something is.
fn end(tree: &mut Tree, me: u32) -> i32 {
    tree.stopping = true;
    let limit = env_ms("S6_KILL_FINISH_MAXTIME", 0);
    let limit = (!limit.is_zero()).then_some(limit);
    let cmd_env: Vec<(&str, String)> = tree
        .cmd
        .map(|p| vec![(CMD_PID_ENV, p.to_string())])
        .unwrap_or_default();
    for hook in stages::hooks(Path::new(CONT_FINISH)) {
        tree.run(&hook, limit, &cmd_env);
    }
    if let Some(svscan) = tree.svscan {
        let _ = kill(svscan, Signal::SIGTERM);
        let deadline = Instant::now() + env_ms("S6_SERVICES_GRACETIME", 3000);
        while tree.svscan.is_some() && Instant::now() < deadline {
            tree.pause(Some(deadline), false);
        }
    }
    tree.last_phase = true;
    let me = me as i32;
    let left = descendants(me);
    if !left.is_empty() {
        for pid in left.into_iter().map(Pid::from_raw) {
            let _ = kill(pid, Signal::SIGTERM);
            let _ = kill(pid, Signal::SIGCONT);
        }
        let deadline = Instant::now() + env_ms("S6_KILL_GRACETIME", 3000);
        crate::clock::poll_by(deadline, LOOK_EVERY, || {
            tree.reap();
            descendants(me).is_empty()
        });
        for pid in descendants(me) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    tree.reap();
    tree.code()
}
