//! Every JSON example in docs/config.md passes `svctl check`, and the doc
//! names every key the config accepts.
//!
//! The examples are the doc's fenced code blocks whose info string is
//! `json` (a new one is tested without touching this file). A marker
//! comment on the nearest non-blank line above a block may say what is
//! special about it:
//!
//! - `<!-- svkit:example -->`: a whole config `svctl check` accepts (the
//!   default, the same as no marker);
//! - `<!-- svkit:example invalid -->`: a whole config `svctl check` rejects
//!   (exit 1);
//! - `<!-- svkit:example fragment -->`: a piece of one, only parsed as JSON.
//!
//! Anything else after `svkit:example`, or a marker that is not above a
//! `json` block, fails the test, so a typo cannot skip an example.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::Path;
use std::process::Command;

const DOC: &str = "docs/config.md";
const MARKER: &str = "svkit:example";

fn doc() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DOC);
    std::fs::read_to_string(p).expect("docs/config.md")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// `svctl check` exits 0.
    Valid,
    /// `svctl check` exits 1.
    Invalid,
    /// Valid JSON, not a whole config.
    Fragment,
}

#[derive(Debug)]
struct Example {
    /// 1-based line of the opening fence.
    line: usize,
    expect: Expect,
    body: String,
}

/// An opening or closing fence: (char, run length, info string).
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.len() - rest.trim_start_matches(c).len();
    (n >= 3).then(|| (c, n, rest[n..].trim()))
}

/// The words of a marker comment (`<!-- svkit:example WORDS -->`), if the
/// line is one.
fn marker_words(line: &str) -> Option<Vec<&str>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let rest = inner.strip_prefix(MARKER)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace))
        .then(|| rest.split_whitespace().collect())
}

/// Every `json` block of a markdown text, with what its marker expects.
fn examples(md: &str) -> Result<Vec<Example>, String> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    // (line index, expectation) of a marker waiting for its block.
    let mut pending: Option<(usize, Expect)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(words) = marker_words(line) {
            if let Some((at, _)) = pending {
                return Err(format!("{DOC}:{}: marker not above a json block", at + 1));
            }
            let expect = match words.as_slice() {
                [] => Expect::Valid,
                ["invalid"] => Expect::Invalid,
                ["fragment"] => Expect::Fragment,
                _ => {
                    return Err(format!(
                        "{DOC}:{}: unknown `{MARKER}` marker {words:?}: expected nothing, \
                         `invalid` or `fragment`",
                        i + 1
                    ))
                }
            };
            pending = Some((i, expect));
            i += 1;
            continue;
        }
        let Some((c, n, info)) = fence(line) else {
            if !line.trim().is_empty() {
                if let Some((at, _)) = pending.take() {
                    return Err(format!("{DOC}:{}: marker not above a json block", at + 1));
                }
            }
            i += 1;
            continue;
        };
        let open = i;
        let mut body = String::new();
        i += 1;
        loop {
            let Some(l) = lines.get(i) else {
                return Err(format!("{DOC}:{}: unclosed code block", open + 1));
            };
            i += 1;
            match fence(l) {
                Some((c2, n2, rest)) if c2 == c && n2 >= n && rest.is_empty() => break,
                _ => {
                    body.push_str(l);
                    body.push('\n');
                }
            }
        }
        let lang = info.split_whitespace().next().unwrap_or("");
        let marked = pending.take();
        if lang == "json" {
            out.push(Example {
                line: open + 1,
                expect: marked.map_or(Expect::Valid, |(_, e)| e),
                body,
            });
        } else if let Some((at, _)) = marked {
            return Err(format!("{DOC}:{}: marker not above a json block", at + 1));
        }
    }
    if let Some((at, _)) = pending {
        return Err(format!("{DOC}:{}: marker not above a json block", at + 1));
    }
    Ok(out)
}

