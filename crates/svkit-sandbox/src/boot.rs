//! Inside the new namespaces, as their PID 1: build the container's root
//! (the image's layers over the host's `/`, read-only), make it look like
//! what Docker hands a container, then exec s6-overlay's own `/init`.

use crate::layout::{Layout, Spec};
use anyhow::{bail, Context, Result};
use nix::mount::{mount, MsFlags};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The PATH of the demo image (`ENV PATH` in the Dockerfile): `/command`
/// first, so `exec` reaches the s6 binaries as `docker exec` does.
pub const DEFAULT_PATH: &str =
    "/command:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where the sandbox's own files sit inside: its binary (which marks the
/// CMD's start) and the results dir shared with the host.
pub const INSIDE_DIR: &str = "/.svkit-sandbox";

pub fn boot(dir: &Path) -> Result<()> {
    let layout = Layout::at(dir);
    let spec = layout.read_spec()?;
    // The host's /proc is still mounted here, so /proc/self names our host
    // pid: `exec` and `stop` need it to find the namespaces.
    let host_pid = fs::read_link("/proc/self").context("unable to read /proc/self")?;
    fs::write(
        layout.init_pid_file(),
        host_pid.as_os_str().as_encoded_bytes(),
    )
    .context("unable to record the init pid")?;

    let root = layout.merged();
    mount_tree(&layout, &spec, &root)?;
    populate(&spec, &root)?;
    loopback_up()?;
    nix::unistd::sethostname(&spec.id).context("unable to set the hostname")?;

    nix::unistd::chroot(&root).context("unable to chroot")?;
    std::env::set_current_dir("/").context("unable to chdir to /")?;
    crate::caps::restrict_to_docker_default()?;

    // Docker's CMD here is our marker, which says "started" and execs the
    // real CMD: `run --detach` returns once cont-init is done, as tests
    // expect of a booted container.
    close_inherited()?;
    default_signals()?;
    let mut cmd = Command::new("/init");
    if !spec.cmd.is_empty() {
        cmd.arg(format!("{INSIDE_DIR}/svkit-sandbox"))
            .arg("__started")
            .arg(format!("{INSIDE_DIR}/results/started"))
            .arg("--")
            .args(&spec.cmd);
    }
    cmd.env_clear()
        .env("PATH", DEFAULT_PATH)
        .env("HOSTNAME", &spec.id)
        .env("HOME", "/root")
        .envs(spec.env.iter().map(|(k, v)| (k, v)));
    let err = cmd.exec();
    bail!("unable to exec /init: {err}")
}

/// Docker hands a container stdin, stdout and stderr only: every other fd
/// this process inherited (a build tool's jobserver pipe, say) is closed
/// at the exec. s6-overlay's /init reads fd 3 for a readiness
/// notification, so an inherited pipe there would block the boot forever.
fn close_inherited() -> Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let fds: Vec<i32> = fs::read_dir("/proc/self/fd")
        .context("unable to list /proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // The listing's own fd is gone by now (EBADF): nothing to close.
        match fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)) {
            Ok(_) | Err(nix::errno::Errno::EBADF) => {}
            Err(e) => bail!("unable to close fd {fd} at exec: {e}"),
        }
    }
    Ok(())
}

/// A container starts with every signal at its default action and none
/// blocked, whatever the process that ran `docker run` ignored: a test
/// run under `nohup` (SIGHUP ignored, and ignored signals survive exec)
/// must not hand a slot a program deaf to its `down_signal`.
fn default_signals() -> Result<()> {
    use nix::sys::signal::{
        sigaction, sigprocmask, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal,
    };
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for sig in Signal::iterator().filter(|s| !matches!(s, Signal::SIGKILL | Signal::SIGSTOP)) {
        // SAFETY: SIG_DFL installs no handler: no code of ours can run in
        // a signal's context, and the exec that follows keeps only this.
        unsafe { sigaction(sig, &default) }
            .with_context(|| format!("unable to reset {sig} to its default"))?;
    }
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
        .context("unable to unblock signals")
}

/// The container's writable layer lives on a tmpfs of this mount namespace
/// and starts as s6-overlay's tree (what extracting its tarballs into an
/// image leaves), over the host's `/`. The tree cannot be a lower layer of
/// its own: it sits under `/`, and overlayfs refuses nested lower layers.
fn mount_tree(layout: &Layout, spec: &Spec, root: &Path) -> Result<()> {
    let rw = layout.rw();
    tmpfs(&rw, "mode=0700")?;
    let (upper, work) = (rw.join("upper"), rw.join("work"));
    for d in [&upper, &work] {
        fs::create_dir(d).with_context(|| format!("unable to create {}", d.display()))?;
    }
    fs::set_permissions(&upper, fs::Permissions::from_mode(0o755))?;
    copy_layer(&spec.s6_overlay_tree, &upper)?;
    let opts = format!(
        "lowerdir=/,upperdir={},workdir={}",
        upper.display(),
        work.display()
    );
    let none: Option<&str> = None;
    mount(
        Some("overlay"),
        root,
        Some("overlay"),
        MsFlags::empty(),
        Some(opts.as_str()),
    )
    .context("unable to mount the overlay")?;
    mount(
        Some("proc"),
        &root.join("proc"),
        Some("proc"),
        MsFlags::empty(),
        none,
    )
    .context("unable to mount /proc")?;
    dev(root)?;
    let ro = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("sysfs"), &root.join("sys"), Some("sysfs"), ro, none)
        .context("unable to mount /sys")?;
    // The host's /run and /tmp must not show through the lower layer: an
    // image brings them empty.
    tmpfs(&root.join("run"), "mode=0755")?;
    tmpfs(&root.join("tmp"), "mode=1777")?;
    let results = root
        .join(INSIDE_DIR.trim_start_matches('/'))
        .join("results");
    fs::create_dir_all(&results)?;
    mount(
        Some(&layout.results()),
        &results,
        none,
        MsFlags::MS_BIND,
        none,
    )
    .context("unable to bind the results dir")?;
    for (host, inside) in &spec.volumes {
        let target = root.join(inside.strip_prefix("/").unwrap_or(inside));
        fs::create_dir_all(&target)
            .with_context(|| format!("unable to create volume mount point {}", inside.display()))?;
        mount(Some(host), &target, none, MsFlags::MS_BIND, none)
            .with_context(|| format!("unable to bind volume {}", host.display()))?;
    }
    Ok(())
}

