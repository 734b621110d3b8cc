//! End-to-end tests of `svkit-lifeline`: real processes, real loopback
//! sockets, deadline polls only.

#[path = "../../svkit/tests/lifeline_common/mod.rs"]
mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_svkit-lifeline");
const LONG: Duration = Duration::from_secs(10);
const ONE_SECOND: Duration = Duration::from_secs(1);

/// Starts lifeline in the background with `opts -- server args`.
fn lifeline(opts: &[String], server: &[String], args: &[String]) -> Child {
    Command::new(BIN)
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn lifeline_output(opts: &[String], server: &[String], args: &[String]) -> Output {
    Command::new(BIN)
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn state_pid(path: &Path) -> i64 {
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    v["pid"].as_i64().unwrap()
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

trait TermWait {
    fn wait_with_output_after_term(self) -> (i32, String);
}

impl TermWait for Child {
    fn wait_with_output_after_term(self) -> (i32, String) {
        kill(self.id() as i32, 15);
        let o = self.wait_with_output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

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

/// A gateway-like parent that starts lifeline holding its stdin pipe
/// (`pipe`) or giving it /dev/null (`null`).
const GATEWAY_PY: &str = r#"
import subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE if sys.argv[1] == "pipe" else subprocess.DEVNULL)
p.wait()
"#;

fn gateway(mode: &str, opts: &[String], server: &[String], args: &[String]) -> Child {
    Command::new(python())
        .arg("-c")
        .arg(GATEWAY_PY)
        .arg(mode)
        .arg(BIN)
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

fn lifeline_pid_of(child_pid: i32) -> i32 {
    let st = fs::read_to_string(format!("/proc/{child_pid}/stat")).unwrap();
    st[st.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn parent_kill9_pdeathsig_path_stops_child_within_1s() {
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
        wait_for(ONE_SECOND, || is_gone(pid)),
        "child still alive 1 s after its gateway was killed -9"
    );
    assert!(
        wait_for(LONG, || is_gone(ll)),
        "lifeline exits after stopping the child"
    );
}

#[test]
fn parent_kill9_stdin_eof_path_stops_child_within_1s() {
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
        wait_for(ONE_SECOND, || is_gone(pid)),
        "child still alive 1 s after its gateway was killed -9"
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
        !wait_for(ONE_SECOND, || is_gone(pid)),
        "unbound child should have survived"
    );
    kill(ll, 15);
    assert!(
        wait_for(LONG, || is_gone(pid)),
        "SIGTERM to lifeline stops the child"
    );
}

#[test]
fn lifeline_kill9_child_pdeathsig_kills_child_within_1s() {
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
        wait_for(ONE_SECOND, || is_gone(pid)),
        "child outlived lifeline's hard death"
    );
}

#[test]
fn stale_instance_from_state_file_is_reaped_and_port_reused() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let state = dir.path().join("state.json");
    let port = free_port("127.0.0.1").to_string();
    let opts = s(&[
        "--port",
        &port,
        "--ready",
        "tcp",
        "--state",
        state.to_str().unwrap(),
    ]);
    // Previous generation: lifeline not bound to its gateway, gateway killed -9.
    let mut o1 = opts.clone();
    o1.push("--no-parent-deathsig".into());
    let info1 = dir.path().join("info1");
    let mut gw = gateway(
        "null",
        &o1,
        &srv,
        &[format!("port={port}"), format!("info={}", info1.display())],
    );
    assert!(wait_for(LONG, || state.exists()));
    let old = info_pid(&info1);
    let old_ll = lifeline_pid_of(old);
    let _r = Reaper(vec![old, old_ll]);
    kill(gw.id() as i32, 9);
    gw.wait().unwrap();
    assert!(
        !is_gone(old) && listening("127.0.0.1", port.parse().unwrap()),
        "stale instance still bound"
    );

    let info2 = dir.path().join("info2");
    let new = lifeline(
        &opts,
        &srv,
        &[format!("port={port}"), format!("info={}", info2.display())],
    );
    let new_pid = info_pid(&info2);
    let _r2 = Reaper(vec![new.id() as i32, new_pid]);
    assert!(
        wait_for(LONG, || state.exists()
            && state_pid(&state) == new_pid as i64),
        "new child recorded once ready"
    );
    assert!(is_gone(old), "stale instance reaped");
    assert!(
        wait_for(LONG, || is_gone(old_ll)),
        "the stale lifeline exits with its child"
    );
    assert_eq!(
        state_pid(&state),
        new_pid as i64,
        "the old lifeline left the new record alone"
    );
    let which = Command::new(BIN)
        .args(["--which-port", &port])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&which.stdout).into_owned();
    assert!(
        line.starts_with(&format!("{new_pid}\t")),
        "new child owns the port: {line}"
    );
    let (code, err) = new.wait_with_output_after_term();
    assert_eq!(code, 143);
    assert!(err.contains("reaped stale"), "{err}");
}

#[test]
fn stale_instance_ignoring_sigterm_is_killed_after_grace() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let state = dir.path().join("state.json");
    let port = free_port("127.0.0.1").to_string();
    let info1 = dir.path().join("info1");
    let opts = s(&[
        "--port",
        &port,
        "--ready",
        "tcp",
        "--state",
        state.to_str().unwrap(),
    ]);
    // --child-deathsig term + a child that ignores TERM: survives lifeline -9.
    let mut o1 = opts.clone();
    o1.extend(s(&["--child-deathsig", "term"]));
    let mut ll = lifeline(
        &o1,
        &srv,
        &[
            format!("port={port}"),
            "ignore_term=1".into(),
            format!("info={}", info1.display()),
        ],
    );
    assert!(wait_for(LONG, || state.exists()));
    let old = info_pid(&info1);
    let _r = Reaper(vec![old]);
    kill(ll.id() as i32, 9);
    ll.wait().unwrap();
    assert!(
        !wait_for(Duration::from_millis(300), || is_gone(old)),
        "TERM-ignoring child survives"
    );

    let mut o2 = opts.clone();
    o2.extend(s(&["--grace", "300ms"]));
    let info2 = dir.path().join("info2");
    let new = lifeline(
        &o2,
        &srv,
        &[format!("port={port}"), format!("info={}", info2.display())],
    );
    let new_pid = info_pid(&info2);
    let _r2 = Reaper(vec![new.id() as i32, new_pid]);
    assert!(wait_for(LONG, || state.exists()
        && state_pid(&state) == new_pid as i64));
    assert!(is_gone(old));
    let (_, err) = new.wait_with_output_after_term();
    assert!(
        err.contains(&format!("SIGKILL needed for [{old}]")),
        "{err}"
    );
}

#[test]
fn match_reaps_same_program_and_prefix_but_not_a_stranger() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1").to_string();
    // An earlier instance started by hand: same script and port argument,
    // a different trailing argument (a token the new one does not know).
    let mut stale = start_server(&srv, &[format!("port={port}"), "tag=old-token".into()]);
    let _r = Reaper(vec![stale.id() as i32]);
    assert!(wait_for(LONG, || listening(
        "127.0.0.1",
        port.parse().unwrap()
    )));

    // --match (all arguments): the token differs, so it is a stranger.
    let o = lifeline_output(
        &s(&["--port", &port, "--match"]),
        &srv,
        &[format!("port={port}"), "tag=new-token".into()],
    );
    assert_eq!(o.status.code(), Some(101), "{}", stderr(&o));
    assert!(stderr(&o).contains("arguments differ"), "{}", stderr(&o));
    assert!(!is_gone(stale.id() as i32));

    // --match=2: script and port= compared, the token not.
    let info = dir.path().join("info");
    let new = lifeline(
        &s(&["--port", &port, "--match=2", "--ready", "tcp"]),
        &srv,
        &[
            format!("port={port}"),
            "tag=new-token".into(),
            format!("info={}", info.display()),
        ],
    );
    let new_pid = info_pid(&info);
    let _r2 = Reaper(vec![new.id() as i32, new_pid]);
    let st = stale.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&st),
        Some(15),
        "reaped with SIGTERM"
    );
    assert!(wait_for(LONG, || listening(
        "127.0.0.1",
        port.parse().unwrap()
    )));
    let (code, _) = new.wait_with_output_after_term();
    assert_eq!(code, 143);
}

