//! Facts about the container svkit runs in: where things are, whether
//! s6-overlay is running, and the container environment.
//!
//! Every path has an environment override so the suite runs
//! without s6-overlay; the defaults are what an image gets.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub const CONTAINER_ENV_DIR: &str = "/run/s6/container_environment";

/// A setting from our environment, else from the container environment:
/// `/init` strips the env of cont-init hooks and the CMD, so an image's
/// `ENV SVKIT_SCANDIR=...` reaches svkit-reconcile and svkit-wrap only
/// through s6-overlay's dump. Empty means unset.
pub fn setting(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            let raw = fs::read(Path::new(CONTAINER_ENV_DIR).join(var)).ok()?;
            env_value(&raw).filter(|v| !v.is_empty())
        }
    }
}

/// The dir that holds the scandir and svkit's runtime files: `/run`
/// under s6-overlay. `svkit-init` (when it supervises without s6-overlay)
/// picks the first of [`RUN_DIRS`] it can write and exec from and sets
/// `SVKIT_RUN_DIR` for everything it starts; a `docker exec` has no such
/// variable, so the dir that holds a live `svkit-init`'s record is found
/// in the same order.
pub const RUN_DIR_ENV: &str = "SVKIT_RUN_DIR";

/// Where `svkit-init` may put the scandir, in order: `/run` as s6-overlay
/// does, else a dir under `/tmp` (a non-root container whose `/run` is
/// root's).
pub const RUN_DIRS: [&str; 2] = ["/run", "/tmp/svkit"];

/// `svkit-init`'s record in the run dir: its pid, one line.
pub const INIT_RECORD: &str = "svkit/init";

/// The run dir: `SVKIT_RUN_DIR`, else the first of [`RUN_DIRS`] holding a
/// live `svkit-init`'s record, else `/run`.
pub fn run_dir() -> PathBuf {
    if let Some(d) = setting(RUN_DIR_ENV) {
        return PathBuf::from(d);
    }
    RUN_DIRS
        .iter()
        .map(Path::new)
        .find(|d| init_pid_in(d).is_some())
        .unwrap_or(Path::new(RUN_DIRS[0]))
        .to_path_buf()
}

/// `SVKIT_SCANDIR`, default `service` in the [`run_dir`]: `/run/service`.
pub fn scandir() -> PathBuf {
    setting("SVKIT_SCANDIR").map_or_else(|| run_dir().join("service"), PathBuf::from)
}

/// The pid of the live `svkit-init` whose record is in `dir`.
fn init_pid_in(dir: &Path) -> Option<i32> {
    let text = fs::read_to_string(dir.join(INIT_RECORD)).ok()?;
    let pid = text.trim().parse::<i32>().ok()?;
    is_init(pid).then_some(pid)
}

/// Is `pid` a live svkit-init? A reused pid would have to run under the
/// same name: never a guess.
fn is_init(pid: i32) -> bool {
    pid > 0
        && fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim_end() == "svkit-init")
}

/// Who supervises the slots here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Supervision {
    /// s6-overlay's `/init` is PID 1 (s6-svscan).
    Overlay,
    /// `svkit-init` runs s6-svscan itself; its pid.
    Init(i32),
    /// Nothing does; why.
    Missing(String),
}

impl Supervision {
    /// The mode's name, as status shows it.
    pub fn name(&self) -> &'static str {
        match self {
            Supervision::Overlay => "s6-overlay",
            Supervision::Init(_) => "svkit-init",
            Supervision::Missing(_) => "none",
        }
    }

    /// The process that adopts orphans and ends the container.
    pub fn reaper(&self) -> Option<i32> {
        match self {
            Supervision::Overlay => Some(1),
            Supervision::Init(pid) => Some(*pid),
            Supervision::Missing(_) => None,
        }
    }
}

/// The pid of the svkit-init that runs the tree, in the environment of
/// everything it starts (a slot's `finish` sends it USR1 to halt).
pub const INIT_PID_ENV: &str = "SVKIT_INIT_PID";

