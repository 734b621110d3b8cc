//! The reference deployment's `docker run IMAGE gateway run` tests, ported
//! to the sandbox with the demo rootfs (names kept recognizable).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::Path;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, Sandbox};

mod demo_image;
use demo_image::workspace;

struct Container {
    sbx: Sandbox,
    _data: tempfile::TempDir,
}

/// `docker run [-e ...] IMAGE CMD...` with the demo image's rootfs.
fn start(env: &[&str], cmd: &[&str], extra_rootfs: Option<&Path>) -> Container {
    let data = tempfile::tempdir().expect("tempdir");
    Container {
        sbx: start_on(data.path(), env, cmd, extra_rootfs),
        _data: data,
    }
}

/// [`start`] with a data volume that outlives the container.
fn start_on(data: &Path, env: &[&str], cmd: &[&str], extra_rootfs: Option<&Path>) -> Sandbox {
    let mut env = env.to_vec();
    env.push("APP_HEARTBEAT_MS=500");
    demo_image::start(data, &env, cmd, extra_rootfs.as_slice())
}

fn wants_up(sbx: &Sandbox, slot: &str) -> bool {
    // Supervised first: a slot s6-svscan has not picked up yet would read
    // as "not wanted up" and make a negative check pass for nothing.
    poll(
        &format!("{slot} supervised"),
        Duration::from_secs(10),
        || {
            sbx.sh(&format!("s6-svok /run/service/{slot}"))
                .status
                .success()
                .then_some(())
        },
    );
    stdout(&sbx.sh(&format!("s6-svstat -o wantedup /run/service/{slot}"))).trim() == "true"
}

/// The CMD process (stage 2's child): pid, comm, argv.
fn cmd_process(sbx: &Sandbox) -> (String, String, Vec<String>) {
    let p = sbx.cmd_pid();
    if p.is_empty() || p.contains('\n') {
        return (p, String::new(), Vec::new());
    }
    let o = sbx.sh(&format!(
        "echo {p}; cat /proc/{p}/comm; tr '\\0' '\\n' < /proc/{p}/cmdline"
    ));
    let text = stdout(&o);
    let mut lines = text.lines().map(String::from);
    let pid = lines.next().unwrap_or_default();
    let comm = lines.next().unwrap_or_default();
    (pid, comm, lines.collect())
}

/// Processes whose comm is `name`.
fn count_comm(sbx: &Sandbox, name: &str) -> usize {
    let o = sbx.sh(&format!(
        "grep -lx '{name}' /proc/[0-9]*/comm 2>/dev/null | wc -l"
    ));
    stdout(&o).trim().parse().unwrap_or(usize::MAX)
}

/// Keep-alives: s6-pause processes (s6-overlay itself runs none).
fn keep_alives(sbx: &Sandbox) -> usize {
    count_comm(sbx, "s6-pause")
}

fn app_gateway_processes(sbx: &Sandbox) -> usize {
    let o = sbx.sh(
        "for p in /proc/[0-9]*; do [ \"$(cat $p/comm 2>/dev/null)\" = app ] && tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'gateway run' && echo $p; done | wc -l",
    );
    stdout(&o).trim().parse().unwrap_or(usize::MAX)
}