#[test]
fn stranger_on_port_is_named_and_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1").to_string();
    let stranger_src = format!(
        "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',{port}))\ns.listen()\ntime.sleep(600)"
    );
    let mut stranger = Command::new(python())
        .arg("-c")
        .arg(&stranger_src)
        .spawn()
        .unwrap();
    let spid = stranger.id() as i32;
    let _r = Reaper(vec![spid]);
    assert!(wait_for(LONG, || listening(
        "127.0.0.1",
        port.parse().unwrap()
    )));
    let marker = dir.path().join("spawned");
    let state = dir.path().join("state.json");
    let o = lifeline_output(
        &s(&[
            "--port",
            &port,
            "--match",
            "--state",
            state.to_str().unwrap(),
        ]),
        &srv,
        &[format!("port={port}"), format!("info={}", marker.display())],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(101), "{err}");
    assert!(err.starts_with("svkit-lifeline: fatal: port "), "{err}");
    assert!(
        err.contains(&format!("pid {spid} ")),
        "names the pid: {err}"
    );
    assert!(
        err.contains("python3") && err.contains("-c"),
        "names the command: {err}"
    );
    assert!(err.contains("nothing was killed"), "{err}");
    assert!(!is_gone(spid), "stranger still runs");
    assert!(listening("127.0.0.1", port.parse().unwrap()));
    assert!(!marker.exists(), "no child was spawned");
    assert!(!state.exists());
    kill(spid, 9);
    let _ = stranger.wait();
}

