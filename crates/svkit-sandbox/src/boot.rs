//! Inside the new mount and PID namespaces, before s6-svscan: build the
//! container's root from the host's `/` (read-only lower layer), the image's
//! rootfs dirs and the workspace binaries, then become s6-svscan as PID 1.
//!
//! This mirrors what s6-overlay's `/init` leaves behind: `/run/service` as the
//! scandir, `/run/s6/basedir`, `/command`, the container environment dump, and
//! a stage 2 that runs once s6-svscan is up.

use crate::layout::{Layout, Spec};
use crate::preflight::which;
use anyhow::{bail, Context, Result};
use nix::mount::{mount, MsFlags};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const BASEDIR_BIN: &str = "/run/s6/basedir/bin";
pub const SELF_IN_SANDBOX: &str = "/run/s6/basedir/bin/svkit-sandbox";
pub const DEFAULT_PATH: &str =
    "/command:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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

    nix::unistd::chroot(&root).context("unable to chroot")?;
    std::env::set_current_dir("/").context("unable to chdir to /")?;

    let (notify_r, notify_w) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("unable to create a pipe")?;
    // Stage 2 waits for s6-svscan's readiness notification, as s6-linux-init does.
    Command::new(SELF_IN_SANDBOX)
        .arg("__stage2")
        .env_clear()
        .env("PATH", DEFAULT_PATH)
        .stdin(Stdio::from(notify_r))
        .spawn()
        .context("unable to start stage 2")?;

    let fd = std::os::fd::AsRawFd::as_raw_fd(&notify_w);
    let mut cmd = Command::new("s6-svscan");
    cmd.args(["-d", "3", "/run/service"])
        .env_clear()
        .env("PATH", DEFAULT_PATH);
    // SAFETY: only async-signal-safe calls between fork and exec. The
    // notification pipe must sit at fd 3, without CLOEXEC, for `-d 3`.
    unsafe {
        cmd.pre_exec(move || {
            use nix::fcntl::{fcntl, FcntlArg, FdFlag};
            if fd == 3 {
                fcntl(3, FcntlArg::F_SETFD(FdFlag::empty()))?;
            } else {
                nix::unistd::dup2(fd, 3)?;
            }
            Ok(())
        });
    }
    let err = cmd.exec();
    bail!("unable to exec s6-svscan: {err}")
}

fn mount_tree(layout: &Layout, spec: &Spec, root: &Path) -> Result<()> {
    let opts = format!(
        "lowerdir=/,upperdir={},workdir={}",
        layout.upper().display(),
        layout.work().display()
    );
    mount(
        Some("overlay"),
        root,
        Some("overlay"),
        MsFlags::empty(),
        Some(opts.as_str()),
    )
    .context("unable to mount the overlay")?;
    let none: Option<&str> = None;
    mount(
        Some("proc"),
        &root.join("proc"),
        Some("proc"),
        MsFlags::empty(),
        none,
    )
    .context("unable to mount /proc")?;
    let rbind = MsFlags::MS_BIND | MsFlags::MS_REC;
    mount(Some("/dev"), &root.join("dev"), none, rbind, none).context("unable to bind /dev")?;
    mount(Some("/sys"), &root.join("sys"), none, rbind, none).context("unable to bind /sys")?;
    mount(
        Some("tmpfs"),
        &root.join("run"),
        Some("tmpfs"),
        MsFlags::empty(),
        Some("mode=0755"),
    )
    .context("unable to mount /run")?;
    mount(
        Some("tmpfs"),
        &root.join("tmp"),
        Some("tmpfs"),
        MsFlags::empty(),
        Some("mode=1777"),
    )
    .context("unable to mount /tmp")?;
    let results = root.join("run/s6-linux-init-container-results");
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

fn populate(spec: &Spec, root: &Path) -> Result<()> {
    for dir in &spec.rootfs {
        let status = Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", dir.display()))
            .arg(root)
            .status()
            .context("unable to run cp")?;
        if !status.success() {
            bail!("unable to copy rootfs {}", dir.display());
        }
    }
    copy_binaries(&spec.bin_dir, &root.join("usr/local/bin"))?;
    let basedir_bin = root.join(BASEDIR_BIN.trim_start_matches('/'));
    fs::create_dir_all(&basedir_bin)?;
    let me = std::env::current_exe().context("unable to find the sandbox binary")?;
    install(&me, &root.join(SELF_IN_SANDBOX.trim_start_matches('/')))?;
    write_script(
        &basedir_bin.join("halt"),
        &format!("#!/bin/sh\nexec {SELF_IN_SANDBOX} __halt\n"),
    )?;
    populate_command(&root.join("command"))?;
    populate_run(spec, root)
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
    Ok(())
}

fn install(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to).with_context(|| format!("unable to copy {}", from.display()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn write_script(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("unable to write {}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// `/command` as s6-overlay lays it out: every s6 and execline binary, and
/// `with-contenv`, which restores the container environment.
fn populate_command(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    let mut sources: Vec<PathBuf> = Vec::new();
    for anchor in ["s6-svscan", "execlineb"] {
        if let Some(p) = which(anchor).and_then(|p| p.parent().map(Path::to_path_buf)) {
            sources.push(p);
        }
    }
    sources.push(PathBuf::from("/usr/lib/execline/bin"));
    for src in sources {
        let Ok(rd) = fs::read_dir(&src) else { continue };
        for entry in rd.flatten() {
            let name = entry.file_name();
            let Some(n) = name.to_str() else { continue };
            let wanted =
                n.starts_with("s6-") || n.starts_with("s6") || src.ends_with("execline/bin");
            let link = dir.join(n);
            if (wanted || n == "execlineb") && !link.exists() {
                symlink(entry.path(), &link)?;
            }
        }
    }
    write_script(
        &dir.join("with-contenv"),
        "#!/bin/sh\n# Restore the container environment (an empty file unsets).\nexec s6-envdir -Ifn -- /run/s6/container_environment \"$@\"\n",
    )
}

fn populate_run(spec: &Spec, root: &Path) -> Result<()> {
    let run = root.join("run");
    let env_dir = run.join("s6/container_environment");
    fs::create_dir_all(&env_dir)?;
    fs::create_dir_all(run.join("s6/basedir"))?;
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), DEFAULT_PATH.into()),
        ("HOME".into(), "/root".into()),
    ];
    env.extend(spec.env.iter().cloned());
    for (k, v) in &env {
        fs::write(env_dir.join(k), v)?;
    }
    fs::write(
        run.join("s6/basedir/cmd.json"),
        serde_json::to_vec(&spec.cmd)?,
    )?;
    let svscan = run.join("service/.s6-svscan");
    fs::create_dir_all(&svscan)?;
    // docker stop sends SIGTERM to PID 1; s6-svscan runs these on signals.
    for sig in ["SIGTERM", "SIGINT", "SIGQUIT"] {
        write_script(
            &svscan.join(sig),
            &format!("#!/bin/sh\nexec {BASEDIR_BIN}/halt\n"),
        )?;
    }
    Ok(())
}
