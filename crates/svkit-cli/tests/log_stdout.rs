//! `log.prefix` and `log.format` on the real /init: with several slots
//! writing to `docker logs` at once, every line there says which slot
//! wrote it, whole (a 20 KB line, over s6-log's default 8 KB, is one line;
//! bytes that are not UTF-8 pass as they are in text, as U+FFFD in JSON),
//! while the files keep the raw lines behind their timestamps.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, Rootfs, Sandbox};

/// Each slot's program: five short lines, a 20 000-byte one, one with
/// invalid UTF-8 (`\377\376`), then `done-NAME`.
const TALK: &str = r#"["sh", "-c", "n=$1; for i in 1 2 3 4 5; do echo \"msg-$n-$i\"; done; printf \"LONG-$n-%s\\n\" \"$(head -c 20000 /dev/zero | tr '\\0' x)\"; printf \"bad-$n-\\377\\376-end\\n\"; echo \"done-$n\"; exec sleep 100000", "talk", "NAME"]"#;

const LONG: usize = 20_000;

fn config() -> String {
    let cmd = |n: &str| TALK.replace("NAME", n);
    format!(
        r#"{{ "slots": [
  {{ "name": "t-{{instance}}", "instances": {{ "names": ["a", "b"] }}, "command": {t},
     "log": {{ "dir": "/data/logs/{{instance}}", "prefix": "[{{slot}}] " }} }},
  {{ "name": "solo", "command": {solo},
     "log": {{ "dir": "/data/logs/solo", "prefix": "{{slot}}|" }} }},
  {{ "name": "js", "command": {js},
     "log": {{ "dir": "/data/logs/js", "format": "json" }} }}
] }}"#,
        t = cmd("{instance}"),
        solo = cmd("solo"),
        js = cmd("js"),
    )
}

/// The lines the program of slot `n` writes, as bytes.
fn expected(n: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (1..=5)
        .map(|i| format!("msg-{n}-{i}").into_bytes())
        .collect();
    v.push(format!("LONG-{n}-{}", "x".repeat(LONG)).into_bytes());
    let mut bad = format!("bad-{n}-").into_bytes();
    bad.extend_from_slice(b"\xff\xfe-end");
    v.push(bad);
    v.push(format!("done-{n}").into_bytes());
    v
}

/// A slot's line, by the marker it holds (`msg-a-1` is slot t-a's).
fn owner(line: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(line);
    ["a", "b", "solo", "js"].into_iter().find(|n| {
        ["msg", "LONG", "bad"]
            .iter()
            .any(|m| text.contains(&format!("{m}-{n}-")))
            || text.ends_with(&format!("done-{n}"))
            || text.contains(&format!("done-{n}\""))
    })
}

/// What s6-overlay itself writes into the container's output, not always
/// one whole line at a time: a slot's line, written whole, can land right
/// after such a fragment. The slot's line is then the part from its prefix.
const OVERLAY_FRAGMENTS: [&str; 3] = ["services-up: ", "s6-rc: ", "cont-init: "];

fn from_prefix<'a>(line: &'a [u8], prefix: &str) -> &'a [u8] {
    let p = prefix.as_bytes();
    let foreign = OVERLAY_FRAGMENTS
        .iter()
        .any(|f| line.starts_with(f.as_bytes()));
    match line.windows(p.len()).position(|w| w == p) {
        Some(at) if at > 0 && foreign => &line[at..],
        _ => line,
    }
}

#[test]
fn stdout_lines_say_who_spoke_and_files_stay_raw() {
    if !sandbox_or_skip("stdout_lines_say_who_spoke_and_files_stay_raw") {
        return;
    }
    let rootfs = Rootfs::with_svkit(&config());
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());
    let logs = poll("every slot's last line", Duration::from_secs(20), || {
        let l = sbx.logs_bytes();
        let text = String::from_utf8_lossy(&l);
        ["a", "b", "solo", "js"]
            .iter()
            .all(|n| text.contains(&format!("done-{n}")))
            .then_some(l)
    });

    // Text slots: every line of theirs carries its prefix, whole, in order.
    let prefixes = [("a", "[t-a] "), ("b", "[t-b] "), ("solo", "solo| ")];
    for (n, prefix) in prefixes {
        let got: Vec<&[u8]> = logs
            .split(|&b| b == b'\n')
            .filter(|l| owner(l) == Some(n))
            .map(|l| from_prefix(l, prefix))
            .collect();
        let want: Vec<Vec<u8>> = expected(n)
            .into_iter()
            .map(|l| [prefix.as_bytes(), &l].concat())
            .collect();
        assert_eq!(
            got.iter().map(|l| l.to_vec()).collect::<Vec<_>>(),
            want,
            "slot {n}'s lines on stdout"
        );
    }

    // The JSON slot: one object a line, the invalid bytes as U+FFFD.
    let objects: Vec<serde_json::Value> = logs
        .split(|&b| b == b'\n')
        .filter(|l| owner(l) == Some("js"))
        .map(|l| from_prefix(l, "{\"time\":"))
        .map(|l| serde_json::from_slice(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect();
    let lines: Vec<String> = objects
        .iter()
        .map(|o| {
            assert_eq!(o["slot"], "js", "{o}");
            let t = o["time"].as_str().expect("time");
            assert!(
                t.len() == 27 && t.ends_with('Z') && &t[10..11] == "T",
                "{t}"
            );
            o["line"].as_str().expect("line").to_string()
        })
        .collect();
    let want: Vec<String> = expected("js")
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    assert_eq!(lines, want);
    assert!(want[6].contains("\u{fffd}\u{fffd}"));

    // The files: `TIMESTAMP  raw line`, no prefix, the long line whole.
    for n in ["a", "b", "solo", "js"] {
        let current =
            std::fs::read(data.path().join(format!("logs/{n}/current"))).expect("current");
        let raw: Vec<Vec<u8>> = current
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                assert!(
                    l.len() > 31 && l[4] == b'-' && l[13] == b':' && &l[29..31] == b"  ",
                    "{n}: not a timestamped line: {:?}",
                    String::from_utf8_lossy(&l[..l.len().min(60)])
                );
                l[31..].to_vec()
            })
            .collect();
        assert_eq!(raw, expected(n), "slot {n}'s file");
    }
    sbx.stop();
}
