//! A changed `log.dir` on the real /init: `svctl apply` restarts the logger
//! (not the program), and `svctl logs` reads where the logger writes, also
//! before the apply and with an invalid config.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::Duration;
use svctl_common::*;
use svkit_testkit::TEST_CONFIG;

fn config(dir: &str) -> String {
    format!(
        r#"{{ "slots": [
  {{ "name": "app", "command": ["sh", "-c", "while :; do echo tick; sleep 0.2; done"],
    "log": {{ "dir": "{dir}" }} }}
] }}"#
    )
}

/// Waits until `rel` (under the data volume) has a `tick` line.
fn wait_ticks(fx: &Fixture, rel: &str) {
    let path = fx.data.path().join(rel);
    poll(
        &format!("lines in {}", path.display()),
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(&path)
                .ok()
                .filter(|t| t.contains("tick"))
                .map(|_| ())
        },
    );
}

#[test]
fn apply_restarts_a_changed_logger_and_logs_follow_it() {
    if !sandbox_or_skip("apply_restarts_a_changed_logger_and_logs_follow_it") {
        return;
    }
    let fx = Fixture::new(&config("/data/logs/a"));
    let sbx = fx.boot();
    wait_supervised(&sbx, &["app", "app/log"]);
    wait_ticks(&fx, "logs/a/current");
    let pid = svstat(&sbx, "app", "pid");
    let write = |c: &str| std::fs::write(sbx.root().join(TEST_CONFIG), c).expect("config");

    // b exists already (a dir made by hand, or used before): nothing but
    // the changed log/run says the logger must move.
    expect_code(&sbx.sh("mkdir -m 0750 /data/logs/b"), 0);
    write(&config("/data/logs/b"));
    let o = sbx.run(&["svctl", "apply"], 0);
    assert!(stdout(&o).contains("files=log/run"), "{}", stdout(&o));
    wait_ticks(&fx, "logs/b/current");
    assert_eq!(svstat(&sbx, "app", "pid"), pid, "the program was restarted");

    // Changed, not applied: the logger still writes to b, and logs reads b.
    write(&config("/data/logs/c"));
    let o = sbx.run(&["svctl", "logs", "app", "-n", "3"], 0);
    assert!(stdout(&o).contains("tick"), "{}\n{}", stdout(&o), err(&o));

    // An invalid config: a warning, and the lines all the same.
    write("{ not json");
    let o = sbx.run(&["svctl", "logs", "app", "-n", "3"], 0);
    assert!(stdout(&o).contains("tick"), "{}\n{}", stdout(&o), err(&o));
    assert!(err(&o).contains("not used"), "{}", err(&o));
    sbx.stop();
}