#[test]
fn socket_of_an_invisible_owner_is_reported() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to run lifeline as nobody");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port("127.0.0.1");
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    // As nobody, /proc/<our pid>/fd is unreadable: the socket has no
    // visible owner.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(BIN)
        .args(["--port", &port.to_string(), "--", "true"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(101), "{err}");
    assert!(err.contains("held by no process we can see"), "{err}");
    drop(holder);
}

#[test]
fn socket_held_from_another_pid_namespace_is_reported() {
    // Lifeline in a fresh PID namespace (own /proc) shares our network
    // namespace: it sees the listening socket but not the process.
    let probe = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        eprintln!("skipped: unshare --pid unavailable");
        return;
    }
    let port = free_port("127.0.0.1");
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let o = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            BIN,
            "--port",
            &port.to_string(),
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(101), "{err}");
    assert!(
        err.contains("held by no process we can see") && err.contains("another PID namespace"),
        "{err}"
    );
    drop(holder);
}

#[test]
fn readiness_tcp_and_http_ok() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1").to_string();
    let state = dir.path().join("s.json");
    let url = format!("http://127.0.0.1:{port}/healthz");
    let ll = lifeline(
        &s(&[
            "--port",
            &port,
            "--ready",
            &url,
            "--state",
            state.to_str().unwrap(),
        ]),
        &srv,
        &[
            format!("port={port}"),
            "http=200".into(),
            "delay=0.3".into(),
        ],
    );
    let _r = Reaper(vec![ll.id() as i32]);
    assert!(wait_for(LONG, || state.exists()), "ready via HTTP 200");
    let (code, err) = ll.wait_with_output_after_term();
    assert_eq!(code, 143, "{err}");
}

#[test]
fn readiness_timeout_and_early_exit_stop_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1").to_string();
    let info = dir.path().join("info");
    // Answers 503 forever: HTTP readiness times out.
    let o = lifeline_output(
        &s(&[
            "--port",
            &port,
            "--ready",
            &format!("http://127.0.0.1:{port}/"),
            "--ready-timeout",
            "400",
            "--grace",
            "1",
        ]),
        &srv,
        &[
            format!("port={port}"),
            "http=503".into(),
            format!("info={}", info.display()),
        ],
    );
    assert_eq!(o.status.code(), Some(103), "{}", stderr(&o));
    assert!(stderr(&o).contains("HTTP status 503"), "{}", stderr(&o));
    assert!(is_gone(info_pid(&info)), "child stopped on timeout");
    assert!(!listening("127.0.0.1", port.parse().unwrap()));

    let o = lifeline_output(
        &s(&["--port", &port, "--ready", "tcp"]),
        &srv,
        &["exit=3".into()],
    );
    assert_eq!(o.status.code(), Some(104), "{}", stderr(&o));
    assert!(stderr(&o).contains("exited with code 3"), "{}", stderr(&o));
}

