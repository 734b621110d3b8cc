//! Drives `svkit-sandbox` from integration tests.
//!
//! Tests that need the sandbox call [`sandbox_or_skip`]: off root or without
//! s6-overlay's tarballs they skip through [`skip`] (a failure where
//! nothing may skip, as in `make test` as root).
#![forbid(unsafe_code)]

mod skip;
pub use skip::{root_or_skip, skip, NO_SKIP_ENV, SKIP_LOG_ENV};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The workspace's target dir for the profile the tests were built with:
/// test binaries live in `target/<profile>/deps/`.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let deps = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    deps.parent().map(Path::to_path_buf).unwrap_or(deps)
}

/// svctl's verbs, spelled out once for every test that checks them
/// against the CLI, its help, the completions and the docs: a verb
/// dropped from any of them fails there.
pub const SVCTL_VERBS: [&str; 20] = [
    "status",
    "start",
    "stop",
    "restart",
    "run",
    "wait",
    "logs",
    "events",
    "metrics",
    "top",
    "plan",
    "apply",
    "register",
    "unregister",
    "forget",
    "signal",
    "check",
    "render",
    "exec",
    "import",
];

pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(name)
}

/// The shipped `svkit` under a tool's name, as an image installs it: a
/// symlink named TOOL to it (the name it is run as picks the program).
/// Made once per target dir, atomically (tests run in parallel).
pub fn tool(name: &str) -> PathBuf {
    let dir = bin_dir().join("tools");
    let link = dir.join(name);
    if link.exists() {
        return link;
    }
    let _ = std::fs::create_dir_all(&dir);
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let _ = std::os::unix::fs::symlink("../svkit", &tmp);
    let _ = std::fs::rename(&tmp, &link);
    link
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// Why the sandbox cannot run here, if it cannot.
pub fn sandbox_unavailable() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("needs root (mount and PID namespaces, overlayfs)".into());
    }
    for (tool, package) in [("unshare", "util-linux"), ("ip", "iproute2")] {
        if !on_path(tool) {
            return Some(format!("{tool} not on PATH (apt-get install -y {package})"));
        }
    }
    if std::env::var_os("SVKIT_S6_OVERLAY").is_none_or(|d| d.is_empty()) {
        return Some(
            "SVKIT_S6_OVERLAY is not set (the dir tests/s6-overlay/build.sh prints)".into(),
        );
    }
    if !bin("svkit-sandbox").is_file() {
        return Some(format!(
            "{} missing: run `cargo build --workspace` first",
            bin("svkit-sandbox").display()
        ));
    }
    None
}

/// Returns false (after skipping through [`skip`]) when the sandbox
/// cannot run here.
pub fn sandbox_or_skip(test: &str) -> bool {
    match sandbox_unavailable() {
        None => true,
        Some(why) => {
            skip(test, why);
            false
        }
    }
}

/// A per-test registry, so parallel tests never see each other's sandboxes
/// and a test can prove its own leaves nothing behind.
pub struct Registry {
    pub dir: tempfile::TempDir,
}

impl Registry {
    pub fn new() -> Registry {
        let dir = tempfile::Builder::new()
            .prefix("svkit-sbx-reg.")
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        Registry { dir }
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(bin("svkit-sandbox"));
        c.env("SVKIT_SANDBOX_DIR", self.dir.path());
        c
    }

    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// A detached sandbox, stopped on drop so a failing test leaves nothing.
pub struct Sandbox {
    pub id: String,
    reg: Registry,
    stopped: bool,
}

impl Sandbox {
    /// `svkit-sandbox run --detach ARGS... -- CMD...`
    pub fn start(args: &[&str], cmd: &[&str]) -> Sandbox {
        let reg = Registry::new();
        let out = reg
            .command()
            .arg("run")
            .arg("--detach")
            // s6-overlay's stage 4 waits this long after its final TERM,
            // whether or not anything is left (3 s by default); a test's
            // own --env comes later and wins.
            .args(["--env", "S6_KILL_GRACETIME=100"])
            .args(args)
            .arg("--")
            .args(cmd)
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("svkit-sandbox run: {e}"));
        assert!(
            out.status.success(),
            "svkit-sandbox run --detach failed: {:?}",
            out.status
        );
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Sandbox {
            id,
            reg,
            stopped: false,
        }
    }

