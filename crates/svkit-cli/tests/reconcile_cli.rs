//! svkit-reconcile's command line, outside the sandbox: help, usage errors
//! and a stdout nobody reads.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::process::Command;

use svkit_testkit::{assert_quiet_on_closed_stdout, output_with_closed_stdout};

fn bin() -> std::path::PathBuf {
    svkit_testkit::tool("svkit-reconcile")
}

#[test]
fn bad_usage_is_one_line_and_exits_100() {
    for argv in [
        &["--bogus"][..],
        &["--lock-timeout", "soon"][..],
        &["x"][..],
    ] {
        let o = Command::new(bin()).args(argv).output().expect("run");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(100), "{argv:?}: {err}");
        assert!(
            err.starts_with("svkit-reconcile: fatal: usage: ") && err.ends_with("; see --help\n"),
            "{argv:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{argv:?}: {err}");
        assert!(o.stdout.is_empty(), "{argv:?}");
    }
}

#[test]
fn a_closed_stdout_ends_quietly() {
    for argv in [&["--help"][..], &["--version"][..]] {
        let o = output_with_closed_stdout(Command::new(bin()).args(argv));
        assert_quiet_on_closed_stdout(&format!("{argv:?}"), &o, 0);
    }
}
