//! The rendered `log/run`, run for real with Debian's s6-log: raw lines on
//! stdout, timestamped lines in `current`, rotation at `max_bytes` keeping
//! `keep` archives, and a planted symlink refused. Every wait is a poll with
//! a deadline; nothing sleeps to synchronize.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use svkit::config::{load_layers, FixedInstances};
use svkit::render::{render_slot, RenderEnv};

const DEADLINE: Duration = Duration::from_secs(20);

/// Skips `test` (through the one skip helper) when s6-log is missing.
fn have_s6_log(test: &str) -> bool {
    if Command::new("s6-log").stdin(Stdio::null()).output().is_ok() {
        return true;
    }
    svkit_testkit::skip(test, "s6-log not installed (apt-get install s6)");
    false
}

/// `sh`, to run a rendered `log/run` as s6 would: its first step is
/// `svkit log-claim`, so the workspace's `svkit` (built by `cargo build`)
/// comes first on PATH.
fn sh() -> Command {
    let svkit = svkit_testkit::bin("svkit");
    assert!(
        svkit.exists(),
        "{} missing: cargo build first",
        svkit.display()
    );
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![svkit_testkit::bin_dir()];
    dirs.extend(std::env::split_paths(&path));
    let mut c = Command::new("/bin/sh");
    c.env("PATH", std::env::join_paths(dirs).expect("PATH"));
    c
}

fn log_run(dir: &Path, keep: u32, max_bytes: u32) -> Vec<u8> {
    let cfg = serde_json::json!({ "slots": [{
        "name": "logged", "command": ["x"],
        "log": { "dir": dir.to_str().expect("utf-8 temp path"), "stdout": true, "keep": keep, "max_bytes": max_bytes }
    }]});
    let files = vec![(
        Path::new("/etc/svkit/10.json").to_path_buf(),
        serde_json::to_vec(&cfg).expect("json"),
    )];
    let v = load_layers(&files, &FixedInstances::default()).expect("valid config");
    let env = RenderEnv {
        with_contenv: None,
        s6_bin: None,
        as_root: false,
    };
    let r = render_slot(&v.model, &v.model.slots[0], &env, true);
    r.file("log/run").expect("log/run").contents.clone()
}

fn is_timestamped(line: &str) -> bool {
    // s6-log's T: "YYYY-MM-DD HH:MM:SS.nnnnnnnnn  " then the line.
    let b = line.as_bytes();
    b.len() > 31
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[19] == b'.'
        && line[..4].bytes().all(|c| c.is_ascii_digit())
}

