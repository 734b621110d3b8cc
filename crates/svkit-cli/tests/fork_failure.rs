//! A crash loop where nothing can fork (`docker run --pids-limit`), on the
//! real /init: each slot's supervisor and program go into a pids cgroup
//! (v1 or v2, whichever the host mounts) whose limit is what they use, and
//! the programs are killed. Each death frees the one pid the supervisor
//! needs to spawn `finish` or `run`, and no more: `run` dies at its first
//! fork, and so would `finish` at any of its own. Each death still counts,
//! with its backoff, and the slots end `failed` as `max_deaths` says:
//!
//! - `forkless`: its `finish` needs no fork at all;
//! - `trapped`: a stray request file makes its `finish` fork (`rm`), and
//!   fail there: the death is counted all the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use svkit::s6::tai64::Tai64N;
use svkit_testkit::{poll, sandbox_or_skip, skip, svstat, Fixture, Sandbox};

const CONFIG: &str = r#"{
  "user": "nobody",
  "slots": [
    { "name": "forkless", "command": ["sleep", "100000"],
      "restart": { "max_deaths": 4, "within_s": 60, "backoff": { "max_s": 4 } } },
    { "name": "trapped", "command": ["sleep", "100000"],
      "restart": { "max_deaths": 4, "within_s": 60, "backoff": { "max_s": 4 } } }
  ]
}"#;

const SLOTS: [&str; 2] = ["forkless", "trapped"];

/// A pids cgroup per slot holding its supervisor and its program, its
/// limit what they use; on drop each limit is lifted, each process goes
/// back to where it was and the groups are removed: nothing is left behind.
struct PidsLimit {
    group: PathBuf,
    slots: Vec<PathBuf>,
    home: PathBuf,
}

/// The pids controller's mount and whether it is cgroup v1's.
fn pids_mount() -> Option<(PathBuf, bool)> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut v2 = None;
    for line in info.lines() {
        let (pre, post) = line.split_once(" - ")?;
        let mount = PathBuf::from(pre.split(' ').nth(4)?);
        let mut post = post.split(' ');
        match (post.next(), post.nth(1)) {
            (Some("cgroup"), Some(opts)) if opts.split(',').any(|o| o == "pids") => {
                return Some((mount, true))
            }
            (Some("cgroup2"), _) => v2 = Some((mount, false)),
            _ => {}
        }
    }
    v2.filter(|(m, _)| {
        fs::read_to_string(m.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"))
    })
}

