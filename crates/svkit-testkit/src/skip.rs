//! The one way a test skips. A skip says why, on stderr and in the skip
//! log `make test` counts (`SVKIT_SKIP_LOG`); where nothing may skip
//! (`SVKIT_NO_SKIP=1`, set by `make test` as root, hence in CI) it fails
//! the test instead.

use std::io::Write;

/// Set to 1: every skip is a failure.
pub const NO_SKIP_ENV: &str = "SVKIT_NO_SKIP";
/// A file each skip appends one line to (`TEST: WHY`).
pub const SKIP_LOG_ENV: &str = "SVKIT_SKIP_LOG";

/// Skips `test` for `why`: records it and returns, so the caller returns
/// next; panics instead when skipping is not allowed.
pub fn skip(test: &str, why: impl std::fmt::Display) {
    if std::env::var(NO_SKIP_ENV).as_deref() == Ok("1") {
        panic!("{test}: cannot run here and {NO_SKIP_ENV}=1: {why}");
    }
    // Straight to fd 2, not `eprintln!`: libtest captures the macros, and
    // a skip hidden in a passing test's captured output would go unseen.
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV).filter(|l| !l.is_empty()) {
        // One short write to an O_APPEND file: lines from tests running
        // side by side do not mix.
        let line = format!("{test}: {why}\n");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!("{test}: unable to record the skip in {log:?}: {e}");
        }
    }
}

/// Skips `test` unless it runs as root (namespaces, other users).
/// Returns whether the test may go on.
pub fn root_or_skip(test: &str, why_root: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    skip(test, format!("needs root ({why_root})"));
    false
}
