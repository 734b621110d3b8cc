//! svkit-wrap quotes argv in its messages: control characters and bytes
//! that are not UTF-8 reach the operator's terminal as visible escapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::process::Command;

#[test]
fn hostile_argv_is_escaped_in_messages() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        t.path().join("10.json"),
        r#"{"slots": [{"name": "a", "command": ["true"]}]}"#,
    )
    .expect("write");
    // Off s6-overlay the command runs in the foreground; one that does not
    // exist is reported with its name.
    let o = Command::new(svkit_testkit::tool("svkit-wrap"))
        .arg("--")
        .arg(OsStr::from_bytes(b"\x1b]0;x\x07nope\n\xff"))
        .env("SVKIT_CONFIG_DIR", t.path())
        .output()
        .expect("svkit-wrap");
    assert_eq!(o.status.code(), Some(127));
    let err = String::from_utf8(o.stderr).expect("utf-8: bytes shown as \\xNN");
    assert_eq!(
        err.lines().last(),
        Some(
            "svkit-wrap: fatal: unable to exec \\e]0;x\\x07nope\\n\\xff: No such file or directory"
        ),
        "{err}"
    );
    assert!(!err.bytes().any(|b| b < 0x20 && b != b'\n'), "{err:?}");
}

/// Nothing to run (no argv, no `default_program`) is a usage error that
/// says what is missing.
#[test]
fn nothing_to_run_is_said() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        t.path().join("10.json"),
        r#"{"slots": [{"name": "a", "command": ["true"]}]}"#,
    )
    .expect("write");
    for argv in [&[][..], &["--"][..]] {
        let o = Command::new(svkit_testkit::tool("svkit-wrap"))
            .args(argv)
            .env("SVKIT_CONFIG_DIR", t.path())
            .output()
            .expect("svkit-wrap");
        assert_eq!(o.status.code(), Some(100), "{argv:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "svkit-wrap: fatal: no command given and no default_program in the config\n"
        );
    }
}
