//! Refuse early, in one line, when the host cannot boot a sandbox.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// First match of `name` on `PATH`, like a shell lookup.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

pub fn check() -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!("must run as root: the sandbox mounts an overlay and creates namespaces");
    }
    for tool in ["unshare", "nsenter"] {
        if which(tool).is_none() {
            bail!("{tool} not found on PATH: install util-linux");
        }
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fs
        .lines()
        .any(|l| l.split_whitespace().last() == Some("overlay"))
    {
        bail!("overlayfs is not available in this kernel (try: modprobe overlay)");
    }
    for tool in ["s6-svscan", "s6-supervise", "s6-envdir"] {
        if which(tool).is_none() {
            bail!("{tool} not found on PATH: install s6 (apt-get install -y s6 execline)");
        }
    }
    if which("execlineb").is_none() {
        bail!("execlineb not found on PATH: install execline (apt-get install -y execline)");
    }
    Ok(())
}
