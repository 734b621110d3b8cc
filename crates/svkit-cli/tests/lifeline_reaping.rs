//! End-to-end tests of `svkit-lifeline` (real processes, real loopback
//! sockets, deadline polls only). Reaping: only a provably stale owner of the port is killed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod cli_common;
#[path = "../../svkit/tests/lifeline_common/mod.rs"]
mod common;

#[allow(unused_imports)]
use cli_common::*;
use common::*;

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
    let which = Command::new(bin())
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
    if !svkit_testkit::root_or_skip(
        "socket_of_an_invisible_owner_is_reported",
        "runs lifeline as nobody",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Bound at once: a port picked first and bound later can be taken by
    // a test running beside this one.
    let holder = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = holder.local_addr().unwrap().port();
    // As nobody, /proc/<our pid>/fd is unreadable: the socket has no
    // visible owner.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(bin())
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
        svkit_testkit::skip(
            "socket_held_from_another_pid_namespace_is_reported",
            "unshare --pid unavailable (root and util-linux needed)",
        );
        return;
    }
    let port = free_port("127.0.0.1");
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let o = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            bin().to_str().unwrap(),
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
fn ipv6_loopback_ready_and_stale_reaped() {
    if !ipv6_available() {
        svkit_testkit::skip("ipv6_loopback_ready_and_stale_reaped", "no IPv6 loopback");
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