#[test]
fn test_gateway_run_redirects_to_supervised() {
    if !sandbox_or_skip("test_gateway_run_redirects_to_supervised") {
        return;
    }
    let c = start(&[], &["gateway", "run"], None);
    let logs = c
        .sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(logs.contains("s6 supervision"), "no breadcrumb: {logs}");
    assert!(
        logs.contains("--no-supervise") && logs.contains("APP_GATEWAY_NO_SUPERVISE=1"),
        "{logs}"
    );
    assert!(wants_up(&c.sbx, "gateway-default"));
    // The CMD process keeps its pid, now s6-overlay's s6-pause: exactly
    // one keep-alive, and no sleep binary.
    let (pid, comm, argv) = poll("the keep-alive", Duration::from_secs(10), || {
        let p = cmd_process(&c.sbx);
        (p.1 == "s6-pause").then_some(p)
    });
    assert_eq!((comm.as_str(), argv.len()), ("s6-pause", 1), "{argv:?}");
    assert_eq!(keep_alives(&c.sbx), 1);
    assert_eq!(count_comm(&c.sbx, "svkit-wrap"), 0);
    assert_eq!(count_comm(&c.sbx, "sleep"), 0, "no sleep binary involved");
    // Small: what it alone holds (its private pages) stays under 256 KiB.
    let o = c.sbx.sh(&format!(
        "awk '/^Private_(Clean|Dirty):/ {{ k += $2 }} END {{ print k }}' /proc/{pid}/smaps_rollup"
    ));
    let private_kb: u64 = stdout(&o).trim().parse().unwrap_or(u64::MAX);
    assert!(
        private_kb <= 256,
        "keep-alive private memory {private_kb} KiB"
    );
    // The container keeps running: stop is the only way out, and a clean
    // one: 0, s6-overlay's default for a stopped container.
    assert_eq!(c.sbx.stop(), 0);
}

