//! Where a sandbox keeps its state on the host, and how it is named.
//!
//! Every sandbox owns one directory under the registry root: the mount
//! points of its writable layer and merged root, the results dir bound into the container, the
//! detached log, and a small JSON spec. Removing that directory is the whole
//! cleanup on the host side; mounts and processes live in the sandbox's own
//! namespaces and die with its PID 1.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What `run` was asked to boot; written once, read by every stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    pub id: String,
    pub rootfs: Vec<PathBuf>,
    pub volumes: Vec<(PathBuf, PathBuf)>,
    pub env: Vec<(String, String)>,
    pub cmd: Vec<String>,
    pub bin_dir: PathBuf,
    /// s6-overlay's unpacked tarballs, the layer right over the host's `/`.
    pub s6_overlay_tree: PathBuf,
    pub detached: bool,
}

pub fn registry_root() -> PathBuf {
    std::env::var_os("SVKIT_SANDBOX_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/svkit-sandbox"))
}

pub struct Layout {
    pub dir: PathBuf,
}

impl Layout {
    pub fn new(id: &str) -> Layout {
        Layout {
            dir: registry_root().join(id),
        }
    }
    pub fn at(dir: &Path) -> Layout {
        Layout {
            dir: dir.to_path_buf(),
        }
    }
    /// Where the sandbox mounts the tmpfs of its writable layer (seen
    /// empty from the host: the mount lives in the sandbox's namespace).
    pub fn rw(&self) -> PathBuf {
        self.dir.join("rw")
    }
    pub fn merged(&self) -> PathBuf {
        self.dir.join("merged")
    }
    /// Shared with the sandbox's own marker inside (`/.svkit-sandbox/results`).
    pub fn results(&self) -> PathBuf {
        self.dir.join("results")
    }
    pub fn spec_file(&self) -> PathBuf {
        self.dir.join("spec.json")
    }
    pub fn log(&self) -> PathBuf {
        self.dir.join("log")
    }
    pub fn exitcode(&self) -> PathBuf {
        self.dir.join("exitcode")
    }
    pub fn init_pid_file(&self) -> PathBuf {
        self.dir.join("init.pid")
    }
    pub fn monitor_pid_file(&self) -> PathBuf {
        self.dir.join("monitor.pid")
    }

    pub fn create(&self, spec: &Spec) -> Result<()> {
        fs::create_dir_all(registry_root())
            .with_context(|| format!("unable to create {}", registry_root().display()))?;
        fs::create_dir(&self.dir)
            .with_context(|| format!("unable to create {}", self.dir.display()))?;
        for d in [self.rw(), self.merged(), self.results()] {
            fs::create_dir(&d).with_context(|| format!("unable to create {}", d.display()))?;
        }
        let json = serde_json::to_vec_pretty(spec)?;
        fs::write(self.spec_file(), json)
            .with_context(|| format!("unable to write {}", self.spec_file().display()))
    }

    pub fn read_spec(&self) -> Result<Spec> {
        let bytes = fs::read(self.spec_file())
            .with_context(|| format!("unable to read {}", self.spec_file().display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("unable to parse {}", self.spec_file().display()))
    }

    pub fn read_pid(&self, file: &Path) -> Option<i32> {
        let text = fs::read_to_string(file).ok()?;
        text.trim().parse().ok().filter(|p| *p > 0)
    }

    /// The heavy parts go as soon as the container is gone; a detached
    /// sandbox keeps its log and exit code until `stop` collects them.
    pub fn remove_runtime(&self) {
        for d in [self.rw(), self.merged(), self.results()] {
            let _ = fs::remove_dir_all(&d);
        }
        let _ = fs::remove_file(self.init_pid_file());
        let _ = fs::remove_file(self.monitor_pid_file());
    }

    pub fn remove_all(&self) -> Result<()> {
        match fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("unable to remove {}", self.dir.display())),
        }
    }
}

/// A short random id, like docker's, from the kernel's entropy pool.
pub fn new_id() -> Result<String> {
    let mut buf = [0u8; 6];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("unable to read /dev/urandom")?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Ids come from the command line: refuse anything that could walk out of
/// the registry.
pub fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        bail!("invalid sandbox id: {id:?}");
    }
    Ok(())
}

pub fn list_ids() -> Vec<String> {
    let Ok(rd) = fs::read_dir(registry_root()) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| check_id(n).is_ok())
        .collect();
    ids.sort();
    ids
}

pub fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still counts until reaped.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}
