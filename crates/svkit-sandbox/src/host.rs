//! The host side: start a sandbox and watch it to the end (foreground or
//! as a detached monitor), and the verbs that act on a running one.

use crate::layout::{self, Layout, Spec};
use crate::sig::set_of;
use anyhow::{bail, Context, Result};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Exit code for failures of the sandbox itself, as `docker run` uses it.
pub const EXIT_SANDBOX: i32 = 125;
const START_DEADLINE: Duration = Duration::from_secs(60);
const STOP_DEADLINE: Duration = Duration::from_secs(60);

pub fn run(spec: Spec) -> Result<i32> {
    let layout = Layout::new(&spec.id);
    layout.create(&spec)?;
    if !spec.detached {
        let code = supervise(&layout);
        layout.remove_all()?;
        return code;
    }
    let log = fs::File::create(layout.log()).context("unable to create the log")?;
    let mut monitor = Command::new(std::env::current_exe()?);
    monitor
        .arg("__monitor")
        .arg(&layout.dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    // SAFETY: setsid is async-signal-safe; the monitor must outlive us and
    // stay out of our terminal's signals.
    unsafe {
        monitor.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(Into::into));
    }
    let mut child = monitor.spawn().context("unable to start the monitor")?;
    let started = layout.results().join("started");
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        if started.exists() || (spec.cmd.is_empty() && init_is_svscan(&layout)) {
            println!("{}", spec.id);
            return Ok(0);
        }
        if let Ok(Some(st)) = child.try_wait() {
            let log = fs::read_to_string(layout.log()).unwrap_or_default();
            eprint!("{log}");
            let _ = layout.remove_all();
            bail!("sandbox {} ended before CMD started ({st})", spec.id);
        }
        if Instant::now() > deadline {
            bail!(
                "sandbox {} did not start CMD within {:?}",
                spec.id,
                START_DEADLINE
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// s6-overlay's stage 1 has made s6-svscan the container's PID 1.
fn init_is_svscan(layout: &Layout) -> bool {
    init_pid(layout)
        .and_then(|pid| fs::read_to_string(format!("/proc/{pid}/comm")).ok())
        .is_some_and(|comm| comm.trim() == "s6-svscan")
}

/// `__monitor DIR`: the detached sandbox's parent, which keeps its exit code.
pub fn monitor(dir: &Path) -> Result<i32> {
    let layout = Layout::at(dir);
    let code = supervise(&layout)?;
    // Whole or not at all: a waiter polls for the file and reads it at once.
    let tmp = layout.exitcode().with_extension("tmp");
    fs::write(&tmp, format!("{code}\n"))?;
    fs::rename(&tmp, layout.exitcode())?;
    Ok(code)
}

/// Boots the namespaces and waits for them to end, forwarding SIGINT and
/// SIGTERM to the sandbox's PID 1 (which halts it like `docker stop`).
fn supervise(layout: &Layout) -> Result<i32> {
    let sigs = set_of(&[
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ]);
    sigs.thread_block().context("unable to block signals")?;
    fs::write(layout.monitor_pid_file(), std::process::id().to_string())?;
    let me = std::env::current_exe().context("unable to find the sandbox binary")?;
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--mount",
        "--pid",
        "--uts",
        "--ipc",
        "--net",
        "--fork",
        "--kill-child=SIGKILL",
        "--propagation",
        "private",
        "--",
    ])
    .arg(me)
    .arg("__boot")
    .arg(&layout.dir)
    .stdin(Stdio::null());
    // SAFETY: prctl and setpgid are async-signal-safe. If we die, unshare
    // dies, and --kill-child takes the whole PID namespace with it. Its own
    // process group keeps a terminal's ^C for us to turn into a clean halt.
    unsafe {
        cmd.pre_exec(|| {
            SigSet::empty().thread_set_mask()?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
            Ok(())
        });
    }
    let child = cmd.spawn().context("unable to run unshare")?;
    let unshare = Pid::from_raw(child.id() as i32);
    let status = loop {
        match waitpid(unshare, Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {}
            Ok(st) => break st,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e).context("unable to wait for the sandbox"),
        }
        match sigs.wait() {
            Ok(Signal::SIGCHLD) | Err(_) => {}
            Ok(_) => {
                if let Some(init) = layout.read_pid(&layout.init_pid_file()) {
                    let _ = kill(Pid::from_raw(init), Signal::SIGTERM);
                }
            }
        }
    };
    layout.remove_runtime();
    // unshare passes on its child's end: the container's PID 1, which
    // s6-overlay's stage 4 ends with the container's exit code.
    match status {
        WaitStatus::Exited(_, code) => Ok(code),
        WaitStatus::Signaled(_, sig, _) => Ok(128 + sig as i32),
        st => bail!("sandbox ended without an exit code ({st:?})"),
    }
}

