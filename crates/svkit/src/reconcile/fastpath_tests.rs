//! The record's fast path: a no-op plan is confirmed without reading files,
//! and any change made behind svkit's back (even one of the same size with
//! its mtime put back, right after svkit wrote the file) still shows.

use super::apply::{apply, ApplyOptions};
use super::error::ReconcileError;
use super::plan::{survey, Action, Survey};
use super::record::{Record, SlotRecord, RECORD};
use super::{DesiredFile, DesiredSlot};
use std::fs::{self, FileTimes, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn slot(name: &str, run: &str) -> DesiredSlot {
    let file = |rel: &str, bytes: &str, mode| DesiredFile {
        rel: rel.into(),
        bytes: bytes.as_bytes().to_vec(),
        mode,
    };
    DesiredSlot {
        name: name.into(),
        files: vec![
            file(".svkit", "{\"svkit\":1}\n", 0o644),
            file("log/run", "#!/bin/sh\nexec logger\n", 0o755),
            file("run", run, 0o755),
            file("type", "longrun\n", 0o644),
        ],
        user: None,
        log_dir: None,
        want_up: true,
    }
}

/// apply, minus s6: with no s6-svscan to tell about new slots, an apply
/// that creates fails at that last step, after the record is written.
fn apply_ok(scandir: &Path, desired: &[DesiredSlot]) {
    match apply(scandir, desired, &ApplyOptions::default()) {
        Ok(_) | Err(ReconcileError::Control(_)) => {}
        Err(e) => panic!("apply: {e}"),
    }
}

fn look(scandir: &Path, desired: &[DesiredSlot]) -> Survey {
    survey(scandir, desired).expect("survey")
}

fn action(s: &Survey, name: &str) -> Action {
    let p = s.plans.iter().find(|p| p.name == name).expect("planned");
    p.action.clone()
}

fn confirmed(s: &Survey, name: &str) -> bool {
    s.confirmed.contains(name)
}

/// Overwrites `path` in place with bytes of the same size, then puts its
/// mtime back: only the ctime tells.
fn sneaky_edit(path: &Path, bytes: &[u8]) {
    let mtime = fs::metadata(path).expect("meta").modified().expect("mtime");
    let mut f = OpenOptions::new().write(true).open(path).expect("open");
    assert_eq!(fs::metadata(path).expect("meta").len(), bytes.len() as u64);
    f.write_all(bytes).expect("write");
    f.set_times(FileTimes::new().set_modified(mtime))
        .expect("times");
}

/// A change made behind svkit's back.
type Change<'a> = Box<dyn Fn() + 'a>;

fn setup(run: &str) -> (tempfile::TempDir, PathBuf, Vec<DesiredSlot>) {
    let t = tempfile::tempdir().expect("tempdir");
    let scandir = t.path().join("service");
    fs::create_dir(&scandir).expect("mkdir");
    let desired = vec![slot("a", run), slot("b", run)];
    apply_ok(&scandir, &desired);
    (t, scandir, desired)
}

#[test]
fn warm_noop_is_confirmed_by_the_record_and_writes_nothing() {
    let (_t, scandir, desired) = setup("#!/bin/sh\nexec app\n");
    let s = look(&scandir, &desired);
    for name in ["a", "b"] {
        assert_eq!(action(&s, name), Action::Unchanged);
        assert!(confirmed(&s, name), "{name} needed a full compare");
    }
    let record = scandir.join(".svkit").join(RECORD);
    let before = fs::metadata(&record).expect("record");
    apply_ok(&scandir, &desired);
    let after = fs::metadata(&record).expect("record");
    assert_eq!(
        (
            before.modified().ok(),
            std::os::unix::fs::MetadataExt::ino(&before)
        ),
        (
            after.modified().ok(),
            std::os::unix::fs::MetadataExt::ino(&after)
        )
    );
    let names: Vec<_> = fs::read_dir(scandir.join(".svkit"))
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}"); // lock, record
}

