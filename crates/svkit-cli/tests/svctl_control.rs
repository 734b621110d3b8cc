//! start/stop/restart/wait/signal in the sandbox under real s6.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use svctl_common::*;

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}", "instances": { "names": ["a", "b"] },
      "command": ["sleep", "1000"], "autostart": "always" },
    { "name": "rem", "command": ["sleep", "1001"], "autostart": "remember" },
    { "name": "rdy", "autostart": "never", "readiness": { "notification_fd": 3 },
      "command": ["sh", "-c", "read x < /tmp/go; echo >&3; exec sleep 1000"] }
  ]
}"#;

const ALL: &[&str] = &["gw-a", "gw-b", "rem", "rdy"];

const LONG: std::time::Duration = std::time::Duration::from_secs(10);

/// A background `svctl wait` (its pid in `/tmp/wait.pid`, its exit code
/// written to `/tmp/wait.rc` when it ends), as /proc shows it.
struct Waiter {
    done: bool,
    /// Blocked in poll(2) (the wait's sleep).
    in_poll: bool,
    /// inotify watches it holds.
    watches: usize,
    /// Times it went to sleep (voluntary context switches).
    slept: u64,
}

fn waiter(sbx: &Sandbox) -> Waiter {
    let o = sbx.sh(
        "p=$(cat /tmp/wait.pid 2>/dev/null) || { echo starting; exit 0; }; \
         [ -e /tmp/wait.rc ] && { echo done; exit 0; }; \
         echo wchan=$(cat /proc/$p/wchan 2>/dev/null); \
         echo syscall=$(cut -d' ' -f1 /proc/$p/syscall 2>/dev/null); \
         echo watches=$(cat /proc/$p/fdinfo/* 2>/dev/null | grep -c '^inotify wd:'); \
         grep '^voluntary_ctxt_switches:' /proc/$p/status 2>/dev/null | tr -d ' \t'",
    );
    let text = stdout(&o);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or("")
            .to_string()
    };
    // poll(2) or ppoll(2) on x86_64, whatever wchan says.
    let syscall = field("syscall=");
    Waiter {
        done: text.trim() == "done",
        in_poll: field("wchan=").contains("poll") || syscall == "7" || syscall == "271",
        watches: field("watches=").parse().unwrap_or(0),
        slept: field("voluntary_ctxt_switches:").parse().unwrap_or(0),
    }
}

#[test]
fn start_stop_restart_wait_until_reached() {
    if !sandbox_or_skip("start_stop_restart_wait_until_reached") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    sbx.run(
        &["svctl", "start", "--wait", "--timeout", "10000", "gw-a"],
        0,
    );
    assert_eq!(svstat(&sbx, "gw-a", "up"), "true");
    let pid = svstat(&sbx, "gw-a", "pid");
    sbx.run(
        &["svctl", "restart", "--wait", "--timeout", "10000", "gw-a"],
        0,
    );
    let now = svstat(&sbx, "gw-a", "up,pid");
    assert!(
        now.starts_with("true ") && !now.ends_with(&format!(" {pid}")),
        "{pid} -> {now}"
    );
    sbx.run(
        &[
            "svctl",
            "stop",
            "--wait",
            "--timeout",
            "10000",
            "gw-a",
            "gw-b",
        ],
        0,
    );
    assert_eq!(svstat(&sbx, "gw-a", "up"), "false");
    assert_eq!(svstat(&sbx, "gw-b", "up"), "false");
    // Stopped by an operator: down as wanted, not a failure.
    let (rc, _) = status_json(&sbx, &["gw-a", "gw-b"]);
    assert_eq!(rc, Some(0));
    // wait: already met, and a slot that does not exist.
    sbx.run(&["svctl", "wait", "down", "gw-a", "gw-b"], 0);
    sbx.run(&["svctl", "wait", "up", "--timeout", "200", "gw-a"], 1);
    sbx.run(&["svctl", "wait", "up", "nope"], 2);
    sbx.run(
        &[
            "svctl",
            "wait",
            "up",
            "--any",
            "--timeout",
            "500",
            "gw-a",
            "nope",
        ],
        1,
    );
    // Unknown slots are refused before anything is done.
    let o = sbx.run(&["svctl", "start", "gw-a", "nope"], 4);
    assert_eq!(svstat(&sbx, "gw-a", "up"), "false");
    assert!(
        err(&o).starts_with("svctl: fatal: unknown slot nope"),
        "{}",
        err(&o)
    );
    // signal: the process gets it, s6 restarts it.
    sbx.run(&["svctl", "start", "--wait", "gw-a"], 0);
    let pid = svstat(&sbx, "gw-a", "pid");
    sbx.run(&["svctl", "signal", "SIGKILL", "gw-a"], 0);
    poll("gw-a respawned", std::time::Duration::from_secs(10), || {
        let s = svstat(&sbx, "gw-a", "up,pid");
        (s.starts_with("true ") && !s.ends_with(&format!(" {pid}"))).then_some(())
    });
    assert_eq!(svstat(&sbx, "gw-a", "signal"), "NA");
    sbx.run(&["svctl", "signal", "BOGUS", "gw-a"], 100);
    sbx.stop();
}