#[test]
fn logger_writes_stdout_and_rotated_files() {
    if !have_s6_log("logger_writes_stdout_and_rotated_files") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("logs/deep/slot");
    let (keep, max_bytes) = (2u32, 4096u32);
    let script = tmp.path().join("log-run");
    std::fs::write(&script, log_run(&dir, keep, max_bytes)).expect("write log/run");

    let mut child = sh()
        .arg(&script)
        // s6 runs it in `log/`, where it keeps its record.
        .current_dir(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn log/run");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    // One line at a time, each echoed on stdout before the next: s6-log
    // then writes (and rotates) line by line, so sizes are predictable.
    let n = 120;
    let mut sent = Vec::new();
    for i in 0..n {
        let line = format!("line {i:04} {}", "x".repeat(90));
        writeln!(stdin, "{line}").expect("write to logger");
        stdin.flush().expect("flush");
        let got = rx
            .recv_timeout(DEADLINE)
            .expect("logger echoed the line to stdout");
        assert_eq!(got, line, "stdout carries the raw line");
        sent.push(line);
    }
    drop(stdin);
    let status = child.wait().expect("wait logger");
    assert!(status.success(), "s6-log exits 0 at EOF: {status}");
    reader.join().expect("reader thread");

    let current = std::fs::read_to_string(dir.join("current")).expect("current");
    let mut archives: Vec<_> = std::fs::read_dir(&dir)
        .expect("log dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('@') && n.ends_with(".s"))
        .collect();
    archives.sort();
    assert_eq!(
        archives.len(),
        keep as usize,
        "keeps {keep} archives: {archives:?}"
    );
    let mut logged = Vec::new();
    for a in &archives {
        let text = std::fs::read_to_string(dir.join(a)).expect("archive");
        let size = text.len() as u32;
        // s6-log rotates once a file is within its 2000-byte tolerance of
        // `s`, at a line end: never above max_bytes, never much below.
        assert!(size <= max_bytes, "{a} is {size} bytes");
        assert!(
            size + 2000 + 200 >= max_bytes,
            "{a} rotated early at {size} bytes"
        );
        logged.extend(text.lines().map(String::from));
    }
    logged.extend(current.lines().map(String::from));
    for l in &logged {
        assert!(is_timestamped(l), "timestamped line in the files: {l:?}");
    }
    // What is kept is the tail of what was sent, in order.
    let bodies: Vec<&str> = logged.iter().map(|l| &l[31..]).collect();
    let tail: Vec<&str> = sent[sent.len() - bodies.len()..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(bodies, tail);
    assert!(bodies.len() < n, "older archives were dropped");
}

#[test]
fn planted_symlink_is_refused_and_recorded_once() {
    if !have_s6_log("planted_symlink_is_refused_and_recorded_once") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("logs")).expect("symlink");
    let dir = tmp.path().join("logs/slot");
    let script = tmp.path().join("log-run");
    std::fs::write(&script, log_run(&dir, 2, 4096)).expect("write log/run");
    let run = || {
        sh().arg(&script)
            // s6 runs it in `log/`, where it keeps its record.
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .expect("run log/run")
    };
    let record = tmp.path().join(".svkit-log-error");
    let why = format!(
        "log dir {}: refused: {} is a symlink",
        dir.display(),
        tmp.path().join("logs").display()
    );
    let out = run();
    assert_eq!(out.status.code(), Some(111));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err, format!("svkit: slot logged: {why}\n"));
    assert_eq!(
        std::fs::read_to_string(&record).expect("record"),
        format!("{why}\n")
    );
    assert!(
        !elsewhere.join("slot").exists(),
        "nothing created through the symlink"
    );
    // s6 respawns it every second: the same reason is said once.
    let again = run();
    assert_eq!(again.status.code(), Some(111));
    assert_eq!(String::from_utf8_lossy(&again.stderr), "");
    // Fixed: the dir is made, s6-log runs (to EOF) and the record goes.
    std::fs::remove_file(tmp.path().join("logs")).expect("rm symlink");
    let fixed = run();
    assert!(fixed.status.success(), "{fixed:?}");
    assert!(dir.is_dir());
    assert!(!record.exists(), "the record is removed before s6-log runs");
}

/// What docs/config.md says of `max_bytes` under a burst: s6-log writes
/// all it has read (up to 8 KB of input, each line then timestamped)
/// before it checks the size, so archives end above `max_bytes`, by less
/// than one such write.
#[test]
fn a_burst_overshoots_max_bytes_by_less_than_one_read() {
    if !have_s6_log("a_burst_overshoots_max_bytes_by_less_than_one_read") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("slot");
    let (keep, max_bytes) = (50u32, 4096u32);
    let script = tmp.path().join("log-run");
    std::fs::write(&script, log_run(&dir, keep, max_bytes)).expect("write log/run");
    let body: String = (0..2000)
        .map(|i| format!("line {i:05} {}\n", "x".repeat(90)))
        .collect();
    let input = tmp.path().join("burst");
    std::fs::write(&input, &body).expect("write burst");
    let out = sh()
        .arg(&script)
        // s6 runs it in `log/`, where it keeps its record.
        .current_dir(tmp.path())
        .stdin(std::fs::File::open(&input).expect("open burst"))
        .stdout(Stdio::null())
        .output()
        .expect("run log/run");
    assert!(out.status.success(), "{out:?}");
    let sizes: Vec<u64> = std::fs::read_dir(&dir)
        .expect("log dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('@'))
        .map(|e| e.metadata().expect("meta").len())
        .collect();
    assert!(!sizes.is_empty());
    // One read of s6-log's 8 KB input buffer, each 101-byte line grown by
    // its 31-byte timestamp.
    let one_write = 8192 * (101 + 31) / 101;
    for s in &sizes {
        assert!(
            *s > u64::from(max_bytes) && *s < u64::from(max_bytes) + one_write,
            "archive of {s} bytes for max_bytes {max_bytes}: {sizes:?}"
        );
    }
}