#[test]
fn same_size_edit_with_mtime_put_back_is_caught_even_right_after_a_write() {
    let (_t, scandir, desired) = setup("#!/bin/sh\nexec app\n");
    // Right after the create, within the same clock tick if it can be.
    sneaky_edit(&scandir.join("a/run"), b"#!/bin/sh\nexec bad\n");
    let s = look(&scandir, &desired);
    assert!(!confirmed(&s, "a"));
    assert_eq!(
        action(&s, "a"),
        Action::Update {
            changed: vec!["run".into()],
            removed: vec![],
            restart: true
        }
    );
    assert!(confirmed(&s, "b"));
    // Put right by an in-place update, re-recorded by a scan: then edited
    // again right after that apply.
    apply_ok(&scandir, &desired);
    assert!(confirmed(&look(&scandir, &desired), "a"));
    sneaky_edit(&scandir.join("a/log/run"), b"#!/bin/sh\nexec LOGGER\n");
    let s = look(&scandir, &desired);
    assert!(!confirmed(&s, "a"));
    assert!(matches!(
        action(&s, "a"),
        Action::Update { restart: false, .. }
    ));
}

#[test]
fn every_kind_of_change_falls_back_to_a_full_compare() {
    let (_t, scandir, desired) = setup("#!/bin/sh\nexec app\n");
    let a = scandir.join("a");
    let changed = |rel: &str| Action::Update {
        changed: vec![rel.into()],
        removed: vec![],
        restart: rel == "run",
    };
    let cases: Vec<(&str, Change, Action)> = vec![
        (
            "mode",
            Box::new(|| {
                fs::set_permissions(a.join("type"), fs::Permissions::from_mode(0o600))
                    .expect("chmod")
            }),
            changed("type"),
        ),
        (
            "missing file",
            Box::new(|| fs::remove_file(a.join("type")).expect("rm")),
            changed("type"),
        ),
        (
            "planted symlink",
            Box::new(|| {
                fs::remove_file(a.join("run")).expect("rm");
                std::os::unix::fs::symlink("/bin/true", a.join("run")).expect("ln");
            }),
            changed("run"),
        ),
        (
            "stale extra file",
            Box::new(|| fs::write(a.join("log/down"), "").expect("write")),
            Action::Update {
                changed: vec![],
                removed: vec!["log/down".into()],
                restart: false,
            },
        ),
        (
            "same bytes, new inode",
            Box::new(|| {
                fs::copy(a.join("type"), a.join("type.new")).expect("cp");
                fs::rename(a.join("type.new"), a.join("type")).expect("mv");
            }),
            // Different owner only when the copy is not root's; as root the
            // copy is identical and merely not confirmed.
            Action::Unchanged,
        ),
        (
            "ctime only (chmod to the same mode)",
            Box::new(|| {
                fs::set_permissions(a.join("run"), fs::Permissions::from_mode(0o755))
                    .expect("chmod")
            }),
            Action::Unchanged,
        ),
    ];
    for (what, change, want) in cases {
        assert!(confirmed(&look(&scandir, &desired), "a"), "{what}: before");
        change();
        let s = look(&scandir, &desired);
        assert!(!confirmed(&s, "a"), "{what}: confirmed anyway");
        if nix::unistd::geteuid().is_root() || want != Action::Unchanged {
            assert_eq!(action(&s, "a"), want, "{what}");
        }
        assert!(confirmed(&s, "b"), "{what}: b");
        apply_ok(&scandir, &desired);
    }
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::lchown(a.join("run"), Some(1000), None).expect("chown");
        let s = look(&scandir, &desired);
        assert!(!confirmed(&s, "a"));
        assert_eq!(action(&s, "a"), changed("run"));
    }
}

#[test]
fn a_different_render_is_never_confirmed() {
    let (_t, scandir, desired) = setup("#!/bin/sh\nexec app\n");
    // Same size, different bytes.
    let other = vec![slot("a", "#!/bin/sh\nexec APP\n"), desired[1].clone()];
    let s = look(&scandir, &other);
    assert!(!confirmed(&s, "a"));
    assert!(matches!(
        action(&s, "a"),
        Action::Update { restart: true, .. }
    ));
    let mut moded = desired.clone();
    moded[0].files[3].mode = 0o600;
    assert!(!confirmed(&look(&scandir, &moded), "a"));
    assert!(matches!(
        action(&look(&scandir, &moded), "a"),
        Action::Update { .. }
    ));
    // Applied, then confirmed as the new render.
    apply_ok(&scandir, &other);
    assert!(confirmed(&look(&scandir, &other), "a"));
    assert!(!confirmed(&look(&scandir, &desired), "a"));
}

