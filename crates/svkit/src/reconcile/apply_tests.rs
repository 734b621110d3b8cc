//! All or nothing, on the disk: every step of an apply that writes is made
//! to fail in turn (failure injection, `journal::fault`), and the scandir
//! and log dirs must be exactly as they were. Host-side: until every write
//! has succeeded an apply tells s6 nothing, so a supervisor adds nothing
//! here; the sandbox tests show the same on the real /init.

use super::{ApplyOptions, ApplyReport, ReconcileError, ScandirLock, Scope};
use crate::reconcile::journal::fault;
use crate::render::{RenderedFile, RenderedSlot};
use crate::slot::owner::MARKER;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// As every caller applies: the lock first.
fn apply(
    scandir: &Path,
    desired: &[RenderedSlot],
    opts: &ApplyOptions,
) -> Result<ApplyReport, ReconcileError> {
    let lock = ScandirLock::acquire(scandir, opts.lock_timeout)?;
    super::apply(&lock, desired, opts)
}

fn file(path: &str, contents: &str, mode: u32) -> RenderedFile {
    RenderedFile {
        path: path.into(),
        contents: contents.as_bytes().to_vec(),
        mode,
    }
}

fn slot(name: &str, run: &str, extra: &[RenderedFile], log: Option<PathBuf>) -> RenderedSlot {
    let mut files = vec![
        file(MARKER, "{}\n", 0o644),
        file("finish", "#!/bin/sh\n", 0o755),
        file("run", run, 0o755),
    ];
    files.extend_from_slice(extra);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let root = nix::unistd::geteuid().is_root();
    RenderedSlot {
        name: name.into(),
        up: true,
        files,
        user: root.then(|| "nobody".to_string()),
        log_dir: log,
    }
}

/// Writes `s` as an earlier apply left it (no supervisor: this is the host).
fn put(scandir: &Path, s: &RenderedSlot) {
    for f in &s.files {
        let p = scandir.join(&s.name).join(&f.path);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(&p, &f.contents).expect("write");
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(f.mode)).expect("chmod");
    }
}

