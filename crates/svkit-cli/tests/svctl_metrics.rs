//! `svctl metrics` in the sandbox under real s6, parsed by Prometheus'
//! own Python client (`prometheus-client`, installed by `make deps`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use svctl_common::*;
use svkit_testkit::skip;

fn config() -> String {
    crash_job_bad_config(
        r#"{ "name": "off", "command": ["sleep", "1001"], "autostart": "never" },"#,
    )
}

const ALL: &[&str] = &["crash", "job", "bad", "off"];

/// Parses the exposition with `prometheus_client.parser` and prints, per
/// family, `name type` then one `slot value` line per sample.
const PARSE: &str = r#"
import sys
from prometheus_client.parser import text_string_to_metric_families
for f in text_string_to_metric_families(sys.stdin.read()):
    assert f.documentation, f.name + ": no HELP"
    print("family", f.name, f.type)
    for s in f.samples:
        assert s.name == f.name or (f.type == "counter" and s.name == f.name + "_total"), s.name
        assert set(s.labels) == {"slot"}, s.labels
        print("sample", s.name, s.labels["slot"], repr(s.value))
"#;

fn parser_missing() -> Option<String> {
    let o = Command::new("python3")
        .args(["-c", "import prometheus_client.parser"])
        .output();
    match o {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "prometheus-client missing (make deps: pip install prometheus-client): {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("python3: {e}")),
    }
}

/// family -> slot -> value, as the real parser read them.
fn parse(text: &str) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut child = Command::new("python3")
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "the parser refused it: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let w: Vec<&str> = l.split(' ').collect();
        match w[..] {
            ["family", name, "gauge" | "counter"] => {
                out.entry(name.to_string()).or_default();
            }
            ["sample", name, slot, v] => {
                out.entry(name.to_string())
                    .or_default()
                    .insert(slot.to_string(), v.parse().unwrap());
            }
            _ => panic!("{l}"),
        }
    }
    out
}