#[test]
fn a_corrupt_or_foreign_record_is_ignored() {
    let (_t, scandir, desired) = setup("#!/bin/sh\nexec app\n");
    let path = scandir.join(".svkit").join(RECORD);
    let good = fs::read(&path).expect("record");
    // The first `file` line with its LEN (the 11th field) replaced.
    let with_len = |len: &str| -> Vec<u8> {
        let start = find(&good, b"\nfile ").expect("a file line") + 1;
        let end = start + find(&good[start..], b"\n").expect("its end");
        let line = String::from_utf8_lossy(&good[start..end]).into_owned();
        let mut fields: Vec<&str> = line.split(' ').collect();
        fields[10] = len;
        [&good[..start], fields.join(" ").as_bytes(), &good[end..]].concat()
    };
    let old_format = [b"svkit-record 1".as_slice(), &good[14..]].concat();
    assert!(good.starts_with(b"svkit-record 2\n"));
    for bad in [
        &good[..good.len() / 2],
        b"svkit-record 1\nslot a\nfile 1 2\n",
        b"",
        &old_format,
        &with_len("999999999999999999999"),
        &with_len("18446744073709551615"),
        &with_len("-1"),
        &with_len("x"),
        &with_len("0"),
    ] {
        fs::write(&path, bad).expect("write");
        let s = look(&scandir, &desired);
        assert!(s.confirmed.is_empty());
        assert!(s.plans.iter().all(|p| p.action == Action::Unchanged));
    }
    fs::write(&path, &good).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).expect("chmod");
    assert!(look(&scandir, &desired).confirmed.is_empty());
    // A full compare that finds everything as rendered records it again.
    apply_ok(&scandir, &desired);
    assert_eq!(look(&scandir, &desired).confirmed.len(), 2);
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn record_sections_survive_file_bytes_that_look_like_record_lines() {
    let stamp = super::record::Stamp {
        dev: 1,
        ino: 2,
        size: 16,
        mode: 0o100644,
        uid: 0,
        mtime: (3, 4),
        ctime: (5, 6),
    };
    let dir = super::record::Stamp {
        mode: 0o40755,
        ..stamp
    };
    let tricky = b"\nslot b\nend\nx y\n";
    assert_eq!(tricky.len(), 16);
    let rec = SlotRecord {
        dirs: vec![("", dir)],
        files: vec![("run", stamp, &tricky[..])],
    };
    let mut sections = std::collections::BTreeMap::new();
    sections.insert("a", rec.encode("a"));
    let bytes = Record::encode(&sections);
    let record = Record::index(bytes).expect("well formed");
    assert_eq!(record.names().collect::<Vec<_>>(), ["a"]);
    let back = SlotRecord::decode(record.section("a").expect("a")).expect("decode");
    assert_eq!(back.dirs, rec.dirs);
    assert_eq!(back.files, rec.files);
}

/// `down` means only that it exists (so s6-supervise reads it): what is in
/// it, its mode and owner are no difference, to a full compare or to the
/// record; its absence, or a symlink in its place, is.
#[test]
fn a_down_file_counts_by_its_presence_alone() {
    let t = tempfile::tempdir().expect("tempdir");
    let scandir = t.path().join("service");
    fs::create_dir(&scandir).expect("mkdir");
    let mut a = slot("a", "#!/bin/sh\nexec app\n");
    a.files.insert(
        1,
        DesiredFile {
            rel: "down".into(),
            bytes: Vec::new(),
            mode: 0o644,
        },
    );
    a.want_up = false;
    let desired = vec![a];
    apply_ok(&scandir, &desired);
    let down = scandir.join("a/down");

    fs::write(&down, "anything\n").expect("write");
    fs::set_permissions(&down, fs::Permissions::from_mode(0o600)).expect("chmod");
    let s = look(&scandir, &desired);
    assert_eq!(action(&s, "a"), Action::Unchanged);
    assert!(!confirmed(&s, "a"), "its stamp changed: a full compare");
    apply_ok(&scandir, &desired);
    assert_eq!(fs::read(&down).expect("read"), b"anything\n", "left alone");
    assert!(confirmed(&look(&scandir, &desired), "a"), "recorded again");

    let update = Action::Update {
        changed: vec!["down".into()],
        removed: vec![],
        restart: false,
    };
    fs::remove_file(&down).expect("rm");
    assert_eq!(action(&look(&scandir, &desired), "a"), update);
    std::os::unix::fs::symlink("run", &down).expect("symlink");
    assert_eq!(action(&look(&scandir, &desired), "a"), update);
    apply_ok(&scandir, &desired);
    assert!(fs::symlink_metadata(&down).expect("down").is_file());
    assert_eq!(action(&look(&scandir, &desired), "a"), Action::Unchanged);
}
