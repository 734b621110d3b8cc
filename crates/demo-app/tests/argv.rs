//! The demo app's argv: bytes that are not UTF-8 are a usage error.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_app"))
        .args(["gateway", "run", "-p"])
        .arg(OsStr::from_bytes(b"caf\xe9"))
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(64), "{err}");
    assert!(err.starts_with("usage: app"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