fn running_layout(id: &str) -> Result<Layout> {
    layout::check_id(id)?;
    let layout = Layout::new(id);
    if !layout.dir.is_dir() {
        bail!("no such sandbox: {id}");
    }
    Ok(layout)
}

fn init_pid(layout: &Layout) -> Option<i32> {
    layout
        .read_pid(&layout.init_pid_file())
        .filter(|p| layout::alive(*p))
}

/// `exec ID [--user U] [--env K=V]... -- CMD...`: docker exec. Joins the
/// sandbox's namespaces and root, takes Docker's capability set, and runs
/// CMD as a child (joining a PID namespace takes effect for children).
pub fn exec(
    id: &str,
    user: Option<&str>,
    env: &[(String, String)],
    argv: &[String],
) -> Result<i32> {
    let layout = running_layout(id)?;
    let spec = layout.read_spec()?;
    let Some(init) = init_pid(&layout) else {
        bail!("sandbox {id} is not running");
    };
    let proc_dir = format!("/proc/{init}");
    let root = fs::File::open(format!("{proc_dir}/root"))
        .with_context(|| format!("unable to open the root of sandbox {id}"))?;
    let mut namespaces = Vec::new();
    for ns in ["ipc", "uts", "net", "pid", "mnt"] {
        let f = fs::File::open(format!("{proc_dir}/ns/{ns}"))
            .with_context(|| format!("unable to open the {ns} namespace of sandbox {id}"))?;
        namespaces.push((ns, f));
    }
    for (ns, f) in &namespaces {
        nix::sched::setns(f, nix::sched::CloneFlags::empty())
            .with_context(|| format!("unable to join the {ns} namespace of sandbox {id}"))?;
    }
    nix::unistd::fchdir(std::os::fd::AsRawFd::as_raw_fd(&root))
        .context("unable to enter the sandbox's root")?;
    nix::unistd::chroot(".").context("unable to chroot into the sandbox")?;
    std::env::set_current_dir("/").context("unable to chdir to /")?;
    crate::caps::restrict_to_docker_default()?;

    let mut cmd = match user {
        Some(user) => {
            let mut c = Command::new("s6-setuidgid");
            c.arg(user).args(argv);
            c
        }
        None => {
            let Some((prog, args)) = argv.split_first() else {
                bail!("exec needs a command");
            };
            let mut c = Command::new(prog);
            c.args(args);
            c
        }
    };
    cmd.env_clear()
        .env("PATH", crate::boot::DEFAULT_PATH)
        .env("HOSTNAME", &spec.id);
    if user.is_none() {
        cmd.env("HOME", "/root");
    }
    for (k, v) in spec.env.iter().chain(env) {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .with_context(|| format!("unable to run {}", argv.join(" ")))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// `stop ID`: SIGTERM to PID 1 (a clean halt), wait for the end, print the
/// exit code, forget the sandbox.
pub fn stop(id: &str) -> Result<i32> {
    let layout = running_layout(id)?;
    let monitor = layout.read_pid(&layout.monitor_pid_file());
    if let Some(init) = init_pid(&layout) {
        kill(Pid::from_raw(init), Signal::SIGTERM).context("unable to signal the sandbox")?;
    }
    let deadline = Instant::now() + STOP_DEADLINE;
    while monitor.is_some_and(layout::alive) {
        if Instant::now() > deadline {
            if let Some(init) = init_pid(&layout) {
                let _ = kill(Pid::from_raw(init), Signal::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = fs::read_to_string(layout.exitcode())
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    layout.remove_all()?;
    match code {
        Some(code) => {
            println!("{code}");
            Ok(0)
        }
        None => bail!("sandbox {id} ended without an exit code"),
    }
}

pub fn ps() -> Result<i32> {
    println!("{:<14} {:<8} COMMAND", "ID", "STATE");
    for id in layout::list_ids() {
        let layout = Layout::new(&id);
        let Ok(spec) = layout.read_spec() else {
            continue;
        };
        let state = match fs::read_to_string(layout.exitcode()) {
            Ok(code) => format!("exited({})", code.trim()),
            Err(_) if init_pid(&layout).is_some() => "running".to_string(),
            Err(_) => "gone".to_string(),
        };
        println!("{:<14} {:<8} {}", id, state, spec.cmd.join(" "));
    }
    Ok(0)
}

pub fn logs(id: &str) -> Result<i32> {
    let layout = running_layout(id)?;
    let text = fs::read(layout.log()).context("no log: only detached sandboxes keep one")?;
    use std::io::Write;
    std::io::stdout().write_all(&text)?;
    Ok(0)
}
