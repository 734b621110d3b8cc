//! The sandbox behaves like an s6-overlay container and leaves nothing behind.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Registry, Sandbox};

/// Writes an executable script at `rel` under `root`, parents made.
fn script(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(&p, body).expect("write");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Host processes still in the namespace named by `ns` (e.g. "pid:[4026…]").
fn procs_in_ns(kind: &str, ns: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let link = entry.path().join("ns").join(kind);
        if fs::read_link(&link)
            .map(|l| l.to_string_lossy() == ns)
            .unwrap_or(false)
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// Host mounts that name `dir` (a sandbox's mounts live in its own
/// namespace and must never show here).
fn host_mounts_under(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&needle))
        .map(String::from)
        .collect()
}

#[test]
fn run_exits_with_cmd_code_and_leaves_nothing() {
    if !sandbox_or_skip("run_exits_with_cmd_code_and_leaves_nothing") {
        return;
    }
    let reg = Registry::new();
    let data = tempfile::tempdir().expect("tempdir");
    let err_dir = tempfile::tempdir().expect("tempdir");
    let err_path = err_dir.path().join("stderr");
    let mut child = reg
        .command()
        .arg("run")
        .arg("--volume")
        .arg(format!("{}:/data", data.path().display()))
        .args(["--", "sh", "-c"])
        .arg(concat!(
            "test \"$(cat /proc/1/comm)\" = s6-svscan && test -d /run/s6/basedir && ",
            "readlink /proc/self/ns/pid && readlink /proc/self/ns/mnt && ",
            "while [ ! -e /data/go ]; do sleep 0.05; done; exit 42"
        ))
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("run");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(
        child.stdout.take().expect("stdout"),
    ));
    let mut next = || lines.next().and_then(Result::ok).unwrap_or_default();
    let (pid_ns, mnt_ns) = (next(), next());
    if mnt_ns.is_empty() {
        let st = child.wait();
        let err = fs::read_to_string(&err_path).unwrap_or_default();
        panic!("no namespaces said ({st:?}): {err}");
    }
    // Hold both namespaces while the CMD is in them: a namespace's inode
    // number goes back to the pool when it dies, and the next sandbox (a
    // test running beside this one) may get it before the scan below.
    let pin = |kind: &str, ns: &str| {
        let pid = procs_in_ns(kind, ns).into_iter().next();
        let pid = pid.unwrap_or_else(|| panic!("no process in {ns}"));
        fs::File::open(format!("/proc/{pid}/ns/{kind}")).expect("pin ns")
    };
    let _pins = (pin("pid", &pid_ns), pin("mnt", &mnt_ns));
    fs::write(data.path().join("go"), "").expect("go");
    let status = child.wait().expect("wait");
    assert_eq!(
        status.code(),
        Some(42),
        "stderr: {}",
        fs::read_to_string(&err_path).unwrap_or_default()
    );
    let (pid_ns, mnt_ns) = (pid_ns.as_str(), mnt_ns.as_str());
    assert_ne!(
        fs::read_link("/proc/self/ns/pid")
            .expect("own ns")
            .to_string_lossy(),
        pid_ns
    );
    assert_eq!(host_mounts_under(reg.dir.path()), Vec::<String>::new());
    // The namespace's PID 1 is gone, so the kernel has killed the rest; a
    // scan proves it.
    assert!(
        procs_in_ns("pid", pid_ns).is_empty(),
        "processes left in {pid_ns}"
    );
    assert!(
        procs_in_ns("mnt", mnt_ns).is_empty(),
        "processes left in {mnt_ns}"
    );
    assert!(
        reg.entries().is_empty(),
        "temp dirs left: {:?}",
        reg.entries()
    );
}

