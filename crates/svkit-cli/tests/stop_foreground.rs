//! `docker stop` on the real /init with the demo rootfs: the stop hook
//! gives the foreground command (an opt-out) its stop signal and waits for
//! its handler, before s6-overlay's final TERM/KILL (whose grace the
//! sandbox sets to 100 ms, as a small `S6_KILL_GRACETIME` would); the
//! container's exit code is then the command's own; and a stray gets TERM
//! and a grace of its own from the hook, even with no final grace.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use svkit_testkit::{poll, sandbox_or_skip, Sandbox};

mod demo_image;

fn start(data: &Path, cmd: &[&str]) -> Sandbox {
    demo_image::start(data, &["APP_STOP_MS=1000", "APP_DASHBOARD=1"], cmd, &[])
}

/// `docker stop`, timed from the TERM to PID 1 until PID 1 is gone; the
/// logs are read before the sandbox is forgotten. (exit code, took, logs)
fn docker_stop(sbx: Sandbox) -> (i32, Duration, String) {
    let root = sbx.root();
    let init = root
        .parent()
        .and_then(|p| p.file_name())
        .map(|p| p.to_string_lossy().into_owned())
        .expect("init pid");
    let t0 = Instant::now();
    let killed = Command::new("kill").args(["-TERM", &init]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -TERM {init}");
    poll("PID 1 to end", Duration::from_secs(30), || {
        (!Path::new(&format!("/proc/{init}")).exists()).then_some(())
    });
    let took = t0.elapsed();
    let logs = sbx.logs();
    (sbx.stop(), took, logs)
}

#[test]
fn docker_stop_waits_for_the_foreground_commands_handler() {
    if !sandbox_or_skip("docker_stop_waits_for_the_foreground_commands_handler") {
        return;
    }
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = start(data.path(), &["gateway", "run", "--no-supervise"]);
    sbx.wait_for_log("⚕ gateway default up", Duration::from_secs(30));
    sbx.wait_for_log("⚕ dashboard up", Duration::from_secs(30));
    // A foreground run under `docker exec` is not the CMD: it leaves the
    // CMD's record alone.
    let o = sbx.exec(&["svkit-wrap", "--", "true"]);
    assert!(o.status.success(), "{o:?}");
    let (code, took, logs) = docker_stop(sbx);
    eprintln!("exit {code} after {took:?}:\n{logs}");
    // Its whole handler ran: without the hook it would get 100 ms.
    assert!(
        logs.contains("⚕ gateway default stopped after 1000 ms"),
        "{logs}"
    );
    assert!(logs.contains("⚕ dashboard stopped after 1000 ms"), "{logs}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(code, 0, "{logs}");
}

#[test]
fn after_docker_stop_the_container_exits_with_the_foreground_commands_code() {
    if !sandbox_or_skip("after_docker_stop_the_container_exits_with_the_foreground_commands_code") {
        return;
    }
    let data = tempfile::tempdir().expect("tempdir");
    // No redirect matches: TERM with the default timeout (5 s).
    for (script, want) in [
        (
            "trap 'echo handled; exit 3' TERM; echo waiting; while :; do sleep 0.05; done",
            3,
        ),
        ("echo waiting; exec sleep 100000", 143),
    ] {
        let sbx = start(data.path(), &["sh", "-c", script]);
        sbx.wait_for_log("waiting", Duration::from_secs(30));
        let (code, took, logs) = docker_stop(sbx);
        eprintln!("{script}: exit {code} after {took:?}");
        assert_eq!(code, want, "{script}: {logs}");
    }
}

/// With the stop hook and no final grace at all (`S6_KILL_GRACETIME=0`,
/// as the image sets): a stray (a slot's double-forked child, which no
/// supervisor knows) gets TERM from the hook and the time its handler
/// takes (300 ms here), and the slot's last line is in its log file.
#[test]
fn a_stray_gets_term_and_its_own_grace_from_the_hook() {
    if !sandbox_or_skip("a_stray_gets_term_and_its_own_grace_from_the_hook") {
        return;
    }
    let config = r#"{ "slots": [ { "name": "forker", "command": ["/opt/forker"],
        "log": { "dir": "/data/log", "stdout": false } } ] }"#;
    let r = svkit_testkit::Rootfs::with_svkit(config);
    r.script(
        "etc/cont-finish.d/50-svkit-stop",
        include_str!("../../../rootfs/etc/cont-finish.d/50-svkit-stop"),
    );
    r.script(
        "opt/forker",
        "#!/bin/sh\n( sh -c 'trap \"sleep 0.3; echo stray handled TERM > /data/stray; exit 0\" TERM; echo stray up > /data/stray; while :; do sleep 0.01; done' & )\ntrap 'echo forker stopping; exit 0' TERM\necho forker up\nwhile :; do sleep 0.05 & wait $!; done\n",
    );
    let data = tempfile::tempdir().expect("tempdir");
    let arg = r.arg();
    let volume = format!("{}:/data", data.path().display());
    let sbx = Sandbox::start(
        &[
            "--rootfs",
            &arg,
            "--volume",
            &volume,
            "--env",
            "S6_KILL_GRACETIME=0",
        ],
        &["sleep", "100000"],
    );
    let stray = data.path().join("stray");
    poll("the stray up", Duration::from_secs(30), || {
        std::fs::read_to_string(&stray)
            .is_ok_and(|t| t.contains("stray up"))
            .then_some(())
    });
    let log = data.path().join("log/current");
    poll("the slot up in its log", Duration::from_secs(30), || {
        std::fs::read_to_string(&log)
            .is_ok_and(|t| t.contains("forker up"))
            .then_some(())
    });
    let (code, took, logs) = docker_stop(sbx);
    eprintln!("exit {code} after {took:?}:\n{logs}");
    assert_eq!(code, 0, "{logs}");
    let text = std::fs::read_to_string(&stray).unwrap_or_default();
    assert_eq!(text, "stray handled TERM\n", "{logs}");
    assert!(logs.contains("svkit: info: sent TERM to"), "{logs}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("forker stopping"), "{text}\n{logs}");
}