fn tmpfs(at: &Path, opts: &str) -> Result<()> {
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(Some("tmpfs"), at, Some("tmpfs"), flags, Some(opts))
        .with_context(|| format!("unable to mount a tmpfs on {}", at.display()))
}

/// A `/dev` like Docker's: a tmpfs with the usual nodes bound from the
/// host's, a private devpts and shm, and the fd links.
fn dev(root: &Path) -> Result<()> {
    let dev = root.join("dev");
    let none: Option<&str> = None;
    mount(
        Some("tmpfs"),
        &dev,
        Some("tmpfs"),
        MsFlags::MS_NOSUID,
        Some("mode=0755"),
    )
    .context("unable to mount /dev")?;
    for node in ["null", "zero", "full", "random", "urandom", "tty"] {
        let target = dev.join(node);
        fs::write(&target, b"").with_context(|| format!("unable to create /dev/{node}"))?;
        mount(
            Some(&Path::new("/dev").join(node)),
            &target,
            none,
            MsFlags::MS_BIND,
            none,
        )
        .with_context(|| format!("unable to bind /dev/{node}"))?;
    }
    for d in ["pts", "shm"] {
        fs::create_dir(dev.join(d))?;
    }
    mount(
        Some("devpts"),
        &dev.join("pts"),
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .context("unable to mount /dev/pts")?;
    tmpfs(&dev.join("shm"), "mode=1777")?;
    for (name, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ] {
        symlink(to, dev.join(name))?;
    }
    Ok(())
}

/// The private network namespace has only `lo`, down: bring it up, as
/// `docker run --network none` does.
fn loopback_up() -> Result<()> {
    let st = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()
        .context("unable to run ip (install iproute2)")?;
    if !st.success() {
        bail!("unable to bring lo up ({st})");
    }
    Ok(())
}

/// The workspace binaries first, then the image's rootfs dirs over them
/// (an image's own `/usr/local/bin/app` wins), then the sandbox's marker.
fn populate(spec: &Spec, root: &Path) -> Result<()> {
    copy_binaries(&spec.bin_dir, &root.join("usr/local/bin"))?;
    for dir in &spec.rootfs {
        copy_layer(dir, root)?;
    }
    let me = std::env::current_exe().context("unable to find the sandbox binary")?;
    install(
        &me,
        &root
            .join(INSIDE_DIR.trim_start_matches('/'))
            .join("svkit-sandbox"),
    )
}

/// Copies what a rootfs dir holds, never the dir itself: its own mode and
/// owner (a `mktemp -d` is 0700) must not land on `/`.
fn copy_layer(dir: &Path, root: &Path) -> Result<()> {
    let rd = fs::read_dir(dir).with_context(|| format!("unable to read {}", dir.display()))?;
    let mut cp = Command::new("cp");
    cp.arg("-a");
    let mut any = false;
    for entry in rd {
        let entry = entry.with_context(|| format!("unable to read {}", dir.display()))?;
        cp.arg(entry.path());
        any = true;
    }
    if !any {
        return Ok(());
    }
    let status = cp.arg(root).status().context("unable to run cp")?;
    if !status.success() {
        bail!("unable to copy rootfs {}", dir.display());
    }
    Ok(())
}

/// Release binaries of the workspace: executables without a dot in the name
/// (cargo's target dir also holds `.d` files and libraries).
fn copy_binaries(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    let rd = fs::read_dir(from).with_context(|| format!("unable to read {}", from.display()))?;
    for entry in rd.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        if name.contains('.') || name == "svkit-sandbox" || !meta.is_file() {
            continue;
        }
        if meta.permissions().mode() & 0o111 != 0 {
            install(&entry.path(), &to.join(name))?;
        }
    }
    link_tools(to)
}

/// The shipped `svkit` is one binary answering to each tool's name: link
/// every name it lists to it, as an image does.
fn link_tools(bin: &Path) -> Result<()> {
    let svkit = bin.join("svkit");
    if !svkit.is_file() {
        return Ok(());
    }
    let out = Command::new(&svkit)
        .arg("--list")
        .output()
        .context("unable to run svkit --list")?;
    if !out.status.success() {
        bail!(
            "svkit --list failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for tool in String::from_utf8_lossy(&out.stdout).lines() {
        let link = bin.join(tool);
        let _ = fs::remove_file(&link);
        symlink("svkit", &link).with_context(|| format!("unable to link {}", link.display()))?;
    }
    Ok(())
}

fn install(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::copy(from, to).with_context(|| format!("unable to copy {}", from.display()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// `__started FILE -- CMD...`: the CMD's first moments, inside. Says the
/// CMD has started, then becomes it (exit 126/127 as a shell would).
pub fn started(file: &Path, cmd: &[String]) -> i32 {
    let _ = fs::write(file, b"");
    let Some((prog, args)) = cmd.split_first() else {
        return 0;
    };
    let err = Command::new(prog).args(args).exec();
    eprintln!("svkit-sandbox: fatal: unable to exec {prog}: {err}");
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}