/// The redirect's slot is essential: when it fails for good (the demo app
/// exits 78 on a bad config), the container ends with that code. An
/// operator's stop of it never ends the container.
#[test]
fn an_essential_slot_ends_the_container_with_its_code() {
    if !sandbox_or_skip("an_essential_slot_ends_the_container_with_its_code") {
        return;
    }
    let c = start(&[], &["gateway", "run"], None);
    c.sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(wants_up(&c.sbx, "gateway-default"));
    let o = c.sbx.exec(&["svctl", "stop", "--wait", "gateway-default"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(c.sbx.stop(), 0, "a stop asked for ends nothing");

    let c = start(&["APP_CONFIG_BAD=1"], &["gateway", "run"], None);
    let logs = c.sbx.wait_for_log(
        "is essential: stopping the container with exit code 78",
        Duration::from_secs(30),
    );
    assert_eq!(c.sbx.wait_exit(Duration::from_secs(30)), 78, "{logs}");
}

/// A redirect's slot is essential in that container: when a dependency it
/// waits for fails for good, it can never start, and the container ends
/// with 69 (EX_UNAVAILABLE), saying why.
#[test]
fn a_redirect_whose_dependency_fails_for_good_ends_the_container() {
    if !sandbox_or_skip("a_redirect_whose_dependency_fails_for_good_ends_the_container") {
        return;
    }
    let layer = tempfile::tempdir().expect("tempdir");
    let config =
        fs::read_to_string(workspace().join("rootfs/etc/svkit/10-app.json")).expect("read");
    let config = config
        .replace(
            r#""env": { "HOME": "/data" },
      "cwd": "/data","#,
            r#""env": { "HOME": "/data" },
      "cwd": "/data",
      "depends_on": { "migrate": "completed" },"#,
        )
        .replace(
            r#""slots": ["#,
            r#""slots": [
    { "name": "migrate", "type": "oneshot", "command": ["sh", "-c", "exit 1"],
      "restart": { "max_deaths": 2 } },"#,
        );
    assert!(config.contains(r#""depends_on": { "migrate""#), "{config}");
    fs::create_dir_all(layer.path().join("etc/svkit")).expect("mkdir");
    fs::write(layer.path().join("etc/svkit/10-app.json"), config).expect("write");
    let c = start(&[], &["gateway", "run"], Some(layer.path()));
    let logs = c.sbx.wait_for_log(
        "slot gateway-default is essential: stopping the container with exit code 69",
        Duration::from_secs(40),
    );
    assert!(
        logs.contains(
            "could not start: dependency migrate failed for good: died 2 times within 60 s"
        ),
        "{logs}"
    );
    assert_eq!(c.sbx.wait_exit(Duration::from_secs(30)), 69, "{logs}");
}

/// `remember` keeps what operators chose: a redirect persists nothing, and
/// a later opt-out run on the same volume never runs beside the slot an
/// operator started (it stops it for its own life, not remembered).
#[test]
fn a_redirect_remembers_nothing_and_an_opt_out_displaces_its_slot() {
    if !sandbox_or_skip("a_redirect_remembers_nothing_and_an_opt_out_displaces_its_slot") {
        return;
    }
    let data = tempfile::tempdir().expect("tempdir");
    let desired = data.path().join(".svkit/desired/gateway-default");
    let sbx = start_on(data.path(), &[], &["gateway", "run"], None);
    sbx.wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(wants_up(&sbx, "gateway-default"));
    assert!(!desired.exists(), "a redirect persisted a desired state");
    // An operator's start is remembered.
    let o = sbx.exec(&["svctl", "start", "gateway-default"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::read_to_string(&desired).expect("desired").trim(), "up");
    assert_eq!(sbx.stop(), 0);

    let sbx = start_on(
        data.path(),
        &[],
        &["gateway", "run", "--no-supervise"],
        None,
    );
    let (_, comm, _) = poll("app is the CMD process", Duration::from_secs(30), || {
        let p = cmd_process(&sbx);
        (p.1 == "app").then_some(p)
    });
    assert_eq!(comm, "app");
    let logs = sbx.wait_for_log("runs the same program", Duration::from_secs(10));
    assert!(!logs.contains("s6 supervision"), "{logs}");
    assert!(!wants_up(&sbx, "gateway-default"));
    poll("one gateway", Duration::from_secs(10), || {
        (app_gateway_processes(&sbx) == 1).then_some(())
    });
    // The operator's choice stands for the next boot.
    assert_eq!(fs::read_to_string(&desired).expect("desired").trim(), "up");
}

/// With `S6_CMD_RECEIVE_SIGNALS=1`, s6-overlay hands docker stop's SIGTERM
/// to the CMD instead: the keep-alive ends with 128+15, and that is the
/// container's exit code.
#[test]
fn stop_with_cmd_receive_signals_exits_143() {
    if !sandbox_or_skip("stop_with_cmd_receive_signals_exits_143") {
        return;
    }
    let c = start(&["S6_CMD_RECEIVE_SIGNALS=1"], &["gateway", "run"], None);
    let logs = c
        .sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(logs.contains("s6 supervision"), "no breadcrumb: {logs}");
    assert_eq!(c.sbx.stop(), 143);
}

#[test]
fn test_gateway_run_no_supervise_flag_preserves_legacy_behavior() {
    if !sandbox_or_skip("test_gateway_run_no_supervise_flag_preserves_legacy_behavior") {
        return;
    }
    let c = start(&[], &["gateway", "run", "--no-supervise"], None);
    foreground_checks(&c.sbx);
}

#[test]
fn test_gateway_run_no_supervise_env_var() {
    if !sandbox_or_skip("test_gateway_run_no_supervise_env_var") {
        return;
    }
    let c = start(&["APP_GATEWAY_NO_SUPERVISE=1"], &["gateway", "run"], None);
    foreground_checks(&c.sbx);
}

fn foreground_checks(sbx: &Sandbox) {
    // The app becomes the CMD process (exec), without the opt-out flag.
    let (_, comm, argv) = poll("app is the CMD process", Duration::from_secs(30), || {
        let p = cmd_process(sbx);
        (p.1 == "app").then_some(p)
    });
    assert_eq!(comm, "app");
    assert!(!argv.iter().any(|a| a == "--no-supervise"), "{argv:?}");
    assert_eq!(&argv[..3], &["app", "gateway", "run"]);
    sbx.wait_for_log("⚕ gateway default up", Duration::from_secs(10));
    assert!(!sbx.logs().contains("s6 supervision"));
    assert_eq!(count_comm(sbx, "svkit-wrap"), 0);
    // The slot exists (reconcile made it at boot) but is not wanted up.
    assert!(sbx.root().join("run/service/gateway-default").is_dir());
    assert!(!wants_up(sbx, "gateway-default"));
    // The app runs as the image's user.
    let o = sbx.sh(&format!("stat -c %U /proc/{}", sbx.cmd_pid()));
    assert_eq!(stdout(&o).trim(), "app");
}

#[test]
fn test_supervised_gateway_does_not_recurse() {
    if !sandbox_or_skip("test_supervised_gateway_does_not_recurse") {
        return;
    }
    // The slot's own command goes through the wrapper, as an image whose
    // `app` is itself a wrapper script would.
    let layer = tempfile::tempdir().expect("tempdir");
    let config =
        fs::read_to_string(workspace().join("rootfs/etc/svkit/10-app.json")).expect("read");
    let config = config.replace(
        r#""command": ["app", "-p", "{instance}", "gateway", "run", "--replace"]"#,
        r#""command": ["svkit-wrap", "--", "app", "-p", "{instance}", "gateway", "run", "--replace"]"#,
    );
    assert!(config.contains("svkit-wrap"));
    fs::create_dir_all(layer.path().join("etc/svkit")).expect("mkdir");
    fs::write(layer.path().join("etc/svkit/10-app.json"), config).expect("write");
    let c = start(&[], &["gateway", "run"], Some(layer.path()));
    c.sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    poll("the supervised gateway up", Duration::from_secs(20), || {
        (app_gateway_processes(&c.sbx) == 1).then_some(())
    });
    c.sbx
        .wait_for_log("⚕ gateway default up", Duration::from_secs(10));
    // Give a recursion every chance to show: several heartbeats later there
    // is still one gateway and one keep-alive.
    let beats = |s: &Sandbox| s.logs().matches("⚕ gateway default heartbeat").count();
    let start_beats = beats(&c.sbx);
    poll("three more heartbeats", Duration::from_secs(20), || {
        (beats(&c.sbx) >= start_beats + 3).then_some(())
    });
    assert_eq!(app_gateway_processes(&c.sbx), 1);
    assert_eq!(keep_alives(&c.sbx), 1);
    assert_eq!(c.sbx.logs().matches("s6 supervision").count(), 1);
    c.sbx.stop();
}

#[test]
fn test_dashboard_supervised_when_env_set() {
    if !sandbox_or_skip("test_dashboard_supervised_when_env_set") {
        return;
    }
    let c = start(&["APP_DASHBOARD=1"], &["gateway", "run"], None);
    c.sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(wants_up(&c.sbx, "gateway-default"));
    assert!(wants_up(&c.sbx, "dashboard"));
    c.sbx.stop();
    let c = start(&[], &["gateway", "run"], None);
    c.sbx
        .wait_for_log("s6 supervision", Duration::from_secs(30));
    assert!(wants_up(&c.sbx, "gateway-default"));
    assert!(!wants_up(&c.sbx, "dashboard"));
    c.sbx.stop();
}

#[test]
fn banner_reaches_docker_logs_and_the_timestamped_log_file() {
    if !sandbox_or_skip("banner_reaches_docker_logs_and_the_timestamped_log_file") {
        return;
    }
    let c = start(&[], &["gateway", "run"], None);
    let logs = c
        .sbx
        .wait_for_log("⚕ gateway default up", Duration::from_secs(30));
    assert!(logs.contains("⚕ gateway default up"), "{logs}");
    let current = c.sbx.root().join("data/logs/gateways/default/current");
    let line = poll("banner in current", Duration::from_secs(10), || {
        let text = fs::read_to_string(&current).ok()?;
        text.lines()
            .find(|l| l.contains("⚕ gateway default up"))
            .map(String::from)
    });
    // s6-log's T: an ISO 8601 stamp (`YYYY-MM-DD hh:mm:ss.n`), then the line.
    let b = line.as_bytes();
    let stamp_ok = b.len() > 20
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b' ' || b[10] == b'T')
        && b[13] == b':';
    assert!(stamp_ok, "{line}");
    c.sbx.stop();
}

/// svkit-wrap on this host (not under s6), with a config redirecting
/// `sh -c` into a slot `job` (opt-out flag `--no-supervise`); the config
/// dir and the scandir live in the returned temp dir.
fn wrap_with_sh_redirect() -> (tempfile::TempDir, std::process::Command) {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(
        dir.path().join("10.json"),
        r#"{ "slots": [ { "name": "job", "command": ["sh", "-c", "exit 42"] } ],
             "redirects": [ { "match": ["sh", "-c"], "slot": "job", "opt_out_flag": "--no-supervise" } ] }"#,
    )
    .expect("write");
    let mut wrap = std::process::Command::new(svkit_testkit::tool("svkit-wrap"));
    wrap.env("SVKIT_CONFIG_DIR", dir.path())
        .env("SVKIT_SCANDIR", dir.path().join("scandir"));
    (dir, wrap)
}

#[test]
fn outside_s6_runs_in_the_foreground_with_one_warning() {
    if std::fs::read_to_string("/proc/1/comm").is_ok_and(|c| c.trim() == "s6-svscan") {
        svkit_testkit::skip(
            "outside_s6_runs_in_the_foreground_with_one_warning",
            "this host runs s6-svscan as PID 1",
        );
        return;
    }
    let (dir, mut wrap) = wrap_with_sh_redirect();
    let out = wrap
        .args(["--", "sh", "-c", "exit 42"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(42));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("s6 supervision unavailable") && err.contains("not s6-svscan"),
        "{err}"
    );
    assert!(
        !dir.path().join("scandir").exists(),
        "nothing rendered outside s6"
    );
}

#[test]
fn bad_config_or_missing_program_fails_clearly_without_looping() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(
        dir.path().join("10.json"),
        r#"{ "slots": [ { "name": "Bad/Name", "command": [] } ] }"#,
    )
    .expect("write");
    let run = |args: &[&str]| {
        std::process::Command::new(svkit_testkit::tool("svkit-wrap"))
            .args(args)
            .env("SVKIT_CONFIG_DIR", dir.path())
            .output()
            .expect("run")
    };
    let out = run(&["--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("svkit-wrap: fatal: invalid config") && err.contains("10.json"),
        "{err}"
    );
    fs::write(dir.path().join("10.json"), r#"{ "slots": [] }"#).expect("write");
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(100), "no argv, no default_program");
    let out = run(&["--", "/nonexistent/prog"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unable to exec /nonexistent/prog"));
}

#[test]
fn a_closed_stdout_ends_quietly() {
    use svkit_testkit::{assert_quiet_on_closed_stdout, output_with_closed_stdout};
    for argv in [&["--help"][..], &["-h"][..], &["--version"][..]] {
        let o = output_with_closed_stdout(
            std::process::Command::new(svkit_testkit::tool("svkit-wrap")).args(argv),
        );
        assert_quiet_on_closed_stdout(&format!("{argv:?}"), &o, 0);
    }
}

/// The ENTRYPOINT must not die on bytes that are not UTF-8, in argv or in
/// the environment: they reach the command unchanged.
#[test]
fn bytes_that_are_not_utf8_pass_through() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (_dir, mut wrap) = wrap_with_sh_redirect();
    let arg = OsStr::from_bytes(b"caf\xe9 \xff");
    let out = wrap
        .args([
            "--",
            "sh",
            "-c",
            "printf '%s|%s' \"$1\" \"$SVKIT_TEST_BYTES\"",
            "sh",
        ])
        .arg(arg)
        .arg("--no-supervise")
        .env("SVKIT_TEST_BYTES", OsStr::from_bytes(b"\xfe\xfd"))
        .env(OsStr::from_bytes(b"SVKIT_TEST_\xff"), "x")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.stdout, b"caf\xe9 \xff|\xfe\xfd");
}
