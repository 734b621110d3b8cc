//! `svkit slot-env`, what a slot's `run` execs to read its env files and
//! secrets, on the host: its usage errors, the env-file line it names,
//! the kernel's size limit to the byte, and the exec's exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::Path;
use std::process::{Command, Output};

/// Run in a dir of its own: it leaves a refusal's reason in its current
/// dir (a slot's dir, for `finish`).
fn slot_env_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(svkit_testkit::tool("svkit"))
        .arg("slot-env")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("svkit slot-env")
}

fn slot_env(args: &[&str]) -> Output {
    let t = tempfile::tempdir().expect("tempdir");
    slot_env_in(t.path(), args)
}

/// What it said: on its stdout, the slot's log pipe (a slot's `run`
/// gives it that, so `docker logs` and the log files have the line).
fn said(o: &Output) -> String {
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn env_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

#[test]
fn usage_errors_exit_100_and_name_what_is_missing() {
    for args in [
        &["--sentinel", "S", "--", "true"][..],
        &["--slot", "a", "--", "true"][..],
        &["--slot", "a", "--sentinel", "S"][..],
    ] {
        let o = slot_env(args);
        assert_eq!(o.status.code(), Some(100), "{args:?}: {}", said(&o));
        assert!(
            said(&o).starts_with("svkit: fatal: usage: slot-env"),
            "{}",
            said(&o)
        );
    }
    assert!(said(&slot_env(&["--slot", "a", "--", "true"]))
        .contains("--slot and --sentinel are required"));
}

/// An env file that sets the sentinel is refused at the line that sets it
/// (the last such line), not the first line or none.
#[test]
fn a_refused_variable_is_named_at_its_line() {
    let t = tempfile::tempdir().expect("tempdir");
    let f = env_file(t.path(), "env", "A=1\n# a comment\n\nAPP_SUP=x\nB=2\n");
    let o = slot_env_in(
        t.path(),
        &[
            "--slot",
            "a",
            "--sentinel",
            "APP_SUP",
            "--env-file",
            &f,
            "--",
            "true",
        ],
    );
    assert_eq!(o.status.code(), Some(78), "{}", said(&o));
    assert_eq!(
        said(&o),
        format!("svkit: fatal: slot a: not starting: env_file {f}:4: APP_SUP is the sentinel_env, which svkit sets to the slot name\n")
    );
    // And the reason is left for `finish`, which says why the slot failed.
    let record = std::fs::read_to_string(t.path().join(".svkit-start-error")).expect("record");
    assert!(
        record.contains(&format!("{f}:4: APP_SUP is the sentinel_env")),
        "{record}"
    );
}

/// `NAME=value` must stay under the kernel's 131,072 bytes a string: one
/// byte under passes, the limit itself is refused, counted with its `=`.
#[test]
fn the_size_limit_counts_name_equals_and_value() {
    let t = tempfile::tempdir().expect("tempdir");
    // With one env file of `A=` and `len` bytes of value.
    let run = |name: &str, len: usize| {
        let f = env_file(t.path(), name, &format!("A={}\n", "v".repeat(len)));
        let o = slot_env(&[
            "--slot",
            "a",
            "--sentinel",
            "S",
            "--env-file",
            &f,
            "--",
            "true",
        ]);
        (f, o)
    };
    let (_, o) = run("under", 131_069);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let (at, o) = run("at", 131_070);
    assert_eq!(o.status.code(), Some(78), "{}", said(&o));
    assert!(
        said(&o).contains(&format!("{at}:1: A=value is 131072 bytes")),
        "{}",
        said(&o)
    );
}

/// As a shell would: 127 when the program is not there, 126 when it
/// cannot be run.
#[test]
fn exec_failures_exit_127_or_126() {
    let o = slot_env(&["--slot", "a", "--sentinel", "S", "--", "/nonexistent/prog"]);
    assert_eq!(o.status.code(), Some(127), "{}", said(&o));
    let t = tempfile::tempdir().expect("tempdir");
    // Mode 0644: not even root may exec a file without an x bit.
    let plain = env_file(t.path(), "plain", "echo hi\n");
    let o = slot_env(&["--slot", "a", "--sentinel", "S", "--", &plain]);
    assert_eq!(o.status.code(), Some(126), "{}", said(&o));
}