    /// `docker run -v DATA:/data`: a container of `rootfs` with `data` as
    /// its `/data` volume, idling (`sleep 100000`) as its CMD.
    pub fn boot_with_data(rootfs: &Path, data: &Path) -> Sandbox {
        let r = rootfs.display().to_string();
        let v = format!("{}:/data", data.display());
        Sandbox::start(&["--rootfs", &r, "--volume", &v], &["sleep", "100000"])
    }

    /// `docker exec`: runs `sh -c SCRIPT` inside.
    pub fn sh(&self, script: &str) -> Output {
        self.exec(&["sh", "-c", script])
    }

    pub fn exec(&self, argv: &[&str]) -> Output {
        self.reg
            .command()
            .args(["exec", &self.id, "--"])
            .args(argv)
            .output()
            .unwrap_or_else(|e| panic!("svkit-sandbox exec: {e}"))
    }

    /// `exec` as one `sh` command line, with `VAR=VALUE` pairs in its env,
    /// for a terminal (tmux) to run.
    pub fn exec_line(&self, env: &[&str], argv: &[&str]) -> String {
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let mut line = format!(
            "env SVKIT_SANDBOX_DIR={} {} exec",
            q(&self.reg.dir.path().display().to_string()),
            q(&bin("svkit-sandbox").display().to_string())
        );
        for e in env {
            line.push_str(&format!(" --env {}", q(e)));
        }
        line.push_str(&format!(" {} --", q(&self.id)));
        for a in argv {
            line.push_str(&format!(" {}", q(a)));
        }
        line
    }

    pub fn exec_as(&self, user: &str, argv: &[&str]) -> Output {
        self.reg
            .command()
            .args(["exec", "--user", user, &self.id, "--"])
            .args(argv)
            .output()
            .unwrap_or_else(|e| panic!("svkit-sandbox exec: {e}"))
    }

    /// `exec`, asserting the exit code (both streams shown when it
    /// differs); the output, for what the test checks next.
    #[track_caller]
    pub fn run(&self, argv: &[&str], want: i32) -> Output {
        let o = self.exec(argv);
        expect_code(&o, want);
        o
    }

    /// `exec_as`, asserting the exit code, as [`Sandbox::run`].
    #[track_caller]
    pub fn run_as(&self, user: &str, argv: &[&str], want: i32) -> Output {
        let o = self.exec_as(user, argv);
        expect_code(&o, want);
        o
    }

    /// Replaces the test config (`/etc/svkit/10-test.json`, as
    /// [`Rootfs::with_svkit`] wrote it) and runs the boot hook again, as an
    /// operator's `svctl apply` would. The exit code is the caller's to check.
    pub fn reconcile_with(&self, config: &str) -> Output {
        std::fs::write(self.root().join(TEST_CONFIG), config)
            .unwrap_or_else(|e| panic!("write {TEST_CONFIG}: {e}"));
        self.exec(&["svkit-reconcile"])
    }

    /// Polls until no process `pid` is left inside, up to `deadline`.
    pub fn wait_gone(&self, pid: &str, deadline: Duration) {
        poll(&format!("pid {pid} gone"), deadline, || {
            (!self.sh(&format!("kill -0 {pid}")).status.success()).then_some(())
        });
    }

    /// The CMD's pid inside: the child of s6-overlay's `rc.init` (stage 2
    /// runs the CMD as its child). Empty when there is none.
    pub fn cmd_pid(&self) -> String {
        // The pattern is split in two so this shell's own argv never matches.
        let o = self.sh(concat!(
            "r=; for d in /proc/[0-9]*; do ",
            "a=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); ",
            "case $a in *'/scripts/rc''.init '*) r=${d#/proc/} ;; esac; done; ",
            "[ -n \"$r\" ] || exit 0; ",
            "for d in /proc/[0-9]*; do s=$(cat $d/stat 2>/dev/null) || continue; ",
            "set -- ${s##*) }; [ \"$2\" = \"$r\" ] && echo ${d#/proc/}; done"
        ));
        stdout(&o).trim().to_string()
    }