/// The svkit-init that started this process (its [`INIT_PID_ENV`]), else
/// s6-overlay when it runs, else a live svkit-init (its record in the
/// [`run_dir`]), else why there is no supervision.
pub fn supervision() -> Supervision {
    let started_by = std::env::var(INIT_PID_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|pid| is_init(*pid));
    if let Some(pid) = started_by {
        return Supervision::Init(pid);
    }
    match s6_overlay_missing() {
        None => Supervision::Overlay,
        Some(why) => match init_pid_in(&run_dir()) {
            Some(pid) => Supervision::Init(pid),
            None => Supervision::Missing(format!("{why}, and no svkit-init runs")),
        },
    }
}

/// Why no s6 supervision runs here (neither s6-overlay nor svkit-init),
/// or None when one does.
pub fn supervision_missing() -> Option<String> {
    match supervision() {
        Supervision::Missing(why) => Some(why),
        _ => None,
    }
}

/// Override of the directory of s6's binaries.
pub const S6_BIN_ENV: &str = "SVKIT_S6_BIN";
/// s6-overlay's binary dir.
pub const OVERLAY_BIN: &str = "/command";

/// Where s6's binaries are, for what svkit runs and what it renders alike:
/// `SVKIT_S6_BIN`, else s6-overlay's `/command` when it exists; `None`:
/// found on `PATH`.
pub fn s6_bin_dir() -> Option<String> {
    setting(S6_BIN_ENV).or_else(|| Path::new(OVERLAY_BIN).is_dir().then(|| OVERLAY_BIN.into()))
}

/// The s6 program `name` in [`s6_bin_dir`] (a bare name: looked up on `PATH`).
pub fn s6_tool(name: &str) -> PathBuf {
    s6_bin_dir().map_or_else(|| PathBuf::from(name), |d| Path::new(&d).join(name))
}

