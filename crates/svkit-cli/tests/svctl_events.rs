//! `svctl events` and `svctl metrics` in the sandbox under real s6: events
//! come from s6-supervise's own FIFOs as they happen, the stream sleeps in
//! between, and ends cleanly; metrics parse with Prometheus' own parser.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use svctl_common::*;

fn config() -> String {
    crash_job_bad_config("")
}

const ALL: &[&str] = &["crash", "job", "bad"];

const LONG: Duration = Duration::from_secs(10);

/// Starts `CMD` in the background inside: its pid in /tmp/NAME.pid, its
/// stdout in /tmp/NAME.out, stderr in /tmp/NAME.err, its exit code in
/// /tmp/NAME.rc once it ends.
fn background(sbx: &Sandbox, name: &str, cmd: &str) {
    let o = sbx.sh(&format!(
        "sh -c '{cmd} >/tmp/{name}.out 2>/tmp/{name}.err & echo $! > /tmp/{name}.pid.tmp; \
         mv /tmp/{name}.pid.tmp /tmp/{name}.pid; wait $!; echo $? > /tmp/{name}.rc.tmp; \
         mv /tmp/{name}.rc.tmp /tmp/{name}.rc' </dev/null >/dev/null 2>&1 &"
    ));
    expect_code(&o, 0);
}

fn inside(sbx: &Sandbox, rel: &str) -> PathBuf {
    sbx.root().join(rel)
}

/// Subscriber FIFOs (s6's `ftrig1:` names, half-made `.ftrig1:` ones
/// too) in the slot's `event/`.
fn fifos(sbx: &Sandbox, slot: &str) -> usize {
    let dir = inside(sbx, &format!("run/service/{slot}/event"));
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("ftrig1:"))
        .count()
}

