//! The plan on made-up and on-disk slots: what differs, what is the
//! same, what a missing log dir makes of an unchanged slot.

use super::*;
use crate::render::RenderedFile;

fn slot(files: &[(&str, &str, u32)]) -> RenderedSlot {
    RenderedSlot {
        name: "a".into(),
        up: true,
        files: files
            .iter()
            .map(|(p, b, m)| RenderedFile {
                path: p.to_string(),
                contents: b.as_bytes().to_vec(),
                mode: *m,
            })
            .collect(),
        user: None,
        log_dir: None,
    }
}

fn live(files: &[(&str, &str, u32)]) -> BTreeMap<PathBuf, LiveFile> {
    files
        .iter()
        .map(|(p, b, m)| {
            (
                PathBuf::from(p),
                LiveFile {
                    bytes: b.as_bytes().to_vec(),
                    mode: *m,
                    uid: 0,
                },
            )
        })
        .collect()
}

#[test]
fn identical_is_unchanged() {
    let f = [("run", "x", 0o755), (".svkit", "", 0o644)];
    assert_eq!(compare(&slot(&f), &live(&f), true), Action::Unchanged);
}

#[test]
fn run_change_restarts_finish_change_does_not() {
    let want = slot(&[("run", "new", 0o755), ("finish", "f", 0o755)]);
    let a = compare(
        &want,
        &live(&[("run", "old", 0o755), ("finish", "f", 0o755)]),
        true,
    );
    assert_eq!(
        a,
        Action::Update {
            changed: vec!["run".into()],
            removed: vec![],
            restart: true,
            log_dir_missing: false,
        }
    );
    let a = compare(
        &want,
        &live(&[("run", "new", 0o755), ("finish", "g", 0o755)]),
        true,
    );
    assert_eq!(
        a,
        Action::Update {
            changed: vec!["finish".into()],
            removed: vec![],
            restart: false,
            log_dir_missing: false,
        }
    );
}

#[test]
fn a_down_file_counts_by_its_presence_alone() {
    let want = slot(&[("down", "", 0o644), ("run", "x", 0o755)]);
    let odd = live(&[("down", "whatever", 0o600), ("run", "x", 0o755)]);
    assert_eq!(compare(&want, &odd, true), Action::Unchanged);
    let gone = live(&[("run", "x", 0o755)]);
    let mut link = live(&[("down", "run", 0o644), ("run", "x", 0o755)]);
    if let Some(f) = link.get_mut(Path::new("down")) {
        f.mode = SYMLINK_MODE;
    }
    for l in [gone, link] {
        assert_eq!(
            compare(&want, &l, true),
            Action::Update {
                changed: vec!["down".into()],
                removed: vec![],
                restart: false,
                log_dir_missing: false,
            }
        );
    }
    // Any other file's bytes count, even an empty one's.
    let want = slot(&[("run", "x", 0o755), ("timeout-kill", "", 0o644)]);
    let l = live(&[("run", "x", 0o755), ("timeout-kill", "1", 0o644)]);
    assert!(matches!(compare(&want, &l, true), Action::Update { .. }));
}

#[test]
fn mode_owner_and_stale_files_count() {
    let want = slot(&[("run", "x", 0o755)]);
    let a = compare(&want, &live(&[("run", "x", 0o644)]), true);
    assert!(matches!(a, Action::Update { restart: true, .. }));
    let mut l = live(&[("run", "x", 0o755)]);
    if let Some(f) = l.get_mut(Path::new("run")) {
        f.uid = 1000;
    }
    assert!(matches!(compare(&want, &l, true), Action::Update { .. }));
    assert_eq!(compare(&want, &l, false), Action::Unchanged);
    let a = compare(
        &want,
        &live(&[("run", "x", 0o755), ("down", "", 0o644)]),
        true,
    );
    assert_eq!(
        a,
        Action::Update {
            changed: vec![],
            removed: vec!["down".into()],
            restart: false,
            log_dir_missing: false,
        }
    );
}