    /// The sandbox's `/` seen from the host (`/proc/PID/root` of its PID 1),
    /// for reading its files natively.
    pub fn root(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root", self.init_pid()))
    }

    /// The host's pid of the sandbox's PID 1 (empty once it is gone), to
    /// act on its namespaces from the host as the engine would (`nsenter`).
    pub fn init_pid(&self) -> String {
        let pidfile = self.reg.dir.path().join(&self.id).join("init.pid");
        let pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        pid.trim().to_string()
    }

    /// `docker logs`.
    pub fn logs(&self) -> String {
        let out = self.reg.command().args(["logs", &self.id]).output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// `docker logs`, byte for byte (not every line a slot logs is UTF-8).
    pub fn logs_bytes(&self) -> Vec<u8> {
        let out = self.reg.command().args(["logs", &self.id]).output();
        out.map(|o| o.stdout).unwrap_or_default()
    }

    /// Polls `docker logs` until `needle` shows, and returns them; fails
    /// the test, showing the logs, when it has not shown by `deadline`.
    pub fn wait_for_log(&self, needle: &str, deadline: Duration) -> String {
        let end = Instant::now() + deadline;
        loop {
            let logs = self.logs();
            if logs.contains(needle) {
                return logs;
            }
            if Instant::now() > end {
                panic!("no {needle:?} in the logs after {deadline:?}:\n{logs}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (bounded) until the container ends by itself, as `docker
    /// wait` does, then forgets it: its exit code.
    pub fn wait_exit(self, deadline: Duration) -> i32 {
        let f = self.reg.dir.path().join(&self.id).join("exitcode");
        poll("the sandbox to exit by itself", deadline, || {
            f.exists().then_some(())
        });
        self.stop()
    }

    /// `docker stop`: returns the container's exit code.
    pub fn stop(mut self) -> i32 {
        self.stopped = true;
        let out = self
            .reg
            .command()
            .args(["stop", &self.id])
            .output()
            .unwrap_or_else(|e| panic!("svkit-sandbox stop: {e}"));
        assert!(
            out.status.success(),
            "stop failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let code = text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("stop printed {text:?}"));
        assert!(
            self.reg.entries().is_empty(),
            "registry not empty after stop"
        );
        code
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = self.reg.command().args(["stop", &self.id]).output();
        }
    }
}

/// Polls `f` until it returns Some, or panics with `what` at the deadline.
pub fn poll<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > end {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Asserts the exit code, showing both streams when it differs.
#[track_caller]
pub fn expect_code(o: &Output, want: i32) {
    assert_eq!(
        o.status.code(),
        Some(want),
        "stdout: {}\nstderr: {}",
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The stdout of a command that must have exited 0 (its stderr is shown
/// if it did not).
pub fn stdout_ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(o)
}

/// Runs `cmd` with its stdout a pipe whose read end is already closed (what
/// `cmd | head -0` gives once `head` is gone), stdin `/dev/null` and stderr
/// captured: every write to stdout fails with EPIPE.
pub fn output_with_closed_stdout(cmd: &mut Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap_or_else(|e| panic!("pipe: {e}"));
    drop(reader);
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"))
}

/// Asserts that `o` (from [`output_with_closed_stdout`]) ended quietly
/// with `code`: a reader that went away is neither a panic nor an error.
pub fn assert_quiet_on_closed_stdout(what: &str, o: &Output, code: i32) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{what}: stderr after EPIPE on stdout:\n{err}"
    );
    assert_eq!(o.status.code(), Some(code), "{what}: {err}");
}

/// uid/gid of `nobody` (the test slots' usual user), the same inside the
/// sandbox.
pub const NOBODY: u32 = 65534;

/// A container to boot: a rootfs with svkit and the test's config
/// ([`Rootfs::with_svkit`]) and a host dir for its `/data` volume.
pub struct Fixture {
    pub rootfs: Rootfs,
    pub data: tempfile::TempDir,
}

impl Fixture {
    /// The rootfs and an empty, root-only data dir.
    pub fn bare(config: &str) -> Fixture {
        let data = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        Fixture {
            rootfs: Rootfs::with_svkit(config),
            data,
        }
    }

    /// [`Fixture::bare`], with a data dir the slots' user (`nobody`)
    /// reaches, and its `/data/.svkit` state dir made and owned by it.
    pub fn new(config: &str) -> Fixture {
        use std::os::unix::fs::PermissionsExt;
        let fx = Fixture::bare(config);
        let data = fx.data.path();
        std::fs::set_permissions(data, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", data.display()));
        let state = data.join(".svkit");
        std::fs::create_dir(&state).unwrap_or_else(|e| panic!("mkdir {}: {e}", state.display()));
        std::os::unix::fs::chown(&state, Some(NOBODY), Some(NOBODY))
            .unwrap_or_else(|e| panic!("chown {}: {e}", state.display()));
        fx
    }

    /// Boots it, idling (`sleep 100000`) as its CMD.
    pub fn boot(&self) -> Sandbox {
        self.boot_env(&[])
    }

    /// Boots it with `VAR=VALUE` pairs in the container's env.
    pub fn boot_env(&self, env: &[&str]) -> Sandbox {
        let volume = format!("{}:/data", self.data.path().display());
        let mut args = vec![
            "--rootfs".to_string(),
            self.rootfs.arg(),
            "--volume".into(),
            volume,
        ];
        for e in env {
            args.push("--env".into());
            args.push(e.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Sandbox::start(&args, &["sleep", "100000"])
    }
}

/// `s6-svstat -o FIELDS` of a slot (a name under `/run/service`, or an
/// absolute dir) inside the sandbox, trimmed: empty when no supervisor
/// runs there.
pub fn svstat(sbx: &Sandbox, slot: &str, fields: &str) -> String {
    let dir = if slot.starts_with('/') {
        slot.to_string()
    } else {
        format!("/run/service/{slot}")
    };
    stdout(&sbx.sh(&format!("s6-svstat -o {fields} {dir}")))
        .trim()
        .to_string()
}

/// `svctl` run from the test, with the test's own environment but no
/// `SVKIT_CONFIG_DIR`: each test names its config dir.
pub fn svctl() -> Command {
    let mut c = Command::new(tool("svctl"));
    c.env_remove("SVKIT_CONFIG_DIR");
    c
}

/// A rootfs layer for `svkit-sandbox run --rootfs`, built file by file.
pub struct Rootfs {
    pub dir: tempfile::TempDir,
}

/// Where [`Rootfs::with_svkit`] puts the test's config, relative to `/`.
pub const TEST_CONFIG: &str = "etc/svkit/10-test.json";

impl Rootfs {
    pub fn new() -> Rootfs {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        Rootfs { dir }
    }

    /// The common layer: `/etc/svkit/10-test.json` holding `config`, the
    /// boot hook that runs `svkit-reconcile` and the loggers' watcher
    /// service, as an image has them.
    pub fn with_svkit(config: &str) -> Rootfs {
        let r = Rootfs::new();
        r.file(TEST_CONFIG, config);
        r.script(
            "etc/cont-init.d/50-svkit",
            "#!/bin/sh\nexec svkit-reconcile\n",
        );
        r.script(
            "etc/services.d/svkit-log-watch/run",
            include_str!("../../../rootfs/etc/services.d/svkit-log-watch/run"),
        );
        r
    }

    /// Writes `rel` (parents created), mode 0644.
    pub fn file(&self, rel: &str, contents: &str) -> &Rootfs {
        self.write(rel, contents, 0o644)
    }

    /// Writes `rel` (parents created), mode 0755.
    pub fn script(&self, rel: &str, contents: &str) -> &Rootfs {
        self.write(rel, contents, 0o755)
    }

    fn write(&self, rel: &str, contents: &str, mode: u32) -> &Rootfs {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `--rootfs DIR` as it goes on the command line.
    pub fn arg(&self) -> String {
        self.dir.path().display().to_string()
    }
}

impl Default for Rootfs {
    fn default() -> Self {
        Self::new()
    }
}