/// Docker hands a container stdin, stdout and stderr only. An fd the
/// caller leaks (a build tool's jobserver pipe on fd 3) must not reach
/// s6-overlay's /init, which reads fd 3 for a readiness notification: an
/// open pipe there that never says anything would block the boot forever.
#[test]
fn an_inherited_fd_never_reaches_init() {
    if !sandbox_or_skip("an_inherited_fd_never_reaches_init") {
        return;
    }
    let reg = Registry::new();
    let inner = reg.command();
    let mut outer = std::process::Command::new("sh");
    outer
        .arg("-c")
        .arg("exec 3<&0; exec \"$0\" run -- sh -c 'test ! -e /proc/self/fd/3 && exit 7'")
        .arg(inner.get_program());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            outer.env(k, v);
        }
    }
    let mut child = outer.stdin(Stdio::piped()).spawn().expect("run");
    // Held open, never written: a read of it would never end.
    let held = child.stdin.take();
    let st = poll("the sandbox ends", Duration::from_secs(60), || {
        child.try_wait().ok().flatten()
    });
    drop(held);
    assert_eq!(st.code(), Some(7), "the CMD saw an fd 3, or never ran");
    assert!(reg.entries().is_empty());
}

#[test]
fn signal_exit_is_128_plus_n() {
    if !sandbox_or_skip("signal_exit_is_128_plus_n") {
        return;
    }
    let reg = Registry::new();
    let st = reg
        .command()
        .args(["run", "--", "sh", "-c", "kill -KILL $$"])
        .status()
        .expect("run");
    assert_eq!(st.code(), Some(137));
    assert!(reg.entries().is_empty());
}

#[test]
fn init_runs_cont_init_in_order_then_services_then_cmd() {
    if !sandbox_or_skip("init_runs_cont_init_in_order_then_services_then_cmd") {
        return;
    }
    let rootfs = tempfile::tempdir().expect("tempdir");
    let r = rootfs.path();
    script(
        r,
        "etc/cont-init.d/20-second",
        "#!/bin/sh\necho second >> /run/order\n",
    );
    script(
        r,
        "etc/cont-init.d/10-first",
        "#!/bin/sh\necho first >> /run/order\n",
    );
    script(
        r,
        "etc/services.d/hello/run",
        "#!/bin/sh\nexec sleep 1000\n",
    );
    let sbx = Sandbox::start(
        &[
            "--rootfs",
            r.to_str().expect("utf8"),
            "--env",
            "GREETING=hi there",
        ],
        &[
            "sh",
            "-c",
            "echo CMD-PATH=$PATH; echo CMD-GREETING=${GREETING:-unset}; exec sleep 1000",
        ],
    );
    assert_eq!(stdout(&sbx.sh("cat /run/order")), "first\nsecond\n");
    // s6-linux-init dumps each value followed by one newline.
    let env = stdout(&sbx.sh("cat /run/s6/container_environment/GREETING"));
    assert_eq!(env, "hi there\n");
    // with-contenv restores it for scripts; the CMD itself gets a minimal env.
    assert_eq!(
        stdout(&sbx.exec(&["with-contenv", "sh", "-c", "echo $GREETING"])),
        "hi there\n"
    );
    let logs = sbx.wait_for_log("CMD-GREETING", Duration::from_secs(10));
    assert!(logs.contains("CMD-GREETING=unset"), "{logs}");
    poll("hello supervised and up", Duration::from_secs(10), || {
        let o = sbx.sh("s6-svstat -o up /run/service/hello");
        (stdout(&o).trim() == "true").then_some(())
    });
    // docker stop: s6-overlay's stage 3 ends the container with 0.
    assert_eq!(sbx.stop(), 0);
}