#[test]
fn wait_ready_returns_when_the_app_notifies_and_timeouts_exit_1() {
    if !sandbox_or_skip("wait_ready_returns_when_the_app_notifies_and_timeouts_exit_1") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    expect_code(&sbx.sh("mkfifo -m 0666 /tmp/go"), 0);
    // Up, but not ready until something is written to /tmp/go.
    let o = sbx.run(&["svctl", "start", "--wait", "--timeout", "300", "rdy"], 1);
    assert!(
        err(&o).contains("timed out after 300 ms waiting for rdy to be ready"),
        "{}",
        err(&o)
    );
    assert_eq!(svstat(&sbx, "rdy", "up,ready"), "true false");
    sbx.run(&["svctl", "wait", "up", "--timeout", "10000", "rdy"], 0);
    sbx.run(&["svctl", "wait", "ready", "--timeout", "200", "rdy"], 1);
    // A waiter in the background; it must not be done before the signal.
    let o = sbx.sh(
        "sh -c 'svctl wait ready --timeout 60000 rdy & echo $! > /tmp/wait.pid.tmp; \
         mv /tmp/wait.pid.tmp /tmp/wait.pid; wait $!; echo $? > /tmp/wait.rc.tmp; \
         mv /tmp/wait.rc.tmp /tmp/wait.rc' </dev/null >/dev/null 2>&1 &",
    );
    expect_code(&o, 0);
    let rc = sbx.root().join("tmp/wait.rc");
    // Not done while it is asleep having looked (both inotify watches made,
    // so past its first look at rdy), nor after it woke, looked again and
    // went back to sleep: an early return at either look would show.
    let asleep = || {
        let w = waiter(&sbx);
        assert!(!w.done, "wait ready returned before readiness");
        (w.in_poll && w.watches >= 2).then_some(w.slept)
    };
    let slept = poll("the waiter asleep after its first look", LONG, asleep);
    poll("the waiter asleep again after another look", LONG, || {
        asleep().filter(|&n| n > slept)
    });
    assert!(!rc.exists(), "wait ready returned before readiness");
    assert_eq!(svstat(&sbx, "rdy", "ready"), "false");
    expect_code(&sbx.sh("echo go > /tmp/go"), 0);
    let got = poll(
        "wait ready to return",
        std::time::Duration::from_secs(10),
        || std::fs::read_to_string(&rc).ok(),
    );
    assert_eq!(got.trim(), "0");
    assert_eq!(svstat(&sbx, "rdy", "ready"), "true");
    sbx.stop();
}

#[test]
fn all_and_remembered_state_across_restarts() {
    if !sandbox_or_skip("all_and_remembered_state_across_restarts") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    // rdy needs its fifo to start at all; give it one that is never written.
    expect_code(&sbx.sh("mkfifo -m 0666 /tmp/go"), 0);
    sbx.run(
        &["svctl", "start", "--wait", "--timeout", "10000", "rem"],
        0,
    );
    sbx.run(
        &["svctl", "stop", "--all", "--wait", "--timeout", "10000"],
        0,
    );
    for s in ALL {
        assert_eq!(svstat(&sbx, s, "up"), "false", "{s}");
    }
    // --all never rewrites what operators chose.
    let desired = fx.data.path().join(".svkit/desired/rem");
    assert_eq!(std::fs::read_to_string(&desired).expect("desired"), "up\n");
    let o = sbx.exec(&["svctl", "start", "--all", "--wait", "--timeout", "300"]);
    // rdy never becomes ready: the timeout names it.
    expect_code(&o, 1);
    assert!(err(&o).contains("rdy"), "{}", err(&o));
    for s in ["gw-a", "gw-b", "rem"] {
        assert_eq!(svstat(&sbx, s, "up"), "true", "{s}");
    }
    sbx.stop();

    // Started by an operator: up again after a restart.
    let sbx = fx.boot();
    wait_supervised(&sbx, &["rem"]);
    wait_field(&sbx, "rem", "up", "true");
    sbx.run(&["svctl", "stop", "--wait", "--timeout", "10000", "rem"], 0);
    assert_eq!(
        std::fs::read_to_string(&desired).expect("desired"),
        "down\n"
    );
    sbx.stop();

    // Stopped by an operator: stays down.
    let sbx = fx.boot();
    wait_supervised(&sbx, &["rem", "gw-a"]);
    wait_field(&sbx, "gw-a", "up", "true");
    assert_eq!(
        svstat(&sbx, "rem", "up,wantedup,normallyup"),
        "false false false"
    );
    let (rc, doc) = status_json(&sbx, &["rem"]);
    assert_eq!(rc, Some(0), "{doc}");
    assert_eq!(doc["slots"][0]["desired"], "down");
    sbx.stop();
}