#[test]
fn doc_examples_pass_check() {
    let examples = examples(&doc()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        examples.iter().any(|e| e.expect == Expect::Valid),
        "no whole-config json example found in {DOC}"
    );
    let mut failures = Vec::new();
    for ex in &examples {
        let at = format!("{DOC}:{}", ex.line);
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&ex.body) {
            failures.push(format!("{at}: not JSON: {e}"));
            continue;
        }
        let want = match ex.expect {
            Expect::Fragment => continue,
            Expect::Valid => 0,
            Expect::Invalid => 1,
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        // Named after the block, so svctl's FILE:LINE:COL points at it.
        let file = tmp.path().join(format!("config.md-line{}.json", ex.line));
        std::fs::write(&file, &ex.body).expect("write");
        let out = Command::new(svkit_testkit::tool("svctl"))
            .arg("check")
            .arg("--config-dir")
            .arg(tmp.path())
            .output()
            .expect("run svctl");
        if out.status.code() != Some(want) {
            failures.push(format!(
                "{at}: svctl check exited {:?}, expected {want} ({:?}):\n{}{}",
                out.status.code(),
                ex.expect,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    eprintln!("{} json examples in {DOC}", examples.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn doc_names_every_key() {
    let doc = doc();
    for key in [
        "user",
        "state_dir",
        "sentinel_env",
        "default_program",
        "slots",
        "redirects",
        "name",
        "instances",
        "names",
        "from_dir",
        "path",
        "require_file",
        "command",
        "cwd",
        "env",
        "autostart",
        "if_env",
        "log",
        "dir",
        "stdout",
        "keep",
        "max_bytes",
        "restart",
        "permanent_exit_codes",
        "on_clean_exit",
        "backoff",
        "max_s",
        "reset_after_s",
        "max_deaths",
        "within_s",
        "readiness",
        "notification_fd",
        "check",
        "interval_ms",
        "timeout_ms",
        "down_signal",
        "stop_timeout_ms",
        "match",
        "slot",
        "opt_out_flag",
        "opt_out_env",
        "also_start",
    ] {
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/config.md lacks `{key}`"
        );
    }
}

/// The block finder itself, on small documents.
mod finder {
    use super::*;

    #[test]
    fn every_json_block_with_its_marker() {
        let md = "\
intro\n\
```json\n{\"a\": 1}\n```\n\
\n<!-- svkit:example invalid -->\n\n```json\n{\"slots\": 3}\n```\n\
```sh\necho hi\n```\n\
<!--svkit:example fragment-->\n~~~~json title\n```\n{}\n~~~\n~~~~\n\
```\nplain\n```\n\
\x20\x20\x20```json\n[]\n\x20\x20\x20```\n";
        let ex = examples(md).expect("parses");
        let got: Vec<(usize, Expect, &str)> = ex
            .iter()
            .map(|e| (e.line, e.expect, e.body.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (2, Expect::Valid, "{\"a\": 1}\n"),
                (8, Expect::Invalid, "{\"slots\": 3}\n"),
                (15, Expect::Fragment, "```\n{}\n~~~\n"),
                (23, Expect::Valid, "[]\n"),
            ]
        );
    }

    #[test]
    fn a_marker_must_sit_on_a_json_block() {
        for md in [
            "<!-- svkit:example -->\ntext\n```json\n{}\n```\n",
            "<!-- svkit:example -->\n```sh\ntrue\n```\n",
            "```json\n{}\n```\n<!-- svkit:example -->\n",
            "<!-- svkit:example -->\n<!-- svkit:example -->\n```json\n{}\n```\n",
        ] {
            let e = examples(md).expect_err(md);
            assert!(e.contains("marker not above a json block"), "{md:?}: {e}");
        }
    }

    #[test]
    fn unknown_marker_words_and_unclosed_blocks_fail() {
        let e = examples("<!-- svkit:example invlaid -->\n```json\n{}\n```\n").unwrap_err();
        assert!(e.contains("unknown `svkit:example` marker"), "{e}");
        let e = examples("```json\n{}\n").unwrap_err();
        assert!(e.contains(":1: unclosed code block"), "{e}");
        // Another comment is not a marker.
        assert_eq!(
            examples("<!-- svkit:examples -->\n```json\n{}\n```\n")
                .expect("parses")
                .len(),
            1
        );
    }
}
