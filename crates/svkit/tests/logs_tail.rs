//! `svkit::logs`: tail across archives and `current`, and following across
//! a rotation done the way s6-log does it (rename `current` to an archive,
//! start a new `current`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use svkit::logs::{tail, Follower};

fn nums(from: usize, to: usize) -> String {
    (from..to).map(|i| format!("line {i}\n")).collect()
}

fn append(p: &Path, s: &str) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .expect("open");
    f.write_all(s.as_bytes()).expect("write");
}

/// Archives 0..10, 10..20, then `current` 20..25; plus files s6-log keeps
/// beside them that are not log content.
fn logdir() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    fs::write(d.join("@400000006b0d10531c38b356.s"), nums(0, 10)).expect("write");
    fs::write(d.join("@400000006b0d10541c38b356.u"), nums(10, 20)).expect("write");
    fs::write(d.join("current"), nums(20, 25)).expect("write");
    fs::write(d.join("lock"), "").expect("write");
    fs::write(d.join("state"), "").expect("write");
    fs::write(d.join("newstate"), "nope\n").expect("write");
    t
}

#[test]
fn tail_spans_files_in_order() {
    let t = logdir();
    for (n, from) in [
        (0, 25),
        (1, 24),
        (5, 20),
        (6, 19),
        (15, 10),
        (25, 0),
        (100, 0),
    ] {
        let (out, _) = tail(t.path(), n).expect("tail");
        assert_eq!(String::from_utf8_lossy(&out), nums(from, 25), "n={n}");
    }
    // No current yet (a fresh logger): the archives alone.
    fs::remove_file(t.path().join("current")).expect("rm");
    let (out, _) = tail(t.path(), 3).expect("tail");
    assert_eq!(String::from_utf8_lossy(&out), nums(17, 20));
    // A missing dir is an error the caller can tell apart.
    let e = tail(&t.path().join("nope"), 3).err().expect("error");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn follow_survives_rotation_without_loss_or_repeat() {
    let t = logdir();
    let d = t.path();
    let (out, cur) = tail(d, 2).expect("tail");
    assert_eq!(String::from_utf8_lossy(&out), nums(23, 25));
    let mut f = Follower::new(d, cur);
    let mut seen = Vec::new();
    assert_eq!(f.step(&mut seen).expect("step").bytes, 0);
    append(&d.join("current"), &nums(25, 30));
    f.step(&mut seen).expect("step");
    // s6-log: more lines, then current becomes an archive and a new one starts;
    // the follower only looks after all of it happened.
    append(&d.join("current"), &nums(30, 33));
    fs::rename(d.join("current"), d.join("@400000006b0d10551c38b356.s")).expect("rename");
    fs::write(d.join("current"), nums(33, 36)).expect("write");
    f.step(&mut seen).expect("step");
    append(&d.join("current"), &nums(36, 40));
    f.step(&mut seen).expect("step");
    // A rotation with the new current not created yet.
    fs::rename(d.join("current"), d.join("@400000006b0d10561c38b356.s")).expect("rename");
    f.step(&mut seen).expect("step");
    fs::write(d.join("current"), nums(40, 41)).expect("write");
    f.step(&mut seen).expect("step");
    assert_eq!(String::from_utf8_lossy(&seen), nums(25, 41));
    // A tail now sees every file, in order.
    let (out, _) = tail(d, 1000).expect("tail");
    assert_eq!(String::from_utf8_lossy(&out), nums(0, 41));
}

#[test]
fn follow_waits_for_a_log_that_does_not_exist_yet() {
    let t = tempfile::tempdir().expect("tempdir");
    let mut f = Follower::new(t.path(), Default::default());
    let mut seen = Vec::new();
    assert_eq!(f.step(&mut seen).expect("step").bytes, 0);
    fs::write(t.path().join("current"), "first\n").expect("write");
    f.step(&mut seen).expect("step");
    assert_eq!(seen, b"first\n");
}

#[test]
fn tail_reads_the_file_being_archived_between_archives_and_current() {
    // Mid-rotation: s6-log renamed `current` to `previous` and started a
    // new `current`, but has not archived `previous` yet.
    let t = logdir();
    let d = t.path();
    fs::rename(d.join("current"), d.join("previous")).expect("rename");
    fs::write(d.join("current"), nums(25, 27)).expect("write");
    let (out, pos) = tail(d, 10).expect("tail");
    assert_eq!(String::from_utf8_lossy(&out), nums(17, 27));
    // Archived afterwards, it is not shown again by the follower.
    fs::hard_link(d.join("previous"), d.join("@400000006b0d10551c38b356.s")).expect("link");
    fs::remove_file(d.join("previous")).expect("unlink");
    let mut f = Follower::new(d, pos);
    let mut seen = Vec::new();
    append(&d.join("current"), &nums(27, 28));
    f.step(&mut seen).expect("step");
    assert_eq!(String::from_utf8_lossy(&seen), nums(27, 28));
}
