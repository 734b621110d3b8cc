//! A slot that cannot be applied, on the real /init: `svctl apply` is all
//! or nothing (refused before the first write when that can be known,
//! undone when found mid-way, no restart either way); the boot hook makes
//! every other slot, names the one it could not make (its log dir, its
//! user), leaves no temp dir, and `svctl status` counts it as not healthy,
//! while the container runs on, even with `S6_BEHAVIOUR_IF_STAGE2_FAILS=2`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, stdout, svstat, Rootfs, Sandbox, TEST_CONFIG};

fn wait_up(sbx: &Sandbox, slot: &str) {
    poll(&format!("{slot} up"), Duration::from_secs(10), || {
        (svstat(sbx, slot, "up") == "true").then_some(())
    });
}

/// One entry as a snapshot sees it: where it is on disk (inode, mtime),
/// and what it holds (mode, owner, bytes or nothing for a dir).
type Entry = ((u64, i64, i64), (u32, u32, Vec<u8>));

/// Every entry under `dir` but s6's own `supervise/` and `event/` (and
/// the lock, which every apply takes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            if name == "supervise" || name == "event" || name == "lock" {
                continue;
            }
            let p = e.path();
            let m = fs::symlink_metadata(&p).expect("lstat");
            let rel = p.strip_prefix(base).expect("prefix").to_path_buf();
            let bytes = if m.is_file() {
                fs::read(&p).unwrap_or_default()
            } else {
                Vec::new()
            };
            out.insert(
                rel,
                (
                    (m.ino(), m.mtime(), m.mtime_nsec()),
                    (m.mode(), m.uid(), bytes),
                ),
            );
            if m.is_dir() {
                walk(&p, base, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// What a snapshot's files hold, wherever they are on disk: what undoing
/// a write restores (a restored file is a new inode).
fn contents(s: &BTreeMap<PathBuf, Entry>) -> BTreeMap<PathBuf, (u32, u32, Vec<u8>)> {
    s.iter().map(|(p, (_, c))| (p.clone(), c.clone())).collect()
}

fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr))
}

const BEFORE: &str = r#"{ "user": "nobody", "slots": [
  { "name": "a", "command": ["sleep", "1001"], "log": { "dir": "/data/logs/a" } },
  { "name": "b", "command": ["sleep", "1002"] }
] }"#;

/// `a` changes its command (a restart, were it applied), `b` gains a log
/// (a new `log/run` and log dir), `c` is new; `BAD` is a last slot that
/// fails, found before or after those writes.
fn after(bad: &str) -> String {
    format!(
        r#"{{ "user": "nobody", "slots": [
  {{ "name": "a", "command": ["sleep", "2001"], "log": {{ "dir": "/data/logs/a" }} }},
  {{ "name": "b", "command": ["sleep", "1002"], "log": {{ "dir": "/data/logs/b" }} }},
  {{ "name": "c", "command": ["sleep", "1003"], "log": {{ "dir": "/data/logs/c" }} }},
  {bad}
] }}"#
    )
}

