//! Stage 2 and stage 3, run inside the sandbox as a child of PID 1, the way
//! s6-overlay's `rc.init` and `halt` are: cont-init hooks, legacy services,
//! the CMD; then on CMD exit or a stop request, record the exit code, run
//! cont-finish hooks, and bring the supervision tree down.

use crate::boot::DEFAULT_PATH;
use crate::sig::{set_of, unblock_in_child};
use anyhow::{Context, Result};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const STAGE2_PID: &str = "/run/s6/basedir/stage2.pid";
const CMD_PID: &str = "/run/s6/basedir/cmd.pid";
const CMD_FILE: &str = "/run/s6/basedir/cmd.json";
const RESULTS: &str = "/run/s6-linux-init-container-results";
const SCANDIR: &str = "/run/service";
const CONTAINER_ENV: &str = "/run/s6/container_environment";
/// How s6-overlay's stage 2 script names itself in its messages.
const RC_INIT: &str = "/run/s6/basedir/scripts/rc.init";
/// s6-overlay's S6_KILL_GRACETIME default: TERM, then KILL after this.
const KILL_GRACE: Duration = Duration::from_millis(3000);
/// s6-overlay's S6_KILL_FINISH_MAXTIME default, per cont-finish hook.
const FINISH_MAXTIME: Duration = Duration::from_millis(5000);
/// How long the tree may take to come down before everything is killed.
const TREE_GRACE: Duration = Duration::from_secs(10);

fn halt_signals() -> SigSet {
    set_of(&[
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ])
}

pub fn stage2() -> Result<i32> {
    let sigs = halt_signals();
    sigs.thread_block().context("unable to block signals")?;
    fs::write(STAGE2_PID, std::process::id().to_string()).context("unable to write stage2.pid")?;
    // Our stdin is s6-svscan's readiness pipe: one newline once it scans.
    let mut byte = [0u8; 1];
    let _ = std::io::stdin().read(&mut byte);

    let behaviour = match run_hooks("cont-init", Path::new("/etc/cont-init.d"), None) {
        true => 0,
        false => stage2_fail_behaviour(),
    };
    if behaviour >= 1 {
        eprintln!("cont-init: warning: some scripts exited nonzero");
    }
    let code = if behaviour >= 2 {
        eprintln!("{RC_INIT}: warning: s6-rc failed to properly bring all the services up!");
        eprintln!("{RC_INIT}: fatal: stopping the container.");
        // What s6-rc's failed change exits with, and rc.init halts with.
        1
    } else {
        link_legacy_services();
        run_cmd(&sigs)?
    };
    let _ = fs::write(Path::new(RESULTS).join("exitcode"), format!("{code}\n"));
    stage3();
    Ok(code)
}

/// Runs every executable in `dir` in name order, reporting like s6-overlay,
/// and says whether all exited 0. A failing hook does not stop the others.
fn run_hooks(what: &str, dir: &Path, limit: Option<Duration>) -> bool {
    let Ok(rd) = fs::read_dir(dir) else {
        return true;
    };
    let mut all_ok = true;
    let mut hooks: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    hooks.sort();
    for hook in hooks {
        let executable = hook
            .metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if !executable {
            continue;
        }
        eprintln!("{what}: info: running {}", hook.display());
        let child = unblock_in_child(&mut Command::new(&hook))
            .env_clear()
            .env("PATH", DEFAULT_PATH)
            .stdin(Stdio::null())
            .spawn();
        let code = match child {
            Ok(child) => wait_bounded(child, limit),
            Err(e) => {
                eprintln!("{what}: warning: unable to run {}: {e}", hook.display());
                all_ok = false;
                continue;
            }
        };
        eprintln!("{what}: info: {} exited {code}", hook.display());
        all_ok &= code == 0;
    }
    all_ok
}

