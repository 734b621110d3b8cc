//! s6-overlay itself: its release tarballs, checked against their own
//! SHA256SUMS and unpacked once into a tree that every sandbox mounts as a
//! read-only layer over the host's `/`. Nothing of s6-overlay is imitated:
//! `/init`, `/command`, `/package` and `/etc/s6-overlay` are its own.

use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the tarballs are, when `--s6-overlay` is not given.
pub const DIR_ENV: &str = "SVKIT_S6_OVERLAY";

/// Extracted in this order, as an image's Dockerfile does; the symlinks
/// tarballs are optional (`/command` is on the PATH either way).
const TARBALLS: &[(&str, bool)] = &[
    ("s6-overlay-noarch.tar.xz", true),
    ("s6-overlay-x86_64.tar.xz", true),
    ("s6-overlay-symlinks-noarch.tar.xz", false),
    ("s6-overlay-symlinks-arch.tar.xz", false),
];

/// The tarballs' dir: the flag, else the environment.
pub fn tarball_dir(flag: Option<PathBuf>) -> Result<PathBuf> {
    let dir = flag
        .or_else(|| std::env::var_os(DIR_ENV).map(PathBuf::from))
        .filter(|d| !d.as_os_str().is_empty());
    let Some(dir) = dir else {
        bail!(
            "no s6-overlay: give --s6-overlay DIR or set {DIR_ENV} to a dir of \
             s6-overlay-*.tar.xz with their SHA256SUMS (tests/s6-overlay/build.sh makes one)"
        );
    };
    fs::canonicalize(&dir).with_context(|| format!("bad s6-overlay dir {}", dir.display()))
}

/// The unpacked tree for `dir`'s tarballs, made on first use. It is keyed
/// by the SHA256SUMS content, so new tarballs get a new tree.
pub fn tree(dir: &Path) -> Result<PathBuf> {
    if std::env::consts::ARCH != "x86_64" {
        bail!("the sandbox knows only x86_64 s6-overlay tarballs");
    }
    let sums = fs::read(dir.join("SHA256SUMS"))
        .with_context(|| format!("unable to read {}/SHA256SUMS", dir.display()))?;
    let tree = dir.join(format!(".rootfs-{:016x}", fnv1a(&sums)));
    if tree.join("init").is_file() {
        return Ok(tree);
    }
    let present: Vec<&str> = TARBALLS
        .iter()
        .filter(|(name, required)| *required || dir.join(name).is_file())
        .map(|(name, _)| *name)
        .collect();
    let text = String::from_utf8_lossy(&sums);
    for name in &present {
        if !text
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(name))
        {
            bail!("{}/SHA256SUMS has no line for {name}", dir.display());
        }
    }
    let check = Command::new("sha256sum")
        .args(["--check", "--quiet", "--ignore-missing", "SHA256SUMS"])
        .current_dir(dir)
        .output()
        .context("unable to run sha256sum")?;
    if !check.status.success() {
        bail!(
            "s6-overlay tarballs in {} fail their SHA256SUMS: {}",
            dir.display(),
            String::from_utf8_lossy(&check.stdout).trim()
        );
    }
    let tmp = dir.join(format!(".rootfs-tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp).with_context(|| format!("unable to create {}", tmp.display()))?;
    for name in &present {
        let st = Command::new("tar")
            .arg("-C")
            .arg(&tmp)
            .arg("-Jxpf")
            .arg(dir.join(name))
            .status()
            .context("unable to run tar")?;
        if !st.success() {
            let _ = fs::remove_dir_all(&tmp);
            bail!("unable to extract {}/{name}", dir.display());
        }
    }
    // Another sandbox may have won the race: its tree is as good as ours.
    if fs::rename(&tmp, &tree).is_err() && tree.join("init").is_file() {
        let _ = fs::remove_dir_all(&tmp);
    } else if !tree.join("init").is_file() {
        bail!("unable to put the s6-overlay tree at {}", tree.display());
    }
    Ok(tree)
}

/// A stable 64-bit digest, enough to tell two SHA256SUMS files apart.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
