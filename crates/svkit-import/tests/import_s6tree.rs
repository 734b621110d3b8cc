//! `svctl import` of s6-overlay trees (`services.d/`, `s6-rc.d/`): the
//! fixtures in tests/fixtures/import/s6, hostile trees, and every import's
//! slots through the config validation `svctl check` runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod common;
use common::{to_json, validate};

fn fixture(rel: &str) -> std::path::PathBuf {
    common::fixture_of("s6", rel)
}

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{json, Value};
use svkit_import::{s6tree, Imported, Note};

fn slot(imported: &Imported, name: &str) -> serde_json::Map<String, Value> {
    to_json(
        imported
            .slots
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no slot {name} in {:#?}", imported.slots)),
    )
}

fn note_for<'a>(imported: &'a Imported, key: &str, file_end: &str) -> &'a Note {
    imported
        .notes
        .iter()
        .find(|n| n.key == key && n.at.file.ends_with(file_end))
        .unwrap_or_else(|| panic!("no note {key} for {file_end} in {:#?}", imported.notes))
}

fn names(imported: &Imported) -> Vec<&str> {
    imported.slots.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn services_d_longruns_run_their_scripts_in_place() {
    let root = fixture("services.d");
    let r = root.display();
    let got = s6tree::import(&root).unwrap();
    assert_eq!(names(&got), ["cron", "nginx", "php-fpm"]);
    assert_eq!(
        Value::Object(slot(&got, "nginx").clone()),
        json!({ "name": "nginx", "command": ["/command/with-contenv", "sh", format!("{r}/nginx/run")],
                "cwd": format!("{r}/nginx") })
    );
    assert_eq!(
        Value::Object(slot(&got, "php-fpm").clone()),
        json!({ "name": "php-fpm", "command": ["/bin/sh", format!("{r}/php-fpm/run")],
                "cwd": format!("{r}/php-fpm"), "readiness": { "notification_fd": 3 },
                "stop_timeout_ms": 5000, "down_signal": "QUIT" })
    );
    assert_eq!(slot(&got, "cron")["autostart"], "never");
    for (key, file) in [
        ("README", "services.d/README"),
        ("finish", "php-fpm/finish"),
        ("log/run", "php-fpm/log/run"),
        ("run", "nginx/run"),
        ("services.d", "services.d"),
    ] {
        note_for(&got, key, file);
    }
    assert!(note_for(&got, "finish", "php-fpm/finish")
        .why
        .contains("essential"));
    let v = validate(&got);
    assert_eq!(v.model.slots.len(), 3);
}

#[test]
fn s6_rc_d_dependencies_bundles_and_the_boot_set() {
    let root = fixture("s6-rc.d");
    let r = root.display();
    let got = s6tree::import(&root).unwrap();
    // app-log is app's logger (a pipeline consumer): no slot.
    assert_eq!(names(&got), ["app", "extra", "migrate", "redis", "worker"]);
    assert_eq!(
        Value::Object(slot(&got, "app").clone()),
        json!({ "name": "app", "command": ["/command/execlineb", "-P", format!("{r}/app/run")],
                "cwd": format!("{r}/app"), "readiness": { "notification_fd": 3 },
                "depends_on": { "migrate": "completed" } })
    );
    assert_eq!(
        Value::Object(slot(&got, "migrate").clone()),
        json!({ "name": "migrate", "type": "oneshot",
                "command": ["/command/execlineb", "-P", format!("{r}/migrate/up")] })
    );
    // worker: app has readiness (ready), the tools bundle is redis (up),
    // legacy-services is reported.
    assert_eq!(
        slot(&got, "worker")["depends_on"],
        json!({ "app": "ready", "redis": "up" })
    );
    assert_eq!(slot(&got, "redis")["down_signal"], "INT");
    assert_eq!(slot(&got, "redis")["stop_timeout_ms"], 10000);
    // In the user bundle or a dependency of what is; extra is in neither.
    for boot in ["app", "migrate", "redis", "worker"] {
        assert!(!slot(&got, boot).contains_key("autostart"), "{boot}");
    }
    assert_eq!(slot(&got, "extra")["autostart"], "never");
    for (key, file) in [
        ("consumer-for", "app-log/consumer-for"),
        ("producer-for", "app/producer-for"),
        ("timeout-up", "app/timeout-up"),
        ("down", "migrate/down"),
        ("dependencies.d/base", "app/dependencies.d/base"),
        (
            "dependencies.d/legacy-services",
            "worker/dependencies.d/legacy-services",
        ),
        ("extra", "s6-rc.d/extra"),
        ("user", "s6-rc.d"),
    ] {
        note_for(&got, key, file);
    }
    let v = validate(&got);
    let worker = v.model.slot("worker").unwrap();
    assert_eq!(worker.depends_on.len(), 2);
}

/// A tree in a temp dir, built file by file.
struct Tree(tempfile::TempDir);

impl Tree {
    fn new() -> Tree {
        Tree(tempfile::tempdir().unwrap())
    }
    /// For trees of thousands of files: in memory when the system has a
    /// tmpfs there (deleting them from a disk can take minutes).
    fn big() -> Tree {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        Tree(tempfile::tempdir_in(dir).unwrap())
    }
    fn file(&self, rel: &str, text: &str) -> &Tree {
        let p = self.0.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        self
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
    fn longrun(&self, name: &str) -> &Tree {
        self.file(&format!("{name}/type"), "longrun\n")
            .file(&format!("{name}/run"), "#!/bin/sh\nexec sleep 1000\n")
    }
}

fn err(path: &Path) -> svkit_import::ImportError {
    match s6tree::import(path) {
        Ok(i) => panic!("imported {:#?}", i.slots),
        Err(e) => e,
    }
}

#[test]
fn hostile_trees_are_clear_errors() {
    // A symlink loop inside, and as the tree itself.
    let t = Tree::new();
    t.file("a/run", "#!/bin/sh\n");
    symlink("loop", t.path().join("loop")).unwrap();
    let e = err(t.path());
    assert!(
        e.at.file.ends_with("loop") && e.what.contains("unable to read"),
        "{e:?}"
    );
    let e = err(&t.path().join("loop"));
    assert!(e.what.contains("unable to read"), "{e:?}");

    // A FIFO as the tree, and where a run script or a type should be:
    // refused, never waited on.
    let t = Tree::new();
    nix::unistd::mkfifo(
        &t.path().join("fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    assert!(err(&t.path().join("fifo")).what.contains("not a directory"));
    std::fs::create_dir(t.path().join("svc")).unwrap();
    nix::unistd::mkfifo(
        &t.path().join("svc/run"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::fs::remove_file(t.path().join("fifo")).unwrap();
    assert!(err(t.path()).what.contains("not a regular file"));
    let t = Tree::new();
    std::fs::create_dir(t.path().join("svc")).unwrap();
    nix::unistd::mkfifo(
        &t.path().join("svc/type"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    assert!(err(t.path()).what.contains("not a regular file"));

    // /proc/self/mem as a type: unreadable from its start.
    let t = Tree::new();
    t.longrun("a");
    std::fs::create_dir(t.path().join("b")).unwrap();
    symlink("/proc/self/mem", t.path().join("b/type")).unwrap();
    let e = err(t.path());
    assert!(e.what.contains("unable to read type"), "{e:?}");

    // Binary junk as a type, a timeout, a dependency name.
    let t = Tree::new();
    t.longrun("a").file("b/type", "\u{1}\u{2}\u{7f}junk");
    assert!(err(t.path())
        .what
        .contains("a type is longrun, oneshot or bundle"));
    let t = Tree::new();
    t.longrun("a").file("a/timeout-kill", "12ab\n");
    assert!(err(t.path()).what.contains("not a number"));
    let t = Tree::new();
    t.longrun("a");
    std::fs::create_dir_all(t.path().join("a/dependencies.d")).unwrap();
    std::fs::write(
        t.path()
            .join("a/dependencies.d")
            .join(OsStr::from_bytes(b"\xff\xfe")),
        "",
    )
    .unwrap();
    assert!(err(t.path()).what.contains("not UTF-8"));

    // What s6-rc-compile refuses: no type, a oneshot without up, cycles.
    let t = Tree::new();
    t.longrun("a").file("b/run", "#!/bin/sh\n");
    assert!(err(t.path()).what.contains("no type file"));
    let t = Tree::new();
    t.file("a/type", "oneshot\n");
    assert!(err(t.path()).what.contains("needs an up file"));
    let t = Tree::new();
    t.longrun("a")
        .longrun("b")
        .file("a/dependencies.d/b", "")
        .file("b/dependencies.d/a", "");
    let e = err(t.path());
    assert!(e.what.contains("dependency cycle a -> b -> a"), "{e:?}");
    let t = Tree::new();
    t.file("x/type", "bundle\n")
        .file("x/contents.d/y", "")
        .file("y/type", "bundle\n")
        .file("y/contents.d/x", "");
    assert!(err(t.path()).what.contains("bundle cycle"));

    // Names svkit cannot carry in a path: the placeholder, a control
    // character (s6-rc takes both).
    let t = Tree::new();
    t.longrun("a{instance}");
    assert!(err(t.path()).what.contains("{instance}"));
    let t = Tree::new();
    t.file("a\tb/run", "#!/bin/sh\n");
    assert!(err(t.path()).what.contains("control characters"));
    let t = Tree::new();
    t.file("o{instance}/type", "oneshot\n")
        .file("o{instance}/up", "true\n");
    assert!(err(t.path()).what.contains("{instance}"));

    // Two names for one slot; a service's own dir instead of the tree.
    let t = Tree::new();
    t.longrun("Web").longrun("web");
    assert!(err(t.path()).what.contains("make the same slot name `web`"));
    assert!(err(&fixture("services.d/nginx"))
        .what
        .contains("one service's dir"));
}

#[test]
fn scripts_that_cannot_run_are_reported_not_dropped() {
    let t = Tree::new();
    t.file("blob/run", "no shebang, not executable\n")
        .file("ok/run", "#! /bin/bash -e \nexec true\n");
    let got = s6tree::import(t.path()).unwrap();
    assert_eq!(names(&got), ["ok"]);
    let root = std::fs::canonicalize(t.path()).unwrap();
    assert_eq!(
        slot(&got, "ok")["command"],
        json!(["/bin/bash", "-e", format!("{}/ok/run", root.display())])
    );
    assert!(note_for(&got, "run", "blob/run")
        .why
        .contains("not imported"));
    validate(&got);

    // An empty tree: nothing, said so.
    let t = Tree::new();
    let got = s6tree::import(t.path()).unwrap();
    assert!(got.slots.is_empty());
    assert!(note_for(&got, "services", "")
        .why
        .contains("nothing imported"));
}

#[test]
fn ten_thousand_services() {
    // services.d: 10,000 longruns.
    let t = Tree::big();
    for i in 0..10_000 {
        t.file(&format!("s{i}/run"), "#!/bin/sh\nexec true\n");
    }
    let start = std::time::Instant::now();
    let got = s6tree::import(t.path()).unwrap();
    eprintln!(
        "services.d, 10,000 services: imported in {:?}",
        start.elapsed()
    );
    assert_eq!(got.slots.len(), 10_000);
    validate(&got);

    // s6-rc.d: 10,000 longruns in one dependency chain (walked without
    // recursion), reached from the user bundle through its last one.
    let t = Tree::big();
    t.file("user/type", "bundle\n")
        .file("user/contents.d/s9999", "");
    for i in 0..10_000 {
        t.longrun(&format!("s{i}"));
        if i > 0 {
            // The deprecated list file: one file, not a dir and an entry.
            t.file(
                &format!("s{i}/dependencies"),
                &format!("# the one before\n  s{}\n", i - 1),
            );
        }
    }
    let start = std::time::Instant::now();
    let got = s6tree::import(t.path()).unwrap();
    eprintln!(
        "s6-rc.d, a chain of 10,000: imported in {:?}",
        start.elapsed()
    );
    assert_eq!(got.slots.len(), 10_000);
    assert!(
        got.slots
            .iter()
            .all(|s| !to_json(s).contains_key("autostart")),
        "all reached from user"
    );
    assert_eq!(slot(&got, "s5000")["depends_on"], json!({ "s4999": "up" }));
    validate(&got);
}