/// On a real scandir: what s6 owns is not looked at, a FIFO is never
/// opened (not even one where a rendered file belongs), a planted
/// symlink differs, a stale file goes, foreign slots are refused or
/// left alone.
#[test]
fn plan_reads_the_disk() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().expect("tempdir");
    let scan = t.path();
    let want = slot(&[
        (".svkit", "{}", 0o644),
        ("run", "x", 0o755),
        ("log/run", "y", 0o755),
    ]);
    let put = |rel: &str, bytes: &str, mode: u32| {
        let p = scan.join("a").join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, bytes).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    for f in &want.files {
        put(
            &f.path,
            std::str::from_utf8(&f.contents).expect("utf-8"),
            f.mode,
        );
    }
    let fifo = |rel: &str| {
        let p = scan.join("a").join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo")
    };
    fifo("supervise/control");
    fifo("log/event/x");
    put("supervise/status", "whatever", 0o644);
    let action = || {
        plan(scan, std::slice::from_ref(&want)).expect("plan")[0]
            .action
            .clone()
    };
    assert_eq!(action(), Action::Unchanged);

    std::fs::remove_file(scan.join("a/run")).expect("rm");
    fifo("run");
    let run_changed = Action::Update {
        changed: vec!["run".into()],
        removed: vec![],
        restart: true,
        log_dir_missing: false,
    };
    assert_eq!(action(), run_changed, "a FIFO is not the file");
    std::fs::remove_file(scan.join("a/run")).expect("rm");
    put("x", "x", 0o755);
    std::os::unix::fs::symlink("x", scan.join("a/run")).expect("symlink");
    // Even to a file with the rendered bytes; the stray file goes.
    let planted = Action::Update {
        changed: vec!["run".into()],
        removed: vec!["x".into()],
        restart: true,
        log_dir_missing: false,
    };
    assert_eq!(action(), planted);

    // Not ours: refused when declared, left alone when not.
    std::fs::create_dir(scan.join("b")).expect("mkdir");
    let mut b = want.clone();
    b.name = "b".into();
    assert!(matches!(
        plan(scan, &[b]),
        Err(ReconcileError::Foreign { .. })
    ));
    let plans = plan(scan, &[]).expect("plan");
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(
        (plans[0].name.as_str(), &plans[0].action),
        ("a", &Action::Delete)
    );
}

/// A log dir deleted under a live slot: the plan is an update that says
/// why, with no file to write, and back to unchanged once it is there.
#[test]
fn a_missing_log_dir_is_an_update() {
    let t = tempfile::tempdir().expect("tempdir");
    let scan = t.path().join("scan");
    let mut want = slot(&[(".svkit", "{}", 0o644), ("run", "x", 0o755)]);
    let logs = t.path().join("logs/a");
    want.log_dir = Some(logs.clone());
    for f in &want.files {
        let p = scan.join("a").join(&f.path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, &f.contents).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(f.mode)).expect("chmod");
    }
    let plans = |want: &RenderedSlot| plan(&scan, std::slice::from_ref(want)).expect("plan");
    let missing = Action::Update {
        changed: vec![],
        removed: vec![],
        restart: false,
        log_dir_missing: true,
    };
    assert_eq!(plans(&want)[0].action, missing);
    assert_eq!(
        plans(&want)[0].audit_line(),
        "reconcile: slot=a action=update state=up log_dir=missing"
    );
    std::fs::create_dir_all(&logs).expect("mkdir");
    assert_eq!(plans(&want)[0].action, Action::Unchanged);
    // With a file to write too, both are said.
    std::fs::remove_dir(&logs).expect("rmdir");
    want.files[1].contents = b"y".to_vec();
    assert_eq!(
        plans(&want)[0].audit_line(),
        "reconcile: slot=a action=update state=up files=run log_dir=missing restart=yes"
    );
}