#[test]
fn ipv6_loopback_ready_and_stale_reaped() {
    if !ipv6_available() {
        eprintln!("skipped: no IPv6 loopback");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("::1").to_string();
    let mut stale = start_server(&srv, &[format!("port={port}"), "host=::1".into()]);
    let _r = Reaper(vec![stale.id() as i32]);
    assert!(wait_for(LONG, || listening("::1", port.parse().unwrap())));
    // The same port on 127.0.0.1 is free: no conflict, nothing reaped.
    let o = lifeline_output(&s(&["--port", &port, "--match"]), &srv, &["exit=0".into()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!is_gone(stale.id() as i32));
    let info = dir.path().join("info");
    let url = format!("http://[::1]:{port}/");
    let new = lifeline(
        &s(&[
            "--port",
            &port,
            "--bind",
            "::1",
            "--match=2",
            "--ready",
            &url,
        ]),
        &srv,
        &[
            format!("port={port}"),
            "host=::1".into(),
            "http=204".into(),
            format!("info={}", info.display()),
        ],
    );
    let new_pid = info_pid(&info);
    let _r2 = Reaper(vec![new.id() as i32, new_pid]);
    stale.wait().unwrap();
    assert!(wait_for(LONG, || listening("::1", port.parse().unwrap())));
    let (code, err) = new.wait_with_output_after_term();
    assert_eq!(code, 143, "{err}");
}

fn assert_refused(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.starts_with("svkit-lifeline: fatal: "), "{err}");
    assert!(err.contains(needle), "want {needle:?} in {err}");
}

#[test]
fn hostile_state_files_are_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("spawned");
    let cmd = s(&["sh", "-c", &format!("touch {}", marker.display())]);
    let port = free_port("127.0.0.1").to_string();
    let run = |state: &Path| {
        lifeline_output(
            &s(&["--port", &port, "--state", state.to_str().unwrap()]),
            &cmd,
            &[],
        )
    };

    let target = dir.path().join("precious");
    fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_refused(&run(&link), 105, "symlink");
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());

    let bad = dir.path().join("bad.json");
    fs::write(&bad, "{\"port\": 1, \"pid\":").unwrap();
    assert_refused(&run(&bad), 105, "malformed JSON");
    assert_eq!(fs::read_to_string(&bad).unwrap(), "{\"port\": 1, \"pid\":");

    if nix::unistd::geteuid().is_root() {
        let foreign = dir.path().join("foreign.json");
        fs::write(
            &foreign,
            r#"{"port":1,"pid":1,"start_time":1,"cmdline":[]}"#,
        )
        .unwrap();
        nix::unistd::chown(&foreign, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        assert_refused(&run(&foreign), 105, "owned by uid 65534");
    }
    assert!(
        !marker.exists(),
        "no child was spawned for any refused state file"
    );
}

#[test]
fn hostile_arguments_are_usage_errors() {
    for args in [
        s(&["--port", "0", "--", "true"]),
        s(&["--port", "70000", "--", "true"]),
        s(&["--port", "abc", "--", "true"]),
        s(&["--port", "-1", "--", "true"]),
        s(&["--bind", "localhost", "--port", "1", "--", "true"]),
        s(&["--state", "/tmp/x", "--", "true"]),
        s(&["--ready", "tcp", "--", "true"]),
        s(&[
            "--port",
            "1",
            "--ready",
            "http://example.com/",
            "--",
            "true",
        ]),
        s(&["--port", "1", "--match=5", "--", "true"]),
        s(&["--grace", "soon", "--", "true"]),
        s(&["--child-deathsig", "hup", "--", "true"]),
        s(&["--port", "1"]),
        s(&["--which-port", "1", "--", "true"]),
    ] {
        let o = Command::new(BIN).args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(100), "{args:?}: {err}");
        assert!(
            err.starts_with("svkit-lifeline: fatal: usage: "),
            "{args:?}: {err}"
        );
    }
    let help = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Exit codes:"));
}

#[test]
fn which_port_reports_free_and_held() {
    let port = free_port("127.0.0.1");
    let o = Command::new(BIN)
        .args(["--which-port", &port.to_string()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let l = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let o = Command::new(BIN)
        .args(["--which-port", &port.to_string()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("{}\t", std::process::id())),
        "{out}"
    );
    drop(l);
}

#[test]
fn sigterm_during_readiness_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1").to_string();
    let info = dir.path().join("info");
    let ll = lifeline(
        &s(&["--port", &port, "--ready", "tcp"]),
        &srv,
        &[
            format!("port={port}"),
            "delay=30".into(),
            format!("info={}", info.display()),
        ],
    );
    let pid = info_pid(&info);
    let _r = Reaper(vec![pid, ll.id() as i32]);
    let (code, err) = ll.wait_with_output_after_term();
    assert_eq!(code, 143, "{err}");
    assert!(is_gone(pid));
}
