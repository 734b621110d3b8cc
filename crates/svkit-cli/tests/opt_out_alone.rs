//! A run opted out to the foreground (`docker run IMAGE worker q
//! --no-supervise`) never runs beside its own slot, on the real /init:
//! while that foreground copy lives, the slot's `run` refuses to start (a
//! bare `s6-svc -u`, a restarted supervisor), `svctl start` refuses with
//! exit 5 and says why and how on, `svctl start --all` skips the slot and
//! starts the rest, and `svctl status` says the program runs in the
//! foreground instead of calling the slot up.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;

const CONFIG: &str = r#"{ "sentinel_env": "T_SUPERVISED", "slots": [
  { "name": "worker", "command": ["/opt/worker", "q"] },
  { "name": "other", "autostart": "never", "command": ["sleep", "100000"] }
], "redirects": [
  { "match": ["/opt/worker", "q"], "slot": "worker", "opt_out_flag": "--no-supervise" }
] }"#;

/// Says which copy it is: the supervised one has the sentinel set.
const WORKER: &str = "#!/bin/sh\necho \"worker up pid=$$ sup=$T_SUPERVISED.\"\nexec sleep 100000\n";

/// What the slot's `run` says when it refuses.
const REFUSED: &str =
    "svkit: warning: slot worker: not starting: its program runs in the foreground";

/// The pid of the s6-supervise of `slot` (its argv is `s6-supervise SLOT`).
fn supervisor_of(sbx: &Sandbox, slot: &str) -> String {
    let o = sbx.sh(&format!(
        "for d in /proc/[0-9]*; do [ \"$(tr '\\0' ' ' < $d/cmdline 2>/dev/null)\" = 's6-supervise {slot} ' ] && echo ${{d#/proc/}}; done"
    ));
    stdout(&o).trim().to_string()
}

/// The slot's `run` refused `n` times so far, and the slot is down and
/// no longer wanted up.
fn refused(sbx: &Sandbox, n: usize) -> Option<()> {
    let logs = sbx.logs();
    (logs.matches(REFUSED).count() == n && svstat(sbx, "worker", "up,wantedup") == "false false")
        .then_some(())
}

#[test]
fn an_opted_out_run_never_runs_beside_its_own_slot() {
    if !sandbox_or_skip("an_opted_out_run_never_runs_beside_its_own_slot") {
        return;
    }
    let r = Rootfs::with_svkit(CONFIG);
    r.script("opt/worker", WORKER);
    let arg = r.arg();
    let sbx = Sandbox::start(
        &["--rootfs", &arg],
        &["svkit-wrap", "--", "/opt/worker", "q", "--no-supervise"],
    );
    sbx.wait_for_log("worker up pid=", Duration::from_secs(30));
    let fg = sbx.cmd_pid();
    assert!(
        sbx.logs().contains(&format!("worker up pid={fg} sup=.")),
        "{fg}: {}",
        sbx.logs()
    );
    wait_supervised(&sbx, &["worker", "other"]);
    // The boot started the slot before the command ran; svkit-wrap
    // stopped it first (displaced), so it may have said it was up once.
    let before = sbx.logs().matches("sup=worker.").count();

    // A bare `s6-svc -u`: the slot's own `run` refuses, and s6 stops
    // wanting it up (no crash loop).
    sbx.run(&["s6-svc", "-u", "/run/service/worker"], 0);
    poll("run to refuse", Duration::from_secs(10), || {
        refused(&sbx, 1)
    });

    // A supervisor killed hard: s6-svscan starts a new one, which starts
    // the slot (no `down` file); its `run` refuses again.
    let sup = supervisor_of(&sbx, "worker");
    expect_code(&sbx.sh(&format!("kill -9 {sup}")), 0);
    poll(
        "run under a new supervisor to refuse",
        Duration::from_secs(15),
        || refused(&sbx, 2),
    );

    // svctl refuses before it sends anything: exit 5, why and how on.
    let o = sbx.run(&["svctl", "start", "worker"], 5);
    let e = err(&o);
    assert!(
        e.contains(&format!(
            "svctl: fatal: unable to start worker: its program runs in the foreground (pid {fg})"
        )),
        "{e}"
    );
    assert!(e.contains("end that command first"), "{e}");
    sbx.run(&["svctl", "restart", "worker"], 5);
    assert_eq!(svstat(&sbx, "worker", "wantedup"), "false");

    // --all skips it, saying so, and starts the rest.
    let o = sbx.run(
        &["svctl", "start", "--all", "--wait", "--timeout", "10s"],
        0,
    );
    assert!(
        err(&o).contains(&format!(
            "svctl: warning: not starting worker: its program runs in the foreground (pid {fg})"
        )),
        "{}",
        err(&o)
    );
    wait_field(&sbx, "other", "up", "true");
    assert_eq!(svstat(&sbx, "worker", "up,wantedup"), "false false");

    // Status says what runs: the foreground copy, not the slot.
    let (code, doc) = status_json(&sbx, &["worker"]);
    let w = slot_json(&doc, "worker");
    assert_eq!(w["state"], "foreground", "{w}");
    assert_eq!(w["up"], false, "{w}");
    assert_eq!(w["foreground_pid"].to_string(), fg, "{w}");
    assert_eq!(code, Some(0), "{doc}");
    let o = sbx.run(&["svctl", "status", "worker"], 0);
    assert!(
        stdout(&o).contains(&format!("in the foreground (pid {fg})")),
        "{}",
        stdout(&o)
    );

    // No supervised copy ran since: only the foreground one.
    let logs = sbx.logs();
    assert_eq!(
        logs.matches("sup=worker.").count(),
        before,
        "a second copy ran: {logs}"
    );
    expect_code(&sbx.sh(&format!("kill -0 {fg}")), 0);
}
