//! `svctl check` and `svctl render` on the corpus of malformed and hostile
//! configs under `tests/configs/bad/`.
//!
//! Corpus format: `NAME.json` (one layer) or `NAME/` (several layers, for
//! cross-file rules), plus `NAME.expect`: one fragment per line, each of
//! which must appear in svctl's stderr, the first ones pinning where each
//! error is (`NAME.json:LINE:COL: FIELD:`). Every entry must make `check`
//! exit 1 with every error line naming the file and a line:column that
//! points at the start of the key or value it names, must not panic, and
//! must make `render` write nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::{Path, PathBuf};
use svkit_testkit::svctl;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/configs/bad")
}

/// Copy one corpus entry into a fresh config dir.
fn stage(entry: &Path, dir: &Path) {
    if entry.is_dir() {
        for f in std::fs::read_dir(entry).expect("read entry").flatten() {
            std::fs::copy(f.path(), dir.join(f.file_name())).expect("copy");
        }
    } else {
        let name = entry.file_name().expect("file name");
        std::fs::copy(entry, dir.join(name)).expect("copy");
    }
}

#[test]
fn every_bad_config_is_rejected_with_a_location() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("corpus dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "expect"))
        .collect();
    entries.sort();
    assert!(entries.len() >= 40, "corpus has {} entries", entries.len());
    let mut failures = Vec::new();
    for expect in entries {
        let stem = expect.with_extension("");
        let entry = if stem.is_dir() {
            stem.clone()
        } else {
            stem.with_extension("json")
        };
        let name = stem
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::tempdir().expect("tempdir");
        let cfg = tmp.path().join("cfg");
        std::fs::create_dir(&cfg).expect("mkdir");
        stage(&entry, &cfg);

        let out = svctl()
            .arg("check")
            .arg("--config-dir")
            .arg(&cfg)
            .output()
            .expect("run svctl");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.code() != Some(1) {
            failures.push(format!(
                "{name}: check exited {:?}, want 1\n{err}",
                out.status.code()
            ));
            continue;
        }
        if !err.starts_with("svctl: fatal: invalid config in ") {
            failures.push(format!(
                "{name}: first line is not the fatal summary:\n{err}"
            ));
        }
        for line in err.lines().skip(1) {
            let located = line.starts_with(&cfg.display().to_string())
                && line
                    .split(':')
                    .nth(1)
                    .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
            if !located {
                failures.push(format!("{name}: error line without file:line:col: {line}"));
            } else if let Some(why) = misplaced(&cfg, line) {
                failures.push(format!("{name}: {why}: {line}"));
            }
        }
        let expected = std::fs::read_to_string(&expect).expect("read expect");
        if !expected.lines().any(pins_a_location) {
            failures.push(format!(
                "{name}: the .expect pins no FILE:LINE:COL (its first lines should)"
            ));
        }
        for frag in expected.lines() {
            if !frag.is_empty() && !err.contains(frag) {
                failures.push(format!("{name}: stderr lacks {frag:?}:\n{err}"));
            }
        }

        let to = tmp.path().join("out");
        let out = svctl()
            .arg("render")
            .arg("--to")
            .arg(&to)
            .arg("--config-dir")
            .arg(&cfg)
            .output()
            .expect("run svctl render");
        if out.status.code() != Some(1) {
            failures.push(format!(
                "{name}: render exited {:?}, want 1",
                out.status.code()
            ));
        }
        if to.exists() {
            failures.push(format!("{name}: render wrote {}", to.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `NAME.json:LINE:COL:` at the start of an `.expect` line.
fn pins_a_location(line: &str) -> bool {
    let mut parts = line.splitn(4, ':');
    let file = parts.next().unwrap_or("");
    let num =
        |p: Option<&str>| p.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    file.ends_with(".json") && num(parts.next()) && num(parts.next()) && parts.next().is_some()
}

/// An error that names a field (`FILE:L:C: FIELD: why`) must point at the
/// start of a key or a value: a quote, a bracket, a number or a literal,
/// never the middle or the end of a token. Syntax errors (no field) point
/// where the parser stopped.
fn misplaced(cfg: &Path, line: &str) -> Option<String> {
    let rest = line.strip_prefix(&format!("{}/", cfg.display()))?;
    let mut parts = rest.splitn(4, ':');
    let (file, l, c, msg) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let field = msg.trim_start().split(": ").next().unwrap_or("");
    let names_a_field = msg.trim_start().contains(": ")
        && !field.is_empty()
        && field
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.[]{}-".contains(&b));
    if !names_a_field {
        return None;
    }
    let (l, c): (usize, usize) = (l.parse().ok()?, c.parse().ok()?);
    let text = std::fs::read(cfg.join(file)).ok()?;
    let at = text
        .split(|&b| b == b'\n')
        .nth(l.checked_sub(1)?)
        .and_then(|row| row.get(c.checked_sub(1)?).copied());
    match at {
        Some(b) if b"\"{[-tfn".contains(&b) || b.is_ascii_digit() => None,
        other => Some(format!(
            "column {c} is not the start of a key or value (found {:?})",
            other.map(char::from)
        )),
    }
}

#[test]
fn oversized_file_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let body = format!("{{\"slots\": []{}}}", " ".repeat(5 << 20));
    std::fs::write(tmp.path().join("big.json"), body).expect("write");
    let out = svctl()
        .arg("check")
        .arg("--config-dir")
        .arg(tmp.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("big.json: file is") && err.contains("limit"),
        "{err}"
    );
}

#[test]
fn deeply_nested_json_does_not_crash() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let body = format!(
        "{{\"slots\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(tmp.path().join("deep.json"), body).expect("write");
    let out = svctl()
        .arg("check")
        .arg("--config-dir")
        .arg(tmp.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("recursion limit"));
}
