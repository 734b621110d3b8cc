//! The stop hook's budget on the real /init: a slot whose declared
//! `stop_timeout_ms` is longer than the hook's default 5 s keeps its
//! grace at `docker stop` (the budget is derived from the config), and
//! the boot and `svctl check` say, in one line, what the config's stop
//! times do not fit in and what to raise.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::{Duration, Instant};
use svkit_testkit::{poll, sandbox_or_skip, Sandbox};

/// A TERM handler that takes 7 s: 70 sleeps of 0.1 s, so that a TERM
/// from s6-overlay's final round (which would end one `sleep`) does not
/// cut it short, while its KILL does.
const SLOW: &str = "#!/bin/sh\n\
trap 'echo slow stopping; i=0; while [ $i -lt 70 ]; do sleep 0.1; i=$((i+1)); done; echo slow handled TERM > /data/ended; echo slow handled TERM; exit 0' TERM\n\
echo slow up\n\
while :; do sleep 0.05 & wait $!; done\n";

#[test]
fn a_declared_stop_timeout_longer_than_the_default_budget_is_honoured() {
    if !sandbox_or_skip("a_declared_stop_timeout_longer_than_the_default_budget_is_honoured") {
        return;
    }
    let config = r#"{ "slots": [ { "name": "slow", "command": ["/opt/slow"],
        "stop_timeout_ms": 10000,
        "log": { "dir": "/data/log", "stdout": false } } ] }"#;
    let r = svkit_testkit::Rootfs::with_svkit(config);
    r.script(
        "etc/cont-finish.d/50-svkit-stop",
        include_str!("../../../rootfs/etc/cont-finish.d/50-svkit-stop"),
    );
    r.script("opt/slow", SLOW);
    let data = tempfile::tempdir().expect("tempdir");
    let arg = r.arg();
    let volume = format!("{}:/data", data.path().display());
    let sbx = Sandbox::start(
        &["--rootfs", &arg, "--volume", &volume],
        &["sleep", "100000"],
    );
    let log = data.path().join("log/current");
    poll("the slot up in its log", Duration::from_secs(30), || {
        std::fs::read_to_string(&log)
            .is_ok_and(|t| t.contains("slow up"))
            .then_some(())
    });

    // The boot said it: 5000 (a foreground command) + 10000 + 500, and
    // the hook's own 2.5 s, do not fit in docker stop's default 10 s.
    let logs = sbx.logs();
    let boot: Vec<&str> = logs
        .lines()
        .filter(|l| l.starts_with("svkit-reconcile: warning: the stop hook needs"))
        .collect();
    assert_eq!(boot.len(), 1, "one line at boot:\n{logs}");
    assert!(boot[0].contains("up to 15500 ms"), "{}", boot[0]);
    assert!(
        boot[0].contains("slow's stop_timeout_ms 10000"),
        "{}",
        boot[0]
    );
    assert!(
        boot[0].contains("at least 19 s (docker stop -t"),
        "{}",
        boot[0]
    );

    // svctl check says the same, and names the settings that cut it.
    let o = sbx.sh("S6_KILL_FINISH_MAXTIME=8000 SVKIT_STOP_TIMEOUT_MS=5000 svctl check");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{o:?}");
    assert!(
        err.contains("svctl: warning: the stop hook needs up to 15500 ms"),
        "{err}"
    );
    assert!(
        err.contains("SVKIT_STOP_TIMEOUT_MS=5000 cuts that short: raise it to 15500"),
        "{err}"
    );
    assert!(
        err.contains("S6_KILL_FINISH_MAXTIME=8000 (s6-overlay's bound on each cont-finish hook) ends the stop hook first: raise it to at least 18000"),
        "{err}"
    );

    // docker stop: the handler's 7 s are not cut at the default 5 s.
    let t0 = Instant::now();
    let code = sbx.stop();
    let took = t0.elapsed();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    eprintln!("exit {code} after {took:?}; log:\n{text}");
    let ended = std::fs::read_to_string(data.path().join("ended")).unwrap_or_default();
    assert_eq!(ended, "slow handled TERM\n", "{text}");
    assert!(text.contains("slow handled TERM"), "{text}");
    assert_eq!(code, 0);
}