/// Every entry under `root`: type, mode, owner, and bytes or link target.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u32, u32, u32, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, (u32, u32, u32, Vec<u8>)>) {
        for e in fs::read_dir(dir).expect("read_dir").flatten() {
            let p = e.path();
            let m = fs::symlink_metadata(&p).expect("lstat");
            let bytes = if m.file_type().is_symlink() {
                fs::read_link(&p)
                    .expect("readlink")
                    .into_os_string()
                    .into_encoded_bytes()
            } else if m.is_file() {
                fs::read(&p).expect("read")
            } else {
                Vec::new()
            };
            let rel = p.strip_prefix(root).expect("prefix").to_path_buf();
            out.insert(rel, (m.mode(), m.uid(), m.gid(), bytes));
            if m.is_dir() {
                walk(&p, root, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

struct Fixture {
    t: tempfile::TempDir,
    desired: Vec<RenderedSlot>,
}

impl Fixture {
    /// `a` is live and changes (its `run`, a new `data/check` in a new
    /// dir, a `down` file that goes, a new log dir); `b` and `c` are new,
    /// with log dirs under a parent that does not exist yet. The lock dir
    /// is made up front: it is not the apply's to undo.
    fn new() -> Fixture {
        let t = tempfile::tempdir().expect("tempdir");
        let scandir = t.path().join("scandir");
        fs::create_dir_all(scandir.join(".svkit")).expect("mkdir");
        fs::write(scandir.join(".svkit/lock"), "").expect("lock");
        let logs = t.path().join("logs");
        let old = slot(
            "a",
            "#!/bin/sh\nexec old\n",
            &[
                file("down", "", 0o644),
                file("log/run", "#!/bin/sh\nexec old-log\n", 0o755),
            ],
            None,
        );
        put(&scandir, &old);
        let a = slot(
            "a",
            "#!/bin/sh\nexec new\n",
            &[
                file("data/check", "#!/bin/sh\n", 0o755),
                file("log/run", "#!/bin/sh\nexec new-log\n", 0o755),
            ],
            Some(logs.join("a")),
        );
        let b = slot("b", "#!/bin/sh\nexec b\n", &[], Some(logs.join("b")));
        let c = slot(
            "c",
            "#!/bin/sh\nexec c\n",
            &[file("log/run", "#!/bin/sh\n", 0o755)],
            Some(logs.join("deeper/c")),
        );
        Fixture {
            t,
            desired: vec![a, b, c],
        }
    }

    fn scandir(&self) -> PathBuf {
        self.t.path().join("scandir")
    }

    fn apply(&self, scope: Scope) -> Result<ApplyReport, ReconcileError> {
        let opts = ApplyOptions {
            scope,
            ..Default::default()
        };
        apply(&self.scandir(), &self.desired, &opts)
    }
}

/// Every point where an apply writes (see `fault::check` callers).
const POINTS: &[&str] = &[
    "log-mkdir",
    "write-file",
    "remove-file",
    "temp-dir",
    "write-new",
    "rename",
];

/// Root also hands log dirs and `supervise/` to the slot's user.
const ROOT_POINTS: &[&str] = &["log-chown", "supervise", "chown"];

#[test]
fn every_failure_point_undoes_every_write() {
    // A run where nothing fails counts each point's calls; then each call
    // of each point fails in turn.
    let fx = Fixture::new();
    fault::arm("none", 1);
    let r = fx.apply(Scope::All);
    assert!(
        matches!(&r, Err(ReconcileError::Control(_))),
        "only the rescan may fail on the host (no s6-svscan): {r:?}"
    );
    let calls = fault::calls();
    let root = nix::unistd::geteuid().is_root();
    let want = POINTS.iter().chain(if root { ROOT_POINTS } else { &[] });
    for p in want {
        assert!(
            calls.contains_key(p),
            "the fixture never reaches {p}: {calls:?}"
        );
    }
    // What the failures interrupt: all of it, written.
    let scandir = fx.scandir();
    assert!(scandir.join("b/run").is_file() && scandir.join("c/log/run").is_file());
    assert_eq!(
        fs::read(scandir.join("a/run")).expect("run"),
        b"#!/bin/sh\nexec new\n"
    );
    assert!(!scandir.join("a/down").exists());
    assert!(fx.t.path().join("logs/deeper/c").is_dir());

    for (point, n) in calls {
        for nth in 1..=n {
            let fx = Fixture::new();
            let before = snapshot(fx.t.path());
            fault::arm(point, nth);
            let r = fx.apply(Scope::All);
            assert!(!fault::armed(), "{point} #{nth} never reached");
            match r {
                Err(ReconcileError::Slots {
                    failed,
                    undo_failed,
                }) => {
                    assert_eq!(failed.len(), 1, "{point} #{nth}: {failed:?}");
                    assert!(undo_failed.is_empty(), "{point} #{nth}: {undo_failed:?}");
                    assert!(
                        failed[0].to_string().contains("I/O error"),
                        "{point} #{nth}: {}",
                        failed[0]
                    );
                }
                other => panic!("{point} #{nth}: {other:?}"),
            }
            assert_eq!(
                snapshot(fx.t.path()),
                before,
                "{point} #{nth}: disk changed"
            );
        }
    }
}

/// Found before the first write: nothing is written, every slot is named.
#[test]
fn refused_before_any_write() {
    let fx = Fixture::new();
    let mut desired = fx.desired.clone();
    fs::write(fx.t.path().join("logs"), "a file where a dir goes").expect("write");
    if nix::unistd::geteuid().is_root() {
        desired[1].user = Some("no-such-user-svkit".into());
    }
    let before = snapshot(fx.t.path());
    let r = apply(&fx.scandir(), &desired, &ApplyOptions::default());
    let Err(e @ ReconcileError::Slots { .. }) = r else {
        panic!("{r:?}");
    };
    let text = e.to_string();
    assert!(text.contains("slot a: log dir "), "{text}");
    assert!(text.contains("logs: Not a directory"), "{text}");
    assert!(text.ends_with("; nothing changed"), "{text}");
    if nix::unistd::geteuid().is_root() {
        assert!(
            text.contains("slot b: unknown user no-such-user-svkit"),
            "{text}"
        );
    }
    assert_eq!(snapshot(fx.t.path()), before);
}

/// Slot by slot (the boot hook): the failing slot is left as it was, the
/// others are written. Updates only: creates end in a rescan, which needs
/// s6-svscan.
#[test]
fn each_slot_leaves_only_the_failing_one_as_it_was() {
    let fx = Fixture::new();
    let a = fx.desired[0].clone();
    let mut d_old = fx.desired[1].clone();
    d_old.name = "d".into();
    d_old.log_dir = None;
    put(&fx.scandir(), &d_old);
    let mut d = d_old.clone();
    d.files.iter_mut().for_each(|f| {
        if f.path == "run" {
            f.contents = b"#!/bin/sh\nexec d2\n".to_vec();
        }
    });
    let d_before = snapshot(&fx.scandir().join("d"));
    fault::arm("write-file", 4); // a writes 3, then d's run
    let opts = ApplyOptions {
        scope: Scope::EachSlot,
        ..Default::default()
    };
    let out = apply(&fx.scandir(), &[a, d], &opts).expect("apply");
    assert!(!fault::armed());
    let failed: Vec<&str> = out.failed.iter().map(|f| f.slot.as_str()).collect();
    assert_eq!(failed, ["d"]);
    assert!(out.undo_failed.is_empty(), "{:?}", out.undo_failed);
    assert_eq!(out.plans.len(), 1, "{:?}", out.plans);
    assert_eq!(out.plans[0].name, "a");
    assert_eq!(snapshot(&fx.scandir().join("d")), d_before);
    assert_eq!(
        fs::read(fx.scandir().join("a/run")).expect("run"),
        b"#!/bin/sh\nexec new\n"
    );
    let fatal = out.report(&fx.scandir()).expect("a failure to report");
    assert!(fatal.to_string().contains("not applied: d"), "{fatal}");
}

/// Past s6-svscan's limit (the default 1,000 here, no s6-overlay running)
/// nothing is written, whatever the scope (the lock is there from an
/// earlier apply: a caller takes it before reading what it applies).
#[test]
fn past_the_service_limit_nothing_is_written() {
    let t = tempfile::tempdir().expect("tempdir");
    let sd = t.path();
    // 997 foreign services, one with a logger: 998.
    for i in 0..997 {
        fs::create_dir(sd.join(format!("f{i}"))).expect("mkdir");
    }
    fs::create_dir(sd.join("f0/log")).expect("mkdir");
    let a = slot(
        "a",
        "#!/bin/sh\n",
        &[file("log/run", "#!/bin/sh\n", 0o755)],
        None,
    );
    let b = slot("b", "#!/bin/sh\n", &[], None);
    drop(ScandirLock::acquire(sd, std::time::Duration::from_secs(1)).expect("lock"));
    let before = snapshot(sd);
    for scope in [Scope::All, Scope::EachSlot] {
        let opts = ApplyOptions {
            scope,
            ..Default::default()
        };
        // 998 + a and its logger: 1,000 fits, as the plan says; b is one
        // too many.
        assert!(crate::reconcile::plan(sd, std::slice::from_ref(&a)).is_ok());
        let err = apply(sd, &[a.clone(), b.clone()], &opts).expect_err("over the limit");
        assert!(
            matches!(&err, ReconcileError::TooManyServices(e) if e.need.total() == 1001),
            "{err}"
        );
        assert_eq!(err.exit_code(), crate::msg::exit::NOT_OK);
        assert!(err.to_string().ends_with("; nothing changed"), "{err}");
        assert!(matches!(
            crate::reconcile::plan(sd, &[a.clone(), b.clone()]),
            Err(ReconcileError::TooManyServices(_))
        ));
        assert_eq!(snapshot(sd), before, "{scope:?}");
    }
}
