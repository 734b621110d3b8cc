//! End-to-end tests of `svkit-lifeline` (real processes, real loopback
//! sockets, deadline polls only). Binding: the child dies with its parent, by pdeathsig or stdin EOF.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod cli_common;
#[path = "../../svkit/tests/lifeline_common/mod.rs"]
mod common;

#[allow(unused_imports)]
use cli_common::*;
use common::*;

/// How long a bound child may take to go once its binding fired. The
/// kernel acts at once and lifeline's orderly stop takes milliseconds; this
/// leaves a loaded machine room. The control below watches as long.
const PROMPTLY: Duration = Duration::from_secs(5);

#[test]
fn child_stdin_is_a_pipe_and_sees_watch_env() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let info = dir.path().join("info");
    let o = lifeline_output(
        &[],
        &srv,
        &[format!("info={}", info.display()), "exit=7".into()],
    );
    assert_eq!(
        o.status.code(),
        Some(7),
        "exit code is the child's: {}",
        stderr(&o)
    );
    let v = read_info(&info, LONG);
    assert!(v["stdin"].as_str().unwrap().starts_with("pipe:"), "{v}");
    assert_eq!(v["watch"], "1");
}

#[test]
fn parent_kill9_pdeathsig_path_stops_child_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let info = dir.path().join("info");
    let port = free_port("127.0.0.1").to_string();
    // stdin is /dev/null and --watch-stdin is off: only pdeathsig can act.
    let mut gw = gateway(
        "null",
        &s(&["--port", &port]),
        &srv,
        &[format!("port={port}"), format!("info={}", info.display())],
    );
    let pid = info_pid(&info);
    let ll = lifeline_pid_of(pid);
    let _r = Reaper(vec![pid, ll]);
    kill(gw.id() as i32, 9);
    gw.wait().unwrap();
    assert!(
        wait_for(PROMPTLY, || is_gone(pid)),
        "child still alive {PROMPTLY:?} after its gateway was killed -9"
    );
    assert!(
        wait_for(LONG, || is_gone(ll)),
        "lifeline exits after stopping the child"
    );
}

#[test]
fn parent_kill9_stdin_eof_path_stops_child_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let info = dir.path().join("info");
    // Parent deathsig off: only EOF on lifeline's stdin can act.
    let mut gw = gateway(
        "pipe",
        &s(&["--watch-stdin", "--no-parent-deathsig"]),
        &srv,
        &[
            format!("port={}", free_port("127.0.0.1")),
            format!("info={}", info.display()),
        ],
    );
    let pid = info_pid(&info);
    let ll = lifeline_pid_of(pid);
    let _r = Reaper(vec![pid, ll]);
    kill(gw.id() as i32, 9);
    gw.wait().unwrap();
    assert!(
        wait_for(PROMPTLY, || is_gone(pid)),
        "child still alive {PROMPTLY:?} after its gateway was killed -9"
    );
    assert!(wait_for(LONG, || is_gone(ll)));
}

#[test]
fn control_without_either_binding_the_child_outlives_the_parent() {
    // Proves the two tests above test something: with both bindings off
    // the child survives its gateway.
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let info = dir.path().join("info");
    let port = free_port("127.0.0.1");
    let mut gw = gateway(
        "pipe",
        &s(&["--no-parent-deathsig"]),
        &srv,
        &[format!("port={port}"), format!("info={}", info.display())],
    );
    let pid = info_pid(&info);
    let ll = lifeline_pid_of(pid);
    let _r = Reaper(vec![pid, ll]);
    kill(gw.id() as i32, 9);
    gw.wait().unwrap();
    assert!(wait_for(LONG, || listening("127.0.0.1", port)));
    assert!(
        !wait_for(PROMPTLY, || is_gone(pid)),
        "unbound child should have survived"
    );
    kill(ll, 15);
    assert!(
        wait_for(LONG, || is_gone(pid)),
        "SIGTERM to lifeline stops the child"
    );
}

#[test]
fn lifeline_kill9_child_pdeathsig_kills_child_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let info = dir.path().join("info");
    let mut ll = lifeline(
        &[],
        &srv,
        &[
            format!("port={}", free_port("127.0.0.1")),
            format!("info={}", info.display()),
        ],
    );
    let pid = info_pid(&info);
    let _r = Reaper(vec![pid]);
    kill(ll.id() as i32, 9);
    ll.wait().unwrap();
    assert!(
        wait_for(PROMPTLY, || is_gone(pid)),
        "child outlived lifeline's hard death by {PROMPTLY:?}"
    );
}

#[test]
fn port_free_no_kill_then_sigterm_stops_with_child_code() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1");
    let state = dir.path().join("state.json");
    let info = dir.path().join("info");
    let p = port.to_string();
    let child = lifeline(
        &s(&[
            "--port",
            &p,
            "--ready",
            "tcp",
            "--state",
            state.to_str().unwrap(),
        ]),
        &srv,
        &[format!("port={p}"), format!("info={}", info.display())],
    );
    let _r = Reaper(vec![child.id() as i32]);
    assert!(
        wait_for(LONG, || state.exists()),
        "state file written once ready"
    );
    let pid = info_pid(&info);
    assert_eq!(state_pid(&state), pid as i64);
    assert_eq!(
        fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let out = child.wait_with_output_after_term();
    assert_eq!(
        out.0,
        128 + 15,
        "python dies of SIGTERM: lifeline exits 143; stderr: {}",
        out.1
    );
    assert!(
        !out.1.contains("reaped"),
        "nothing to reap on a free port: {}",
        out.1
    );
    assert!(is_gone(pid));
    assert!(!state.exists(), "state file removed on stop");
}

/// `docker exec` starts lifeline with its parent outside the container's
/// PID namespace (getppid() is 0), and under `-d` that parent exits at
/// once: binding to it would kill lifeline at random. Lifeline says it is
/// not bound and runs the child to its end.
#[test]
fn parent_outside_the_pid_namespace_is_not_bound_to() {
    if !svkit_testkit::root_or_skip(
        "parent_outside_the_pid_namespace_is_not_bound_to",
        "a PID namespace",
    ) {
        return;
    }
    let o = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "--"])
        .arg(bin())
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("outside this PID namespace"), "{err}");
}
