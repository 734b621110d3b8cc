//! End-to-end tests of `svkit-lifeline` (real processes, real loopback
//! sockets, deadline polls only). Readiness, stop, state files, hostile arguments and --which-port.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod cli_common;
#[path = "../../svkit/tests/lifeline_common/mod.rs"]
mod common;

#[allow(unused_imports)]
use cli_common::*;
use common::*;

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
            "400ms",
            "--grace",
            "1s",
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
        s(&["--grace", "1h", "--", "true"]),
        s(&["--ready-timeout", "2.5", "--", "true"]),
        s(&["--child-deathsig", "hup", "--", "true"]),
        s(&["--port", "1"]),
        s(&["--which-port", "1", "--", "true"]),
    ] {
        let o = Command::new(bin()).args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(100), "{args:?}: {err}");
        assert!(
            err.starts_with("svkit-lifeline: fatal: usage: "),
            "{args:?}: {err}"
        );
    }
    let help = Command::new(bin()).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Exit codes:"));
}

#[test]
fn which_port_reports_free_and_held() {
    let port = free_port("127.0.0.1");
    let o = Command::new(bin())
        .args(["--which-port", &port.to_string()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let l = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let o = Command::new(bin())
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
fn a_closed_stdout_ends_quietly() {
    use svkit_testkit::{assert_quiet_on_closed_stdout, output_with_closed_stdout};
    for argv in [&["--help"][..], &["-h"][..], &["--version"][..]] {
        let o = output_with_closed_stdout(Command::new(bin()).args(argv));
        assert_quiet_on_closed_stdout(&format!("{argv:?}"), &o, 0);
    }
    // --which-port on a held port: the holders go to a closed stdout, the
    // answer is still the exit code.
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let o =
        output_with_closed_stdout(Command::new(bin()).args(["--which-port", &port.to_string()]));
    assert_quiet_on_closed_stdout("--which-port", &o, 0);
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
