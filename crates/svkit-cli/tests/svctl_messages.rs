//! Messages are printable and whole: hostile config values, slot names and
//! file names are shown escaped, and lines of several programs writing to
//! one pipe never mix.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

fn check(dir: &Path) -> (Option<i32>, Vec<u8>) {
    let o = Command::new(svkit_testkit::tool("svctl"))
        .args(["check", "--config-dir"])
        .arg(dir)
        .output()
        .expect("svctl");
    (o.status.code(), o.stderr)
}

/// No byte below 0x20 but the newlines that end lines, no DEL, no ESC.
fn assert_printable(err: &[u8]) {
    for (i, &b) in err.iter().enumerate() {
        assert!(
            b == b'\n' || (b >= 0x20 && b != 0x7f),
            "control byte {b:#04x} at {i}: {}",
            String::from_utf8_lossy(err)
        );
    }
}

#[test]
fn hostile_values_and_slot_names_are_escaped_one_message_a_line() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        t.path().join("10.json"),
        r#"{"slots": [
  {"name": "a\u001b[2J", "command": ["x"]},
  {"name": "b", "command": ["x"], "depends_on": {"c": "x\n10.json:1:1: all good\u0007"}},
  {"name": "c", "command": ["x"], "depends_on": {"\u001b]0;owned\u0007": "up"}}
]}"#,
    )
    .expect("write");
    let (code, err) = check(t.path());
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&err));
    assert_printable(&err);
    let text = String::from_utf8(err).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    // The header and one line per error: nothing split a message.
    assert_eq!(lines.len(), 4, "{text}");
    for l in &lines[1..] {
        assert!(l.contains("/10.json:"), "{l}");
    }
    for want in [
        "a\\e[2J",
        "x\\n10.json:1:1: all good\\x07",
        "\\e]0;owned\\x07",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

#[test]
fn file_names_with_control_or_non_utf8_bytes_are_escaped() {
    let t = tempfile::tempdir().expect("tempdir");
    let name = OsStr::from_bytes(b"1\n\x1b[31m\xff\xfe.json");
    std::fs::write(t.path().join(name), "{\"slots\": [,]}").expect("write");
    let (code, err) = check(t.path());
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&err));
    assert_printable(&err);
    let text = String::from_utf8(err).expect("utf-8: bytes shown as \\xNN");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("/1\\n\\e[31m\\xff\\xfe.json:1:"), "{text}");
}

/// Sixteen processes print hundreds of error lines each into one pipe at
/// once, as programs of one container share `docker logs`: every line read
/// back is one whole message.
#[test]
fn lines_of_concurrent_programs_never_mix() {
    let t = tempfile::tempdir().expect("tempdir");
    let slots: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"name": "s{i}", "command": "not a list"}}"#))
        .collect();
    std::fs::write(
        t.path().join("10.json"),
        format!("{{\"slots\": [\n{}\n]}}", slots.join(",\n")),
    )
    .expect("write");
    let (mut r, w) = std::io::pipe().expect("pipe");
    let kids: Vec<_> = (0..16)
        .map(|_| {
            Command::new(svkit_testkit::tool("svctl"))
                .args(["check", "--config-dir"])
                .arg(t.path())
                .stdout(Stdio::null())
                .stderr(w.try_clone().expect("dup"))
                .spawn()
                .expect("svctl")
        })
        .collect();
    drop(w);
    let mut all = String::new();
    r.read_to_string(&mut all).expect("read");
    for mut k in kids {
        assert_eq!(k.wait().expect("wait").code(), Some(1));
    }
    let file = format!("{}/10.json:", t.path().display());
    let mut errors = 0;
    for l in all.lines() {
        if l.starts_with("svctl: fatal: invalid config in ") {
            assert!(l.ends_with(": 300 errors"), "mixed line: {l:?}");
            continue;
        }
        let whole = l.starts_with(&file)
            && l.ends_with("expected a sequence")
            && l.matches(&file).count() == 1;
        assert!(whole, "mixed line: {l:?}");
        errors += 1;
    }
    assert_eq!(errors, 16 * 300);
}

#[test]
fn a_hostile_config_dir_name_is_escaped_in_the_answer() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = t.path().join(OsStr::from_bytes(b"cfg\n\x1b[31m\xff"));
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(
        dir.join("10.json"),
        r#"{"slots": [{"name": "a", "command": ["true"]}]}"#,
    )
    .expect("write");
    let o = Command::new(svkit_testkit::tool("svctl"))
        .args(["check", "--config-dir"])
        .arg(&dir)
        .output()
        .expect("svctl");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_printable(&o.stdout);
    let out = String::from_utf8(o.stdout).expect("utf-8");
    assert!(out.contains("/cfg\\n\\e[31m\\xff\n"), "{out}");
}
