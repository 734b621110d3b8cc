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
    for (tool, package) in [
        ("unshare", "util-linux"),
        ("ip", "iproute2"),
        ("tar", "tar"),
        ("xz", "xz-utils"),
    ] {
        if which(tool).is_none() {
            bail!("{tool} not found on PATH: install {package}");
        }
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fs
        .lines()
        .any(|l| l.split_whitespace().last() == Some("overlay"))
    {
        bail!("overlayfs is not available in this kernel (try: modprobe overlay)");
    }
    Ok(())
}
