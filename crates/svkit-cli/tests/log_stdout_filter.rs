//! The stdout copy's filter (`svkit log-stdout`, here with `--json`)
//! outlives the signals that end its s6-log (TERM, HUP, INT to the process
//! group): what s6-log writes on its way out still gets through, and the
//! filter ends when its input closes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use svkit_testkit::poll;

/// The signals pending for the whole process, from `/proc/PID/status`.
fn pending(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("ShdPnd:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0)
}

#[test]
fn the_filter_outlives_term_hup_and_int() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_svkit"))
        .arg0("svkit")
        .args(["log-stdout", "--slot", "js", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the filter");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    // Its first line out: the filter is past its setup, reading.
    input.write_all(b"before\n").unwrap();
    let mut first = String::new();
    output.read_line(&mut first).unwrap();
    assert!(first.contains(r#""line":"before""#), "{first}");
    let pid = child.id();
    for s in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT] {
        kill(Pid::from_raw(pid as i32), s).unwrap();
    }
    // Either they are held (all three pending) or they ended it.
    let want = [15, 1, 2].iter().fold(0u64, |m, n| m | 1 << (n - 1));
    poll(
        "the signals held or acted on",
        Duration::from_secs(10),
        || {
            let ended = child.try_wait().unwrap().is_some();
            (ended || pending(pid) & want == want).then_some(())
        },
    );
    let _ = input.write_all(b"after\n");
    drop(input);
    let mut rest = String::new();
    output.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(rest.contains(r#""line":"after""#), "{rest:?}");
}
