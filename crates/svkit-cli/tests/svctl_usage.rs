//! What a slot costs, in the sandbox under real s6: `svctl status --json`'s
//! `usage` of a program holding 50 MB, of a busy loop, and of a tree of
//! processes, checked against the kernel's own numbers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::time::{Duration, Instant};

use svctl_common::*;

const MB: f64 = 1024.0 * 1024.0;

/// `hog` holds 50 MB more than `lean`, the same program holding none (and
/// a logger);
/// `busy` spins; `tree` is a shell with three sleeping children.
const CONFIG: &str = r#"{
  "user": "nobody",
  "slots": [
    { "name": "hog", "autostart": "always",
      "command": ["python3", "-c", "import time; b = b'x' * (50 << 20); time.sleep(1e6)"] },
    { "name": "lean", "autostart": "always", "log": { "dir": "/data/logs/lean" },
      "command": ["python3", "-c", "import time; b = b'x'; time.sleep(1e6)"] },
    { "name": "busy", "autostart": "always", "command": ["sh", "-c", "while :; do :; done"] },
    { "name": "tree", "autostart": "always",
      "command": ["sh", "-c", "sleep 1001 & sleep 1002 & sleep 1003 & wait"] },
    { "name": "off", "autostart": "never", "command": ["sleep", "1000"] }
  ]
}"#;

fn usage(sbx: &Sandbox, slot: &str) -> serde_json::Value {
    let (_, doc) = status_json(sbx, &[slot]);
    slot_json(&doc, slot)["usage"].clone()
}

/// CPU seconds of one process as the kernel counts them (utime + stime).
fn kernel_cpu(sbx: &Sandbox, pid: &str) -> f64 {
    let stat = stdout(&sbx.exec(&["cat", &format!("/proc/{pid}/stat")]));
    let after = stat.rsplit_once(')').unwrap().1;
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (f[11] + f[12]) / 100.0
}

#[test]
fn usage_of_memory_cpu_and_a_tree_agrees_with_the_kernel() {
    if !sandbox_or_skip("usage_of_memory_cpu_and_a_tree_agrees_with_the_kernel") {
        return;
    }
    let fx = Fixture::new(CONFIG);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["hog", "lean", "busy", "tree", "off"]);

    // Memory: both pythons are the same but for the 50 MB.
    let rss = |slot: &str| usage(&sbx, slot)["rss_bytes"].as_f64();
    let extra = poll("hog's 50 MB resident", Duration::from_secs(20), || {
        let (hog, lean) = (rss("hog")?, rss("lean")?);
        let extra = (hog - lean) / MB;
        (extra > 45.0).then_some(extra)
    });
    assert!(
        (45.0..=55.0).contains(&extra),
        "hog holds {extra} MB more than lean"
    );

    // A logger's own: s6-log and the copy to stdout it runs.
    let (_, doc) = status_json(&sbx, &["lean", "hog"]);
    let log = &slot_json(&doc, "lean")["log_usage"];
    assert!(log["processes"].as_u64().is_some_and(|n| n >= 1), "{doc}");
    assert!(log["rss_bytes"].as_u64().is_some_and(|n| n > 0), "{doc}");
    assert_eq!(slot_json(&doc, "hog")["log_usage"], serde_json::Value::Null);

    // A tree: the shell and its three children, one thread each.
    let tree = poll("tree's children started", Duration::from_secs(10), || {
        let u = usage(&sbx, "tree");
        (u["processes"] == 4).then_some(u)
    });
    assert_eq!(tree["threads"], 4, "{tree}");

    // CPU: a busy loop's counter follows the kernel's for its one process,
    // and grows about a second a second (less on a loaded machine).
    let pid = svstat(&sbx, "busy", "pid");
    let t0 = Instant::now();
    let c0 = usage(&sbx, "busy")["cpu_seconds"].as_f64().unwrap();
    poll("busy for 2 s", Duration::from_secs(10), || {
        (t0.elapsed() >= Duration::from_secs(2)).then_some(())
    });
    let c1 = usage(&sbx, "busy")["cpu_seconds"].as_f64().unwrap();
    let k = kernel_cpu(&sbx, &pid);
    let elapsed = t0.elapsed().as_secs_f64();
    let rate = (c1 - c0) / elapsed;
    assert!((0.3..=1.1).contains(&rate), "{rate} CPU s per s");
    assert!((k - c1).abs() < 0.5, "svctl says {c1} s, the kernel {k} s");

    // Nothing runs: no usage; the table shows it in CPU and MEM.
    assert_eq!(usage(&sbx, "off"), serde_json::Value::Null);
    let table = stdout(&sbx.exec(&["svctl", "status", "hog", "off"]));
    let head: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        head[..6],
        ["NAME", "STATE", "WANT", "PID", "CPU", "MEM"],
        "{table}"
    );
    let off: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(off[..6], ["off", "down", "down", "-", "-", "-"], "{table}");
    let hog: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert!(hog[5].ends_with('M'), "{table}");

    // Metrics: the same readings, the CPU counter typed as one.
    let text = stdout(&sbx.run(&["svctl", "metrics", "tree", "off"], 0));
    assert!(
        text.contains("# TYPE svkit_slot_cpu_seconds_total counter\n"),
        "{text}"
    );
    assert!(
        text.contains("svkit_slot_processes{slot=\"tree\"} 4\n"),
        "{text}"
    );
    assert!(
        !text.contains("svkit_slot_processes{slot=\"off\"}"),
        "{text}"
    );
    sbx.stop();
}
