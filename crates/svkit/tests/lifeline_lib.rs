//! The lifeline library: the start (reap, spawn, probe) asks its caller
//! whether to stop at every look; the port inspection and reaping it uses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod lifeline_common;

use std::ffi::OsString;
use std::net::TcpListener;
use std::time::Duration;

use lifeline_common::*;
use svkit::lifeline::{self, parse_ready, Error, Launched, MatchArgs, Spec};

fn spec(argv: Vec<String>) -> Spec {
    Spec::new(argv.into_iter().map(OsString::from).collect())
}

/// `argv` behind a gate: the child waits (bounded) for `gate` to exist,
/// then execs `argv` (same pid).
fn gated(gate: &std::path::Path, argv: Vec<String>) -> Vec<String> {
    let mut out = vec![
        "sh".to_string(),
        "-c".to_string(),
        "i=0; while [ ! -e \"$0\" ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 9; sleep 0.01; done; exec \"$@\""
            .to_string(),
        gate.display().to_string(),
    ];
    out.extend(argv);
    out
}

#[test]
fn the_caller_is_asked_while_a_slow_spawn_becomes_ready() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1");
    let state = dir.path().join("state.json");
    let gate = dir.path().join("gate");
    let mut argv = srv.clone();
    argv.extend([format!("port={port}"), "http=200".into()]);
    // The server binds only once the caller opens the gate, from the
    // question launch asks it: a start that never asked could never become
    // ready.
    let mut sp = spec(gated(&gate, argv));
    sp.port = Some(port);
    sp.state = Some(state.clone());
    sp.ready = Some(
        parse_ready(
            &format!("http://127.0.0.1:{port}/ready"),
            Some(port),
            sp.bind,
        )
        .unwrap(),
    );
    let mut pending_seen = 0;
    let (launched, _) = lifeline::run::launch(&sp, &mut || {
        pending_seen += 1;
        if pending_seen == 3 {
            assert!(!state.exists(), "recorded before the server could bind");
            std::fs::write(&gate, "").unwrap();
        }
        false
    })
    .unwrap();
    assert!(
        pending_seen >= 3,
        "the start resolved after {pending_seen} looks, before the caller opened the gate"
    );
    let Launched::Ready(mut running) = launched else {
        panic!("no stop was asked for")
    };
    let _r = Reaper(vec![running.pid]);
    assert!(state.exists(), "recorded once ready");
    assert!(running.try_exit().unwrap().is_none());
    let status = lifeline::run::finish(&sp, &mut running).unwrap();
    assert_eq!(lifeline::exit_code(status), 143);
    assert!(is_gone(running.pid));
    assert!(!state.exists(), "record removed on stop");
}

#[test]
fn inspect_finds_our_listeners_v4_and_v6() {
    let l4 = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l4.local_addr().unwrap().port();
    let report = lifeline::inspect_port(port, Some("127.0.0.1".parse().unwrap())).unwrap();
    assert!(report
        .owners
        .iter()
        .any(|o| o.pid == std::process::id() as i32));
    if !ipv6_available() {
        svkit_testkit::skip(
            "inspect_finds_our_listeners_v4_and_v6",
            "its IPv6 half: no IPv6 loopback ([::1] cannot be bound)",
        );
        return;
    }
    let l6 = TcpListener::bind("[::1]:0").unwrap();
    let p6 = l6.local_addr().unwrap().port();
    let report = lifeline::inspect_port(p6, Some("::1".parse().unwrap())).unwrap();
    assert_eq!(report.listeners.len(), 1);
    assert!(report
        .owners
        .iter()
        .any(|o| o.pid == std::process::id() as i32));
    // The same port number on IPv4 loopback is not blocked by it.
    assert!(
        lifeline::inspect_port(p6, Some("127.0.0.1".parse().unwrap()))
            .unwrap()
            .is_free()
    );
}

#[test]
fn clear_port_is_a_noop_when_free_and_refuses_ourselves() {
    let port = free_port("127.0.0.1");
    let mut sp = spec(vec!["true".into()]);
    sp.port = Some(port);
    sp.match_args = Some(MatchArgs::All);
    assert_eq!(lifeline::run::clear_port(&sp).unwrap(), None);
    // The test binary holds the port: not `true`, so a stranger.
    let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
    match lifeline::run::clear_port(&sp) {
        Err(Error::PortHeld(r)) => {
            assert!(r
                .owners
                .iter()
                .any(|o| o.id.pid == std::process::id() as i32 && o.verdict.is_err()));
            assert_eq!(
                Error::PortHeld(r).exit_code(),
                svkit::msg::exit::lifeline::PORT_HELD
            );
        }
        other => panic!("want PortHeld, got {other:?}"),
    }
    drop(l);
}

#[test]
fn failed_start_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server_argv(dir.path());
    let port = free_port("127.0.0.1");
    let info = dir.path().join("info");
    let mut argv = srv.clone();
    argv.extend([
        format!("port={port}"),
        "delay=30".into(),
        format!("info={}", info.display()),
    ]);
    let mut sp = spec(argv);
    sp.port = Some(port);
    sp.ready = Some(parse_ready("tcp", Some(port), sp.bind).unwrap());
    sp.ready_timeout = Duration::from_millis(300);
    let err = lifeline::run::launch(&sp, &mut || false).unwrap_err();
    assert!(matches!(err, Error::ReadyTimeout { .. }), "{err}");
    assert!(is_gone(info_pid(&info)));
}