/// s6-overlay's `S6_BEHAVIOUR_IF_STAGE2_FAILS`, read from the container
/// env as its scripts read it: 0 (also when unset or not a number) goes on
/// silently, 1 goes on with a warning, 2 or more stops the container
/// before the services and the CMD.
fn stage2_fail_behaviour() -> u32 {
    fs::read_to_string(Path::new(CONTAINER_ENV).join("S6_BEHAVIOUR_IF_STAGE2_FAILS"))
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn wait_bounded(mut child: std::process::Child, limit: Option<Duration>) -> i32 {
    if let Some(limit) = limit {
        let pid = Pid::from_raw(child.id() as i32);
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            let _ = kill(pid, Signal::SIGKILL);
        });
    }
    match child.wait() {
        Ok(st) => exit_code(st),
        Err(_) => 111,
    }
}

fn exit_code(st: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0))
}

/// `/etc/services.d/NAME` is copied under /run/s6 and linked into the scandir.
fn link_legacy_services() {
    let Ok(rd) = fs::read_dir("/etc/services.d") else {
        return;
    };
    let legacy = Path::new("/run/s6/legacy-services");
    let _ = fs::create_dir_all(legacy);
    for entry in rd.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        let copy = legacy.join(&name);
        let ok = Command::new("cp")
            .arg("-a")
            .arg(entry.path())
            .arg(&copy)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok || symlink(&copy, Path::new(SCANDIR).join(&name)).is_err() {
            eprintln!(
                "services-up: warning: unable to link {}",
                entry.path().display()
            );
        }
    }
    let _ = Command::new("s6-svscanctl").args(["-a", SCANDIR]).status();
}

fn run_cmd(sigs: &SigSet) -> Result<i32> {
    let argv: Vec<String> = serde_json::from_slice(&fs::read(CMD_FILE)?)?;
    let Some((prog, args)) = argv.split_first() else {
        // No CMD: like s6-overlay, stay up until told to stop.
        let _ = fs::write(Path::new(RESULTS).join("started"), "");
        loop {
            if matches!(sigs.wait(), Ok(s) if s != Signal::SIGCHLD) {
                return Ok(0);
            }
        }
    };
    let child = unblock_in_child(&mut Command::new(prog))
        .args(args)
        .env_clear()
        .env("PATH", DEFAULT_PATH)
        .stdin(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("svkit-sandbox: fatal: unable to exec {prog}: {e}");
            let _ = fs::write(Path::new(RESULTS).join("started"), "");
            return Ok(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let pid = Pid::from_raw(child.id() as i32);
    let _ = fs::write(CMD_PID, pid.to_string());
    let _ = fs::write(Path::new(RESULTS).join("started"), "");
    let mut stopping = false;
    loop {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Ok(128 + sig as i32),
            Ok(_) => {}
            Err(e) => return Err(e).context("unable to wait for CMD"),
        }
        match sigs.wait() {
            Ok(Signal::SIGCHLD) | Err(_) => {}
            Ok(_) if !stopping => {
                stopping = true;
                eprintln!("svkit-sandbox: info: stop requested, sending SIGTERM to CMD");
                let _ = kill(pid, Signal::SIGTERM);
                std::thread::spawn(move || {
                    std::thread::sleep(KILL_GRACE);
                    let _ = kill(pid, Signal::SIGKILL);
                });
            }
            Ok(_) => {}
        }
    }
}

/// Stage 3: cont-finish hooks, then the tree comes down with loggers
/// draining (s6-svscanctl -t); whatever is still alive after a grace is
/// killed so the sandbox always ends.
fn stage3() {
    run_hooks(
        "cont-finish",
        Path::new("/etc/cont-finish.d"),
        Some(FINISH_MAXTIME),
    );
    let _ = Command::new("s6-svscanctl").args(["-t", SCANDIR]).status();
    std::thread::sleep(TREE_GRACE);
    let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
}

/// `/run/s6/basedir/bin/halt`: ask stage 2 to stop the container.
pub fn halt() -> Result<()> {
    let pid = fs::read_to_string(STAGE2_PID)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    match pid {
        Some(pid) if kill(Pid::from_raw(pid), Signal::SIGTERM).is_ok() => Ok(()),
        _ => {
            // Stage 2 is gone or not up yet: end the tree directly.
            Command::new("s6-svscanctl")
                .args(["-t", SCANDIR])
                .status()
                .context("unable to run s6-svscanctl")?;
            Ok(())
        }
    }
}