#[test]
fn metrics_parse_with_prometheus_own_parser_and_say_what_status_says() {
    if !sandbox_or_skip("metrics_parse_with_prometheus_own_parser_and_say_what_status_says") {
        return;
    }
    if let Some(why) = parser_missing() {
        skip(
            "metrics_parse_with_prometheus_own_parser_and_say_what_status_says",
            why,
        );
        return;
    }
    let fx = Fixture::new(&config());
    let sbx = fx.boot();
    wait_supervised(&sbx, ALL);
    for s in ["crash", "job", "bad"] {
        wait_field(&sbx, s, "up", "true");
    }
    // One crash (SIGKILL, restarted), one finished job, one failure.
    let pid = svstat(&sbx, "crash", "pid");
    expect_code(&sbx.sh(&format!("kill -KILL {pid}")), 0);
    expect_code(&sbx.sh("echo > /tmp/go; echo > /tmp/bad"), 0);
    wait_field(&sbx, "job", "wantedup", "false");
    wait_field(&sbx, "bad", "wantedup", "false");
    poll("crash up again", std::time::Duration::from_secs(10), || {
        let s = svstat(&sbx, "crash", "up,pid");
        (s.starts_with("true ") && !s.ends_with(&format!(" {pid}"))).then_some(())
    });

    let o = sbx.run(&["svctl", "metrics"], 0);
    let text = stdout(&o);
    let m = parse(&text);
    let v = |family: &str, slot: &str| -> Option<f64> {
        m.get(family)
            .unwrap_or_else(|| panic!("no family {family}:\n{text}"))
            .get(slot)
            .copied()
    };
    for family in [
        "svkit_slot_supervised",
        "svkit_slot_up",
        "svkit_slot_ready",
        "svkit_slot_wanted_up",
        "svkit_slot_desired_up",
        "svkit_slot_in_wanted_state",
        "svkit_slot_failed",
        "svkit_slot_done",
        "svkit_slot_deaths",
        "svkit_slot_uptime_seconds",
        "svkit_slot_since_seconds",
        "svkit_slot_state_change_timestamp_seconds",
    ] {
        for s in ALL {
            assert!(v(family, s).is_some(), "{family} of {s}:\n{text}");
        }
    }
    assert_eq!(v("svkit_slot_up", "crash"), Some(1.0));
    assert_eq!(v("svkit_slot_ready", "crash"), Some(1.0));
    assert_eq!(v("svkit_slot_deaths", "crash"), Some(1.0));
    assert_eq!(v("svkit_slot_last_exit_code", "crash"), Some(137.0));
    assert_eq!(v("svkit_slot_last_exit_signal", "crash"), Some(9.0));
    assert_eq!(v("svkit_slot_in_wanted_state", "crash"), Some(1.0));
    assert_eq!(v("svkit_slot_done", "job"), Some(1.0));
    assert_eq!(v("svkit_slot_up", "job"), Some(0.0));
    assert_eq!(v("svkit_slot_uptime_seconds", "job"), Some(0.0));
    assert_eq!(v("svkit_slot_last_exit_code", "job"), Some(0.0));
    assert_eq!(v("svkit_slot_in_wanted_state", "job"), Some(1.0));
    assert_eq!(v("svkit_slot_failed", "bad"), Some(1.0));
    assert_eq!(v("svkit_slot_last_exit_code", "bad"), Some(78.0));
    assert_eq!(v("svkit_slot_in_wanted_state", "bad"), Some(0.0));
    assert!(v("svkit_slot_memory_rss_bytes", "crash").is_some_and(|b| b > 0.0));
    assert!(v("svkit_slot_cpu_seconds_total", "crash").is_some());
    // Its run script's own steps count while they run; then the program
    // alone is left.
    poll(
        "crash's tree is its program",
        Duration::from_secs(10),
        || {
            let m = parse(&stdout(&sbx.run(&["svctl", "metrics", "crash"], 0)));
            (m["svkit_slot_processes"].get("crash") == Some(&1.0)).then_some(())
        },
    );
    assert_eq!(v("svkit_slot_processes", "job"), None, "not running");
    assert_eq!(v("svkit_slot_wanted_up", "off"), Some(0.0));
    assert_eq!(v("svkit_slot_desired_up", "off"), Some(0.0));
    // Never died: no last exit at all, rather than a made-up one.
    assert_eq!(v("svkit_slot_last_exit_code", "off"), None);
    // The time of the last change agrees with s6-svstat's, within a fixed
    // bound; looked at once the change is older than that bound, so that
    // "now" cannot pass for it.
    poll("crash up for 4 s", Duration::from_secs(15), || {
        (svstat(&sbx, "crash", "updownfor")
            .parse::<f64>()
            .unwrap_or(0.0)
            >= 4.0)
            .then_some(())
    });
    let text = stdout(&sbx.exec(&["svctl", "metrics", "crash"]));
    let ts = parse(&text)["svkit_slot_state_change_timestamp_seconds"]["crash"];
    let since: f64 = svstat(&sbx, "crash", "updownfor").parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    // updownfor is whole seconds: the change was 0..1 s before now - since.
    assert!(
        (now - since - ts).abs() < 1.5,
        "{ts} vs now {now} - {since}"
    );

    // Named slots; an unknown one is refused with nothing printed.
    let o = sbx.run(&["svctl", "metrics", "job"], 0);
    assert_eq!(parse(&stdout(&o))["svkit_slot_done"].len(), 1);
    let o = sbx.run(&["svctl", "metrics", "job", "nope"], 4);
    assert_eq!(stdout(&o), "");
    // As the slots' user, the documented atomic write to a textfile dir.
    let o = sbx.sh("mkdir -p /tmp/prom && chown nobody /tmp/prom && \
         su -s /bin/sh nobody -c 'svctl metrics > /tmp/prom/svkit.prom.tmp && \
         mv /tmp/prom/svkit.prom.tmp /tmp/prom/svkit.prom' && cat /tmp/prom/svkit.prom");
    expect_code(&o, 0);
    assert_eq!(parse(&stdout(&o))["svkit_slot_up"]["crash"], 1.0);
    sbx.stop();
}