/// The processes in the pid namespace of host pid `init`: (pid, parent,
/// command line).
fn ns_procs(init: &str) -> Vec<(String, String, String)> {
    let ns = fs::read_link(format!("/proc/{init}/ns/pid")).expect("the sandbox's pid namespace");
    let procs = fs::read_dir("/proc").expect("/proc").flatten();
    (procs.map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .filter(|p| fs::read_link(format!("/proc/{p}/ns/pid")).is_ok_and(|l| l == ns))
        .filter_map(|p| {
            let stat = fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let ppid = stat.rsplit_once(") ")?.1.split(' ').nth(1)?.to_string();
            let cmd = fs::read(format!("/proc/{p}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd)
                .trim_end_matches('\0')
                .replace('\0', " ");
            Some((p, ppid, cmd))
        })
        .collect()
}

fn procs(group: &Path) -> Vec<String> {
    let text = fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
    text.lines().map(str::to_owned).collect()
}

impl PidsLimit {
    /// Limits the supervisor of each of `slots` and its program (a group
    /// each: one slot's start cannot take another's pid); the reason when
    /// this host cannot.
    fn new(sbx: &Sandbox, slots: &[&str]) -> Result<PidsLimit, String> {
        let init = sbx.init_pid();
        let (mount, v1) = pids_mount().ok_or("no cgroup pids controller is mounted")?;
        // Where the sandbox runs now, relative to the mount.
        let cg = fs::read_to_string(format!("/proc/{init}/cgroup")).map_err(|e| e.to_string())?;
        let rel = (cg.lines())
            .filter_map(|l| {
                let mut f = l.splitn(3, ':').skip(1);
                f.next().zip(f.next())
            })
            .find(|(ctl, _)| {
                if v1 {
                    ctl.split(',').any(|c| c == "pids")
                } else {
                    ctl.is_empty()
                }
            })
            .map(|(_, p)| p.trim_start_matches('/').to_string())
            .ok_or("the sandbox's cgroup is not listed")?;
        let group = mount.join(format!("svkit-test-{}", std::process::id()));
        let mut limit = PidsLimit {
            group: group.clone(),
            slots: Vec::new(),
            home: mount.join(rel),
        };
        for dir in [&mount, &group] {
            if dir == &group {
                fs::create_dir(dir).map_err(|e| format!("mkdir {dir:?}: {e}"))?;
            }
            let ctl = dir.join("cgroup.subtree_control");
            if !v1 && !fs::read_to_string(&ctl).is_ok_and(|c| c.contains("pids")) {
                fs::write(&ctl, "+pids").map_err(|e| format!("enable pids in {ctl:?}: {e}"))?;
            }
        }
        let all = ns_procs(&init);
        for slot in slots {
            let dir = group.join(slot);
            fs::create_dir(&dir).map_err(|e| format!("mkdir {dir:?}: {e}"))?;
            limit.slots.push(dir.clone());
            let sup = (all.iter())
                .find(|(_, _, cmd)| *cmd == format!("s6-supervise {slot}"))
                .ok_or(format!("no supervisor of {slot}"))?;
            let kids = all.iter().filter(|(_, ppid, _)| *ppid == sup.0);
            for (p, _, _) in std::iter::once(sup).chain(kids) {
                fs::write(dir.join("cgroup.procs"), p).map_err(|e| format!("move {p}: {e}"))?;
            }
            let used = fs::read_to_string(dir.join("pids.current")).map_err(|e| e.to_string())?;
            fs::write(dir.join("pids.max"), used.trim()).map_err(|e| e.to_string())?;
        }
        Ok(limit)
    }
}

impl Drop for PidsLimit {
    fn drop(&mut self) {
        let home = self.home.join("cgroup.procs");
        for dir in &self.slots {
            let _ = fs::write(dir.join("pids.max"), "max");
        }
        let _ = std::panic::catch_unwind(|| {
            poll(
                "the test's cgroups removed",
                Duration::from_secs(10),
                || {
                    for dir in &self.slots {
                        for p in procs(dir) {
                            let _ = fs::write(&home, p);
                        }
                        let _ = fs::remove_dir(dir);
                    }
                    fs::remove_dir(&self.group).ok()
                },
            )
        });
    }
}

fn slot_file(sbx: &Sandbox, slot: &str, file: &str) -> PathBuf {
    sbx.root().join("run/service").join(slot).join(file)
}

/// The stamps of the slot's death tally, oldest first.
fn death_stamps(sbx: &Sandbox, slot: &str) -> Vec<Tai64N> {
    let bytes = fs::read(slot_file(sbx, slot, "supervise/death_tally")).unwrap_or_default();
    (bytes.chunks_exact(14))
        .map(|r| Tai64N::from_bytes(&r[..12]).expect("TAI64N stamp"))
        .collect()
}

#[test]
fn a_crash_loop_that_cannot_fork_backs_off_and_fails() {
    let test = "a_crash_loop_that_cannot_fork_backs_off_and_fails";
    if !sandbox_or_skip(test) {
        return;
    }
    let fx = Fixture::bare(CONFIG);
    let sbx = fx.boot();
    for slot in SLOTS {
        poll(&format!("{slot} up"), Duration::from_secs(10), || {
            (svstat(&sbx, slot, "up") == "true").then_some(())
        });
    }
    // Never the pid of a death: every `finish` of `trapped` sees it and
    // tries to remove it.
    fs::write(slot_file(&sbx, "trapped", "supervise/svkit-request.1"), "").expect("plant");
    let limit = match PidsLimit::new(&sbx, &SLOTS) {
        Ok(l) => l,
        Err(why) => return skip(test, format!("cannot limit the sandbox's pids: {why}")),
    };
    // From outside the group: s6-svc needs no fork.
    let o = sbx.exec(&[
        "s6-svc",
        "-k",
        "/run/service/forkless",
        "/run/service/trapped",
    ]);
    assert!(o.status.success(), "s6-svc -k: {o:?}");
    let failed = "failed: died 4 times within 60 s";
    for slot in SLOTS {
        // `finish` records the end before it exits 125, and may even run
        // to its end before s6-supervise says it is finishing (the status
        // still says up then): the end is s6's once the slot is down and
        // no longer finishing.
        let dir = sbx.root().join("run/service").join(slot);
        let ended = std::panic::catch_unwind(|| {
            poll(&format!("{slot} failed"), Duration::from_secs(40), || {
                let end = fs::read_to_string(dir.join(".svkit-end")).ok()?;
                let st = svkit::s6::status::read_slot(&dir).ok()?;
                (end.trim_end() == failed && !st.up && !st.finishing).then_some(st)
            })
        });
        let st = ended.unwrap_or_else(|e| {
            let n = death_stamps(&sbx, slot).len();
            eprintln!("{slot}: {n} deaths; the logs:\n{}", sbx.logs());
            std::panic::resume_unwind(e)
        });
        assert!(!st.want_up, "{slot}: {st:?}\nthe logs:\n{}", sbx.logs());
        // Deaths 2 and 3 were followed by 1 s and 2 s of backoff.
        let d = death_stamps(&sbx, slot);
        assert_eq!(d.len(), 4, "{slot}: {d:?}\nthe logs:\n{}", sbx.logs());
        let (s, _) = d[3].wrapping_sub(&d[2]);
        assert!(s >= 2, "{slot}: no backoff before the 4th death: {d:?}");
    }
    drop(limit);
    let logs = sbx.logs();
    for slot in SLOTS {
        for line in [
            format!("svkit: slot {slot} is crash-looping: restarting in 2 s\n"),
            format!("svkit: slot {slot} died 4 times within 60 s: not restarting\n"),
        ] {
            assert!(logs.contains(&line), "no {line:?} in:\n{logs}");
        }
    }
}