/// The `PATH` of a program started without one (and of a slot that sets
/// none, when the caller knows no better): s6-overlay's `/command` before
/// Docker's default `PATH`.
pub const DEFAULT_PATH: &str =
    "/command:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Whether `p` is an executable regular file (symlinks followed).
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The executable regular file `program` names: itself when it holds a
/// `/`, else the first of that name in a directory of `PATH` (unset:
/// [`DEFAULT_PATH`]).
pub fn find_program(program: &Path) -> Option<PathBuf> {
    if program.as_os_str().is_empty() {
        return None;
    }
    if program.to_string_lossy().contains('/') {
        return is_executable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

/// Why s6-overlay is not detected, or None when it is. Detects s6 itself
/// (PID 1 is s6-svscan and the overlay's basedir exists), not "a
/// container": that guess fails on containerd, Fly and `docker run --init`.
pub fn s6_overlay_missing() -> Option<String> {
    let comm = fs::read_to_string("/proc/1/comm").unwrap_or_default();
    let comm = comm.trim();
    if comm != "s6-svscan" {
        let shown = if comm.is_empty() { "unknown" } else { comm };
        return Some(format!("PID 1 is {shown}, not s6-svscan"));
    }
    if !Path::new("/run/s6/basedir").is_dir() {
        return Some("/run/s6/basedir is missing".to_string());
    }
    None
}

/// s6-overlay reads its number settings (`S6_KILL_GRACETIME`,
/// `S6_CMD_RECEIVE_SIGNALS`, ...) only when they are digits and nothing
/// else; anything else counts as unset.
pub(crate) fn all_digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// The number setting `var` as s6-overlay reads it ([`setting`], digits
/// only), or None.
pub fn s6_number(var: &str) -> Option<u64> {
    setting(var).filter(|v| all_digits(v))?.parse().ok()
}

/// s6-overlay's final grace (ms) when `S6_KILL_GRACETIME` is not set to
/// digits, as its stage 0 reads it.
pub const S6_DEFAULT_KILL_GRACE_MS: u64 = 3000;

/// The boot hook's note when the container leaves `S6_KILL_GRACETIME`
/// (`value`, from the container environment) at s6-overlay's 3000 ms:
/// every `docker stop` then sleeps that long after the stop hook, for
/// nothing once the hook has stopped what svkit runs.
pub fn kill_grace_note(value: Option<&str>) -> Option<String> {
    let ms = value.filter(|v| all_digits(v)).map(str::parse::<u64>);
    ms.is_none_or(|ms| ms == Ok(S6_DEFAULT_KILL_GRACE_MS)).then(|| {
        format!(
            "S6_KILL_GRACETIME is s6-overlay's default {S6_DEFAULT_KILL_GRACE_MS} ms: every docker stop sleeps that long after the stop hook, in full. svkit's stop hook already stops the foreground command and every slot with its own signal and timeout, their loggers once written out, and sends strays (a slot's double-forked child) TERM and waits for them, so none is needed: set S6_KILL_GRACETIME=0 in the image's ENV (or docker run -e)"
        )
    })
}

/// The container environment: s6-overlay's dump when it exists (scripts
/// under `/init` get a stripped env), else our own.
pub fn container_env() -> BTreeMap<String, String> {
    read_env_dir(Path::new(CONTAINER_ENV_DIR)).unwrap_or_else(utf8_env)
}

/// Our own environment, less the variables whose name or value is not
/// UTF-8 (`std::env::vars` would panic on them): no decision of svkit's
/// rests on such a variable, and a command we exec still inherits them.
pub fn utf8_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// One file per variable, read as `with-contenv` reads s6-overlay's dump
/// (`s6-envdir -Lf`). Names that are not variable names are skipped.
pub fn read_env_dir(dir: &Path) -> Option<BTreeMap<String, String>> {
    let rd = fs::read_dir(dir).ok()?;
    let vars = rd.flatten().filter_map(|entry| {
        let name = entry
            .file_name()
            .into_string()
            .ok()
            .filter(|n| is_env_name(n))?;
        Some((name, env_value(&fs::read(entry.path()).ok()?)?))
    });
    Some(vars.collect())
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what `export NAME=...` in sh accepts.
pub fn is_env_name(name: &str) -> bool {
    let mut it = name.bytes();
    it.next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && it.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One variable's value from its file, as `s6-envdir -Lf` makes it: the
/// whole file less one trailing newline (s6-linux-init writes every value
/// followed by one), NUL bytes read as newlines, and an empty file meaning
/// unset (None). A file holding only a newline is an empty value.
pub fn env_value(raw: &[u8]) -> Option<String> {
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    (!raw.is_empty()).then(|| String::from_utf8_lossy(body).replace('\0', "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_dir_reads_values_as_with_contenv_and_skips_junk() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::write(t.path().join("A"), "x y\n").expect("write");
        fs::write(t.path().join("TWO"), "1\n\n").expect("write");
        fs::write(t.path().join("RAW"), "no newline").expect("write");
        fs::write(t.path().join("NL"), "\n").expect("write");
        fs::write(t.path().join("NUL"), b"a\0b\n").expect("write");
        fs::write(t.path().join("EMPTY"), "").expect("write");
        fs::write(t.path().join("1BAD"), "v").expect("write");
        fs::write(t.path().join("bad-name"), "v").expect("write");
        let env = read_env_dir(t.path()).expect("dir");
        let get = |k: &str| env.get(k).map(String::as_str);
        assert_eq!(get("A"), Some("x y"));
        assert_eq!(get("TWO"), Some("1\n"), "only one newline is stripped");
        assert_eq!(get("RAW"), Some("no newline"));
        assert_eq!(get("NL"), Some(""), "a lone newline is an empty value");
        assert_eq!(get("NUL"), Some("a\nb"));
        assert_eq!(env.len(), 5, "{env:?}");
        assert!(read_env_dir(&t.path().join("missing")).is_none());
    }

    #[test]
    fn only_the_3000_ms_default_gets_the_kill_grace_note() {
        for default in [
            None,
            Some(""),
            Some("3000"),
            Some("03000"),
            Some("3s"),
            Some("-1"),
        ] {
            assert!(kill_grace_note(default).is_some(), "{default:?}");
        }
        for set in ["100", "0", "2999", "10000"] {
            assert_eq!(kill_grace_note(Some(set)), None, "{set}");
        }
    }
}