/// The events printed so far by the background `svctl events --json`.
fn events(sbx: &Sandbox, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(inside(sbx, &format!("tmp/{name}.out"))).unwrap_or_default();
    text.lines()
        .filter(|l| l.ends_with('}'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Polls until an event of `slot` named `what` comes after the first
/// `skip` events; returns it and its index.
fn wait_event(sbx: &Sandbox, name: &str, slot: &str, what: &str, skip: usize) -> (usize, Value) {
    let end = std::time::Instant::now() + LONG;
    loop {
        let all = events(sbx, name);
        let found = all
            .iter()
            .enumerate()
            .skip(skip)
            .find(|(_, e)| e["slot"] == slot && e["event"] == what);
        if let Some((i, e)) = found {
            return (i, e.clone());
        }
        let lines: Vec<String> = all.iter().map(Value::to_string).collect();
        assert!(
            std::time::Instant::now() < end,
            "no event {what} of {slot} after #{skip} in {LONG:?}; events:\n{}\nstderr: {}",
            lines.join("\n"),
            err_of(sbx, name)
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Microseconds since the epoch of `2026-12-01T09:30:05.123456Z`.
fn micros(s: &str) -> i64 {
    let n = |a: usize, b: usize| {
        s[a..b]
            .parse::<i64>()
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // days_from_civil (Howard Hinnant).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19);
    secs * 1_000_000 + n(20, 26)
}

/// The background process NAME as /proc shows it inside.
struct Proc {
    gone: bool,
    in_poll: bool,
    /// utime + stime, in clock ticks.
    cpu: u64,
    /// Times it went to sleep.
    slept: u64,
}

fn proc_of(sbx: &Sandbox, name: &str) -> Proc {
    let o = sbx.sh(&format!(
        "p=$(cat /tmp/{name}.pid) || exit 1; [ -e /tmp/{name}.rc ] && {{ echo gone; exit 0; }}; \
         echo wchan=$(cat /proc/$p/wchan 2>/dev/null); \
         echo syscall=$(cut -d' ' -f1 /proc/$p/syscall 2>/dev/null); \
         echo cpu=$(awk '{{ sub(/.*\\) /, \"\"); print $12 + $13 }}' /proc/$p/stat); \
         grep '^voluntary_ctxt_switches:' /proc/$p/status | tr -d ' \t'"
    ));
    let text = stdout(&o);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or("")
            .to_string()
    };
    let syscall = field("syscall=");
    Proc {
        gone: text.trim() == "gone",
        in_poll: field("wchan=").contains("poll") || syscall == "7" || syscall == "271",
        cpu: field("cpu=").parse().unwrap_or(u64::MAX),
        slept: field("voluntary_ctxt_switches:")
            .parse()
            .unwrap_or(u64::MAX),
    }
}

#[test]
fn events_report_crashes_done_and_failed_as_they_happen_and_sleep_between() {
    if !sandbox_or_skip("events_report_crashes_done_and_failed_as_they_happen_and_sleep_between") {
        return;
    }
    let fx = Fixture::new(&config());
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    for s in ALL {
        wait_field(&sbx, s, "up", "true");
    }
    background(&sbx, "ev", "svctl events --json");
    poll("ev subscribed to every slot", LONG, || {
        ALL.iter().all(|s| fifos(&sbx, s) == 1).then_some(())
    });

    // Quiet: asleep in poll(2), no CPU tick and no wakeup, sample after
    // sample, over two seconds.
    let first = poll("ev asleep", LONG, || {
        Some(proc_of(&sbx, "ev")).filter(|p| p.in_poll)
    });
    assert!(
        first.cpu != u64::MAX && first.slept != u64::MAX,
        "unreadable /proc of svctl events"
    );
    let quiet_until = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < quiet_until {
        let p = proc_of(&sbx, "ev");
        assert!(!p.gone, "events ended: {}", err_of(&sbx, "ev"));
        assert!(p.in_poll, "events not asleep in poll");
        assert_eq!(
            (p.cpu, p.slept),
            (first.cpu, first.slept),
            "events used CPU or woke while nothing happened"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // A crash: down with its signal, then restarting, then up again.
    let pid = svstat(&sbx, "crash", "pid");
    expect_code(&sbx.sh(&format!("kill -KILL {pid}")), 0);
    let (i, down) = wait_event(&sbx, "ev", "crash", "down", 0);
    assert_eq!(down["s6"], "d");
    assert_eq!(down["last_exit"]["signal"], "SIGKILL", "{down}");
    assert_eq!(down["up"], false);
    assert_eq!(down["want"], "up");
    let seen = micros(down["time"].as_str().unwrap());
    let s6 = micros(down["s6_time"].as_str().unwrap());
    assert!(seen >= s6, "seen before s6 saw it: {down}");
    eprintln!(
        "crash reported {:.3} ms after s6-supervise saw it",
        (seen - s6) as f64 / 1000.0
    );
    let (i, _) = wait_event(&sbx, "ev", "crash", "restarting", i + 1);
    let (_, up) = wait_event(&sbx, "ev", "crash", "up", i + 1);
    assert!(
        up["pid"].as_u64().is_some_and(|p| p.to_string() != pid),
        "{up}"
    );

    // A clean exit kept down: down (exit 0), then done.
    expect_code(&sbx.sh("echo > /tmp/go"), 0);
    let (i, down) = wait_event(&sbx, "ev", "job", "down", 0);
    assert_eq!(down["last_exit"]["code"], 0, "{down}");
    let (_, done) = wait_event(&sbx, "ev", "job", "done", i + 1);
    assert_eq!(done["s6"], "D");
    assert_eq!(done["want"], "down");

    // A permanent exit code: down (exit 78), then failed, saying why.
    expect_code(&sbx.sh("echo > /tmp/bad"), 0);
    let (i, down) = wait_event(&sbx, "ev", "bad", "down", 0);
    assert_eq!(down["last_exit"]["code"], 78, "{down}");
    let (_, failed) = wait_event(&sbx, "ev", "bad", "failed", i + 1);
    assert!(
        failed["why"].as_str().is_some_and(|w| w.contains("78")),
        "{failed}"
    );

    // An operator's stop: down, then stopped.
    let n = events(&sbx, "ev").len();
    sbx.run(&["svctl", "stop", "crash"], 0);
    let (i, _) = wait_event(&sbx, "ev", "crash", "down", n);
    wait_event(&sbx, "ev", "crash", "stopped", i + 1);

    // The text form: the same events, one line each.
    background(&sbx, "txt", "svctl events crash");
    poll("txt subscribed", LONG, || {
        (fifos(&sbx, "crash") == 2).then_some(())
    });
    sbx.run(&["svctl", "start", "crash"], 0);
    let line = poll("a text line", LONG, || {
        let t = std::fs::read_to_string(inside(&sbx, "tmp/txt.out")).unwrap_or_default();
        t.lines()
            .find(|l| l.contains(" crash up (pid "))
            .map(str::to_string)
    });
    assert!(line.ends_with(')') && line.contains('Z'), "{line}");

    // SIGTERM: exit 0, FIFOs gone, nothing on stderr.
    for name in ["ev", "txt"] {
        expect_code(&sbx.sh(&format!("kill -TERM $(cat /tmp/{name}.pid)")), 0);
        let rc = poll(&format!("{name} ended"), LONG, || {
            std::fs::read_to_string(inside(&sbx, &format!("tmp/{name}.rc"))).ok()
        });
        assert_eq!(rc.trim(), "0", "{}", err_of(&sbx, name));
        assert_eq!(err_of(&sbx, name), "");
    }
    for s in ALL {
        assert_eq!(fifos(&sbx, s), 0, "{s}: a FIFO left behind");
    }
    sbx.stop();
}

fn err_of(sbx: &Sandbox, name: &str) -> String {
    std::fs::read_to_string(inside(sbx, &format!("tmp/{name}.err"))).unwrap_or_default()
}

#[test]
fn events_end_when_the_reader_goes_away_and_follow_new_slots() {
    if !sandbox_or_skip("events_end_when_the_reader_goes_away_and_follow_new_slots") {
        return;
    }
    let fx = Fixture::new(&config());
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    // The reader is gone before anything happens: it ends at once,
    // quietly, exit 0, its FIFO removed.
    let o = sbx.sh("{ timeout 10 svctl events crash; echo $? > /tmp/rc; } | true; cat /tmp/rc");
    assert_eq!(stdout(&o).trim(), "0", "{}", err(&o));
    assert_eq!(err(&o), "");
    assert_eq!(fifos(&sbx, "crash"), 0);
    // The slot's user may subscribe (reconcile made event/ its group's);
    // another user is refused, clearly.
    let o = sbx.sh(
        "{ su -s /bin/sh nobody -c 'timeout 10 svctl events crash'; echo $? > /tmp/rc; } | true; \
         cat /tmp/rc",
    );
    assert_eq!(stdout(&o).trim(), "0", "{}", err(&o));
    let o = sbx.sh("su -s /bin/sh daemon -c 'timeout 10 svctl events crash'");
    expect_code(&o, 111);
    assert!(
        err(&o).contains("svctl: fatal: unable to subscribe to events of crash: Permission denied"),
        "{}",
        err(&o)
    );
    assert_eq!(fifos(&sbx, "crash"), 0);
    // Unknown slots are refused before anything is done.
    let o = sbx.run(&["svctl", "events", "crash", "nope"], 4);
    assert!(err(&o).contains("unknown slot nope"), "{}", err(&o));
    assert_eq!(fifos(&sbx, "crash"), 0);

    // Without SLOT: slots added later are followed, removed ones dropped.
    background(&sbx, "ev", "svctl events --json");
    poll("ev subscribed", LONG, || {
        ALL.iter().all(|s| fifos(&sbx, s) == 1).then_some(())
    });
    let more = crash_job_bad_config(
        r#"{ "name": "late", "command": ["sleep", "1004"], "autostart": "always" },"#,
    );
    expect_code(&sbx.reconcile_with(&more), 0);
    let (i, _) = wait_event(&sbx, "ev", "late", "added", 0);
    wait_supervised(&sbx, &["late"]);
    wait_field(&sbx, "late", "up", "true");
    sbx.run(&["svctl", "stop", "late"], 0);
    let (i, _) = wait_event(&sbx, "ev", "late", "stopped", i + 1);
    expect_code(&sbx.reconcile_with(&config()), 0);
    let (_, gone) = wait_event(&sbx, "ev", "late", "removed", i + 1);
    assert!(gone["s6"].is_null(), "{gone}");
    // Still following the others (up first: an apply may have restarted
    // it, and stopping a slot that is down announces nothing).
    sbx.run(&["svctl", "wait", "up", "crash"], 0);
    let n = events(&sbx, "ev").len();
    sbx.run(&["svctl", "stop", "crash"], 0);
    wait_event(&sbx, "ev", "crash", "stopped", n);
    expect_code(&sbx.sh("kill -INT $(cat /tmp/ev.pid)"), 0);
    let rc = poll("ev ended", LONG, || {
        std::fs::read_to_string(inside(&sbx, "tmp/ev.rc")).ok()
    });
    assert_eq!(rc.trim(), "0", "{}", err_of(&sbx, "ev"));
    for s in ALL {
        assert_eq!(fifos(&sbx, s), 0, "{s}: a FIFO left behind");
    }
    sbx.stop();
}