#[test]
fn apply_is_all_or_nothing() {
    if !sandbox_or_skip("apply_is_all_or_nothing") {
        return;
    }
    let rootfs = Rootfs::with_svkit(BEFORE);
    let data = tempfile::tempdir().expect("tempdir");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());
    wait_up(&sbx, "a");
    wait_up(&sbx, "b");
    let scandir = sbx.root().join("run/service");
    let disk = || (snapshot(&scandir), snapshot(data.path()));
    let pids = || (svstat(&sbx, "a", "pid"), svstat(&sbx, "b", "pid"));
    let (before, pids_before) = (disk(), pids());

    // (the last slot, the exit code, the error, whether it is known before
    // any write)
    let cases = [
        // A read-only mount (sysfs, as in Docker): known before any write.
        (
            r#"{ "name": "d", "command": ["sleep", "1004"], "log": { "dir": "/sys/svkit/d" } }"#,
            111,
            "svctl: fatal: unable to reconcile /run/service: slot d: log dir /sys/svkit/d: /sys/svkit: Read-only file system; nothing changed",
            true,
        ),
        // An unknown user: a config error at its key, before any write.
        (
            r#"{ "name": "d", "command": ["sleep", "1004"], "user": "no-such-user" }"#,
            1,
            "slots[3].user: unknown user `no-such-user` (slot d)",
            true,
        ),
        // procfs says its root is writable (to root) and makes no dir:
        // found only mid-way, after a, b and c were written; undone.
        (
            r#"{ "name": "d", "command": ["sleep", "1004"], "log": { "dir": "/proc/svkit/d" } }"#,
            111,
            "svctl: fatal: unable to reconcile /run/service: slot d: log dir /proc/svkit/d: /proc/svkit: No such file or directory; nothing changed",
            false,
        ),
    ];
    for (bad, code, why, before_any_write) in cases {
        fs::write(sbx.root().join(TEST_CONFIG), after(bad)).expect("config");
        let o = sbx.exec(&["svctl", "apply"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(code), "{t}");
        assert!(t.contains(why), "{t}");
        assert!(!t.contains("reconcile: slot="), "no audit line: {t}");
        let now = disk();
        if before_any_write {
            assert_eq!(now, before, "{bad}: the scandir or /data written");
        }
        assert_eq!(
            (contents(&now.0), contents(&now.1)),
            (contents(&before.0), contents(&before.1)),
            "{bad}: the scandir or /data changed"
        );
        assert_eq!(pids(), pids_before, "{bad}: a slot restarted");
    }

    // Without the bad slot the same change applies, and restarts a.
    fs::write(
        sbx.root().join(TEST_CONFIG),
        after(r#"{ "name": "d", "command": ["sleep", "1004"] }"#),
    )
    .expect("config");
    let o = sbx.exec(&["svctl", "apply"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    poll("a restarted", Duration::from_secs(10), || {
        let p = svstat(&sbx, "a", "pid");
        (p != pids_before.0 && p != "-1").then_some(())
    });
    assert!(data.path().join("logs/c").is_dir());
    sbx.stop();
}

#[test]
fn boot_makes_every_slot_it_can_and_status_counts_the_others() {
    if !sandbox_or_skip("boot_makes_every_slot_it_can_and_status_counts_the_others") {
        return;
    }
    let config = r#"{ "user": "nobody", "slots": [
      { "name": "a", "command": ["sleep", "1001"], "log": { "dir": "/data/logs/a" } },
      { "name": "ro", "command": ["sleep", "1002"], "log": { "dir": "/sys/svkit/ro" } },
      { "name": "proc", "command": ["sleep", "1003"], "log": { "dir": "/proc/svkit/proc" } },
      { "name": "z", "command": ["sleep", "1004"] },
      { "name": "ghost", "user": "no-such-user-svkit", "command": ["sleep", "1005"] }
    ] }"#;
    let rootfs = Rootfs::with_svkit(config);
    let data = tempfile::tempdir().expect("tempdir");
    // As docs/image.md recommends: a failing boot hook stops the container.
    let (r, v) = (rootfs.arg(), format!("{}:/data", data.path().display()));
    let sbx = Sandbox::start(
        &[
            "--rootfs",
            &r,
            "--volume",
            &v,
            "--env",
            "S6_BEHAVIOUR_IF_STAGE2_FAILS=2",
        ],
        &["sleep", "100000"],
    );
    let logs = sbx.wait_for_log("50-svkit exited", Duration::from_secs(10));
    wait_up(&sbx, "a");
    wait_up(&sbx, "z");
    for line in [
        "svkit-reconcile: warning: slot ro not applied: log dir /sys/svkit/ro: /sys/svkit: Read-only file system",
        "svkit-reconcile: warning: slot proc not applied: log dir /proc/svkit/proc: /proc/svkit: No such file or directory",
        "svkit-reconcile: warning: slot ghost not applied: unknown user no-such-user-svkit",
        "svkit-reconcile: warning: unable to reconcile /run/service: not applied: ro ghost proc (the other slots are); the boot goes on without them",
        "50-svkit exited 0",
        "reconcile: slot=a action=create state=up",
        "reconcile: slot=z action=create state=up",
    ] {
        assert!(logs.contains(line), "no {line:?} in:\n{logs}");
    }
    let o = sbx.sh("ls -A /run/service | grep '^\\.svkit-' || true");
    assert_eq!(stdout(&o), "", "temp dirs left in the scandir");
    assert!(!sbx.root().join("run/service/ro").exists());

    // The health check: not healthy, with a row for each missing slot.
    let o = sbx.exec(&["svctl", "status"]);
    let table = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    for slot in ["ro", "proc", "ghost"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("{slot} ")))
            .unwrap_or_else(|| panic!("no row for {slot}:\n{table}"));
        assert!(
            row.contains(" missing ") && row.contains("declared, not in the scandir"),
            "{row}"
        );
    }
    let o = sbx.exec(&["svctl", "status", "a", "z"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = sbx.exec(&["svctl", "status", "--json", "ro"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(doc["slots"][0]["state"], "missing");
    assert_eq!(doc["unknown"], serde_json::json!([]));
    // Still running, degraded: a clean stop, not the boot's failure.
    assert_eq!(sbx.stop(), 0);
}