#[test]
fn detached_exec_and_stop() {
    if !sandbox_or_skip("detached_exec_and_stop") {
        return;
    }
    let sbx = Sandbox::start(&[], &["sleep", "1000"]);
    let o = sbx.exec(&["sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7));
    let o = sbx.exec(&["/nonexistent"]);
    assert_ne!(o.status.code(), Some(0));
    // exec joins the sandbox's PID namespace: PID 1 is s6-svscan there.
    assert_eq!(stdout(&sbx.sh("cat /proc/1/comm")), "s6-svscan\n");
    let o = sbx.exec_as("nobody", &["id", "-un"]);
    assert_eq!(stdout(&o), "nobody\n");
    assert_eq!(
        sbx.stop(),
        0,
        "a stopped container exits 0 under s6-overlay"
    );
}

#[test]
fn volume_survives_a_restart() {
    if !sandbox_or_skip("volume_survives_a_restart") {
        return;
    }
    let vol = tempfile::tempdir().expect("tempdir");
    let spec = format!("{}:/data", vol.path().display());
    let reg = Registry::new();
    let st = reg
        .command()
        .args([
            "run",
            "--volume",
            &spec,
            "--",
            "sh",
            "-c",
            "echo kept > /data/f",
        ])
        .status();
    assert_eq!(st.expect("run").code(), Some(0));
    let out = reg
        .command()
        .args(["run", "--volume", &spec, "--", "cat", "/data/f"])
        .output()
        .expect("run");
    assert_eq!(stdout(&out), "kept\n");
    // Anything outside a volume is thrown away with the overlay.
    let st = reg
        .command()
        .args(["run", "--", "sh", "-c", "echo x > /etc/svkit-sandbox-probe"])
        .status();
    assert_eq!(st.expect("run").code(), Some(0));
    assert!(
        !std::path::Path::new("/etc/svkit-sandbox-probe").exists(),
        "host was written"
    );
}

#[test]
fn sigterm_to_foreground_sandbox_halts_cleanly() {
    if !sandbox_or_skip("sigterm_to_foreground_sandbox_halts_cleanly") {
        return;
    }
    let reg = Registry::new();
    let mut child = reg
        .command()
        .args(["run", "--", "sleep", "1000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let regdir = reg.dir.path().to_path_buf();
    poll("CMD started", Duration::from_secs(20), || {
        let ids: Vec<_> = fs::read_dir(&regdir).ok()?.flatten().collect();
        ids.iter()
            .any(|e| e.path().join("results/started").exists())
            .then_some(())
    });
    nix_kill(child.id(), 15);
    let st = child.wait().expect("wait");
    assert_eq!(st.code(), Some(0), "a clean halt, as docker stop gives");
    assert!(reg.entries().is_empty(), "left: {:?}", reg.entries());
}

fn nix_kill(pid: u32, sig: i32) {
    let st = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
    assert!(st.map(|s| s.success()).unwrap_or(false));
}

#[test]
fn bad_input_gives_one_line_errors() {
    if !sandbox_or_skip("bad_input_gives_one_line_errors") {
        return;
    }
    let reg = Registry::new();
    let cases: &[(&[&str], &str)] = &[
        (&["stop", "nosuchid"], "no such sandbox"),
        (&["exec", "../../etc", "--", "true"], "invalid sandbox id"),
        (
            &["run", "--env", "1BAD=x", "--", "true"],
            "invalid variable name",
        ),
        (&["run", "--env", "NOEQUALS", "--", "true"], "expected K=V"),
        (
            &["run", "--volume", "/tmp:relative", "--", "true"],
            "must be absolute",
        ),
        (
            &["run", "--volume", "/nonexistent-dir:/data", "--", "true"],
            "bad --volume",
        ),
        (
            &["run", "--rootfs", "/nonexistent-rootfs", "--", "true"],
            "bad --rootfs",
        ),
    ];
    for (args, want) in cases {
        let out = reg.command().args(*args).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.starts_with("svkit-sandbox: fatal: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
    }
    assert!(reg.entries().is_empty());
    // Not root: refuse in one line, before touching anything.
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(svkit_testkit::bin("svkit-sandbox"))
        .args(["run", "--", "true"])
        .env("SVKIT_SANDBOX_DIR", reg.dir.path())
        .output()
        .expect("setpriv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125));
    assert!(err.contains("must run as root"), "{err}");
    // s6 missing from PATH.
    let out = reg
        .command()
        .env("PATH", "/usr/sbin:/sbin")
        .args(["run", "--", "true"])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125));
    assert!(err.contains("not found on PATH"), "{err}");
}

/// s6-overlay's `S6_BEHAVIOUR_IF_STAGE2_FAILS`: a failing cont-init hook is
/// passed over (0, the default, and anything not a number), warned about
/// (1), or stops the container before its services and CMD, exiting 1 (2).
/// Later hooks run in every case, as s6-overlay's loop runs them all.
#[test]
fn a_failing_cont_init_hook_follows_s6_behaviour_if_stage2_fails() {
    if !sandbox_or_skip("a_failing_cont_init_hook_follows_s6_behaviour_if_stage2_fails") {
        return;
    }
    let rootfs = tempfile::tempdir().expect("tempdir");
    let r = rootfs.path();
    script(r, "etc/cont-init.d/10-fails", "#!/bin/sh\nexit 3\n");
    script(
        r,
        "etc/cont-init.d/20-after",
        "#!/bin/sh\ntouch /data/after\n",
    );
    const WARNING: &str = "cont-init: warning: some scripts exited nonzero";
    for (value, code, warned, cmd_ran) in [
        (None, 0, false, true),
        (Some("0"), 0, false, true),
        (Some("junk"), 0, false, true),
        (Some("1"), 0, true, true),
        (Some("2"), 1, true, false),
        (Some("3"), 1, true, false),
    ] {
        let data = tempfile::tempdir().expect("tempdir");
        let reg = Registry::new();
        let mut cmd = reg.command();
        cmd.args(["run", "--rootfs", r.to_str().expect("utf8"), "--volume"])
            .arg(format!("{}:/data", data.path().display()));
        if let Some(v) = value {
            cmd.args(["--env", &format!("S6_BEHAVIOUR_IF_STAGE2_FAILS={v}")]);
        }
        let out = cmd
            .args(["--", "touch", "/data/cmd"])
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        let case = format!("S6_BEHAVIOUR_IF_STAGE2_FAILS={value:?}");
        assert_eq!(out.status.code(), Some(code), "{case}: {err}");
        assert!(data.path().join("after").exists(), "{case}: later hooks");
        assert_eq!(data.path().join("cmd").exists(), cmd_ran, "{case}: CMD");
        assert_eq!(err.contains(WARNING), warned, "{case}: {err}");
        assert_eq!(
            err.contains("stopping the container"),
            !cmd_ran,
            "{case}: {err}"
        );
    }
}

/// What Docker gives a container and the sandbox must too: its own network
/// (two sandboxes bind the same port), hostname, Docker's capability set
/// (no CAP_SYS_PTRACE, no CAP_SYS_ADMIN), a rootfs that wins over the
/// workspace binaries, and `/` keeping its mode whatever the rootfs dir's.
#[test]
fn isolated_like_a_container() {
    if !sandbox_or_skip("isolated_like_a_container") {
        return;
    }
    let rootfs = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(rootfs.path(), fs::Permissions::from_mode(0o700)).expect("chmod");
    script(
        rootfs.path(),
        "usr/local/bin/svkit-lifeline",
        "#!/bin/sh\necho the image own lifeline\n",
    );
    let r = rootfs.path().to_str().expect("utf8");
    // The demo app's sidecar listens on 127.0.0.1:PORT.
    let port = 18555u16;
    let listen = ["app", "sidecar", "--port", "18555"];
    let a = Sandbox::start(&["--rootfs", r], &listen);
    let b = Sandbox::start(&["--rootfs", r], &listen);
    // A listening socket on the port, read from each sandbox's own netns.
    let needle = format!(":{port:04X} 00000000:0000 0A");
    let listening = |sbx: &Sandbox| {
        let o = sbx.exec(&["grep", "-c", &needle, "/proc/net/tcp"]);
        stdout(&o).trim() == "1"
    };
    poll(
        "both listen on the same port",
        Duration::from_secs(20),
        || (listening(&a) && listening(&b)).then_some(()),
    );
    assert_eq!(stdout(&a.sh("hostname")).trim(), a.id);
    assert_ne!(stdout(&a.sh("hostname")), stdout(&b.sh("hostname")));
    let caps = stdout(&a.sh("grep ^CapEff /proc/self/status"));
    assert_eq!(
        caps.split_whitespace().nth(1),
        Some("00000000a80425fb"),
        "{caps}"
    );
    let init_caps = stdout(&a.sh("grep ^CapEff /proc/1/status"));
    assert_eq!(
        init_caps.split_whitespace().nth(1),
        Some("00000000a80425fb")
    );
    assert_eq!(stdout(&a.sh("svkit-lifeline")), "the image own lifeline\n");
    assert_eq!(stdout(&a.sh("stat -c %a /")), "755\n");
    a.stop();
    b.stop();
}
