//! `svctl import` of a Procfile: the fixtures in
//! tests/fixtures/import/procfile, hostile files, and every import's slots
//! through the config validation `svctl check` runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod common;
use common::{to_json, validate};

fn fixture(rel: &str) -> std::path::PathBuf {
    common::fixture_of("procfile", rel)
}

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use svkit::config::{Condition, Kind};
use svkit_import::{procfile, ImportError, Imported};

fn slot(imported: &Imported, name: &str) -> Value {
    let s = imported.slots.iter().find(|s| s.name == name);
    Value::Object(to_json(
        s.unwrap_or_else(|| panic!("no slot {name} in {:#?}", imported.slots)),
    ))
}

fn has_note(imported: &Imported, line: Option<usize>, key: &str, part: &str) -> bool {
    imported
        .notes
        .iter()
        .any(|n| n.at.line == line && n.key == key && n.why.contains(part))
}

#[test]
fn a_rails_procfile() {
    let path = fixture("rails/Procfile");
    let dir = path.parent().unwrap().display().to_string();
    let got = procfile::import(&path).unwrap();
    let names: Vec<_> = got.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["release", "web", "worker", "clock", "tail_logs"]);
    let release = json!({ "release": "completed" });
    assert_eq!(
        slot(&got, "release"),
        json!({ "name": "release", "type": "oneshot", "cwd": dir,
                "command": ["bundle", "exec", "rails", "db:migrate"] })
    );
    assert_eq!(
        slot(&got, "web"),
        json!({ "name": "web", "cwd": dir, "depends_on": release,
                "command": ["sh", "-c", "exec bundle exec puma -C config/puma.rb -p $PORT"] })
    );
    assert_eq!(
        slot(&got, "clock")["command"],
        json!(["bin/clock", "--interval=60"])
    );
    assert_eq!(
        slot(&got, "tail_logs")["command"],
        json!([
            "sh",
            "-c",
            "tail -F log/production.log | grep -v healthcheck"
        ])
    );
    assert!(has_note(
        &got,
        Some(4),
        "release",
        "once at every container start"
    ));
    assert!(has_note(&got, Some(5), "web", "$PORT"));
    assert!(has_note(
        &got,
        Some(10),
        "line",
        "foreman and honcho ignore it too"
    ));
    assert!(has_note(&got, Some(11), "Tail_Logs", "named `tail_logs`"));
    assert!(has_note(&got, Some(11), "Tail_Logs", "without `exec`"));
    assert!(got
        .notes
        .iter()
        .any(|n| n.key == ".env" && n.at.file.ends_with("rails/.env")));
    // Comments and blank lines are no note.
    assert!(!got
        .notes
        .iter()
        .any(|n| matches!(n.at.line, Some(1..=3) | Some(8..=9))));

    let v = validate(&got);
    assert_eq!(v.model.slot("release").unwrap().kind, Kind::Oneshot);
    for s in v.model.slots.iter().filter(|s| s.name != "release") {
        assert_eq!(s.depends_on.len(), 1, "{}", s.name);
        assert_eq!(s.depends_on[0].condition, Condition::Completed);
    }
}

#[test]
fn crlf_and_no_final_newline() {
    let got = procfile::import(&fixture("crlf/Procfile")).unwrap();
    let cmds: Vec<_> = got
        .slots
        .iter()
        .map(to_json)
        .map(|s| (s["name"].clone(), s["command"].clone()))
        .collect();
    assert_eq!(
        Value::from(
            cmds.into_iter()
                .map(|(n, c)| json!([n, c]))
                .collect::<Vec<_>>()
        ),
        json!([
            ["web", ["node", "server.js"]],
            ["queue", ["node", "queue.js", "--concurrency", "4"]],
            ["last", ["node", "last.js"]]
        ])
    );
    assert!(got.notes.is_empty(), "{:#?}", got.notes);
    validate(&got);
}

fn import_bytes(bytes: &[u8]) -> Result<Imported, ImportError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Procfile");
    std::fs::write(&path, bytes).unwrap();
    procfile::import(&path)
}

fn err(bytes: &[u8]) -> ImportError {
    match import_bytes(bytes) {
        Ok(i) => panic!("imported {:#?}", i.slots),
        Err(e) => e,
    }
}

#[test]
fn hostile_procfiles_are_clear_errors() {
    let e = err(b"web: a\nworker: b\nweb: c\n");
    assert_eq!(e.at.line, Some(3));
    assert!(e.what.contains("already on line 1"), "{e:?}");
    let e = err(b"Web: a\nweb: b\n");
    assert!(
        e.at.line == Some(2) && e.what.contains("same slot name `web`"),
        "{e:?}"
    );
    let e = err(b"web: a\nworker: caf\xe9\n");
    assert!(
        e.at.line == Some(2) && e.what.contains("not UTF-8"),
        "{e:?}"
    );
    let e = err(b"web: a\0b\n");
    assert!(e.at.line == Some(1) && e.what.contains("NUL"), "{e:?}");
    assert!(err(b"# nothing\n\n").what.contains("no process"));
    assert!(err(b"").what.contains("no process"));
    assert!(err(b"___: x\n").what.contains("no slot name"));
    // svkit's placeholder has no escape: refused, not a config that fails.
    let e = err(b"web: a\nweb2: echo {instance}\n");
    assert!(
        e.at.line == Some(2) && e.what.contains("{instance}"),
        "{e:?}"
    );

    // 10 MB: refused without reading it all.
    let mut big = b"web: x\n".to_vec();
    big.resize(10 << 20, b'#');
    assert!(err(&big).what.contains("over 1048576 bytes"));

    // Binary junk (seeded, so a failure repeats): an error or a result.
    let mut x: u32 = 12345;
    let junk: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let _ = import_bytes(&junk).map(|i| validate(&i));

    // A FIFO or a dir where the Procfile should be: refused, never waited on.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("Procfile");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert!(procfile::import(&fifo)
        .unwrap_err()
        .what
        .contains("not a regular file"));
    assert!(procfile::import(dir.path())
        .unwrap_err()
        .what
        .contains("a directory"));
    // A device, and a file of /proc that cannot be read from its start.
    let e = procfile::import(Path::new("/dev/zero")).unwrap_err();
    assert!(e.what.contains("not a regular file"), "{e:?}");
    let e = procfile::import(Path::new("/proc/self/mem")).unwrap_err();
    assert!(e.what.contains("unable to read"), "{e:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Any lines made of Procfile-ish pieces import to a valid config or
    /// fail with a located reason; never a panic.
    #[test]
    fn any_procfile_imports_valid_or_errs(lines in prop::collection::vec(
        (prop::sample::select(vec!["web", "Worker", "release", "a-b_c", "", "#x", " w", "9"]),
         prop::sample::select(vec![":", ": ", ":\t", " :", ""]),
         prop::sample::select(vec!["app", "app -p $PORT", "a && b", "x | y", "FOO=1 app",
             "\"q\" 'r'", "exec z", "cd /x; y", "", "  ", "a\\", "$(date)", "{ a; }", "~/bin/x", "x {instance}"])),
        0..8))
    {
        let text: String = lines.iter().map(|(n, c, cmd)| format!("{n}{c}{cmd}\r\n")).collect();
        match import_bytes(text.as_bytes()) {
            Ok(i) => { validate(&i); }
            Err(e) => prop_assert!(!e.what.is_empty()),
        }
    }
}
