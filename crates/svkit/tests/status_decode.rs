//! Decoder robustness (property tests), typed errors on bad files, and a
//! differential check of `read_slot` against a real s6-svstat.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svstat;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use svkit::s6::status::{decode, read_slot, supervisor_running, LastExit, Status, StatusError};
use svkit::s6::tai64::Tai64N;
use svkit::slot::health::kept_down;
use svstat::{encode, svstat_fields, SvstatFlavor, SVSTAT_FIELDS};

/// Every Ok decode must re-encode to the input, flag bits s6 ignores aside.
fn check_round_trip(bytes: &[u8], now_secs: u64) {
    let Ok(raw) = decode(bytes) else { return };
    let mut expect = bytes.to_vec();
    if let Some(last) = expect.last_mut() {
        *last &= 0x0f;
    }
    assert_eq!(encode(&raw), expect);
    assert_eq!(decode(&encode(&raw)).ok(), Some(raw));
    let st = Status::from_parts(raw, now_secs & 1 == 0, now_secs % 5);
    // Against the 35/43-byte layout itself, not the decoder's own fields:
    // pid u64 BE at 24, wait status u16 BE, then the flags byte last
    // (finishing=2, wantup=4, ready=8). s6-svstat calls a service up when
    // it has a pid and is not finishing.
    let pid = u64::from_be_bytes(bytes[24..32].try_into().expect("8 bytes"));
    let flags = bytes[bytes.len() - 1];
    let up = pid != 0 && flags & 2 == 0;
    assert_eq!(st.up, up, "{bytes:02x?}");
    assert_eq!(st.pid.map(u64::from), up.then_some(pid), "{bytes:02x?}");
    assert_eq!(st.want_up, flags & 4 != 0, "{bytes:02x?}");
    assert_eq!(st.ready, up && flags & 8 != 0, "{bytes:02x?}");
    assert_eq!(st.finishing, flags & 2 != 0, "{bytes:02x?}");
    if up {
        assert_eq!(
            st.last_exit,
            LastExit::None,
            "an up service has no last exit"
        );
    }
    assert_eq!(
        Tai64N::from_system_time(st.since).and_then(|t| t.to_system_time()),
        Some(st.since)
    );
    let now = UNIX_EPOCH + Duration::from_secs(now_secs);
    let _ = st.secs_since(now) + st.secs_ready(now);
    for flavor in [SvstatFlavor::Before2_13_2, SvstatFlavor::Since2_13_2] {
        assert_eq!(svstat_fields(&st, now, flavor).len(), SVSTAT_FIELDS.len());
    }
}

fn valid_record() -> impl Strategy<Value = Vec<u8>> {
    let stamp = (
        0x4000_0000_0000_0000u64..0x4000_0001_0000_0000,
        0u32..1_000_000_000,
    );
    (
        stamp.clone(),
        stamp,
        0u64..70000,
        any::<u16>(),
        0u8..16,
        any::<bool>(),
    )
        .prop_map(|((s, sn), (r, rn), pid, wstat, flags, pgid)| {
            let mut v = Vec::with_capacity(43);
            for (l, n) in [(s, sn), (r, rn)] {
                v.extend_from_slice(&l.to_be_bytes());
                v.extend_from_slice(&n.to_be_bytes());
            }
            v.extend_from_slice(&pid.to_be_bytes());
            if pgid {
                v.extend_from_slice(&pid.to_be_bytes());
            }
            v.extend_from_slice(&wstat.to_be_bytes());
            v.push(flags);
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(50_000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80),
                                now in any::<u64>()) {
        check_round_trip(&bytes, now >> 2);
    }

    #[test]
    fn mutated_records_never_panic(rec in valid_record(),
                                   edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
                                   resize in proptest::option::of(0usize..80),
                                   now in 1_700_000_000u64..1_900_000_000) {
        prop_assert!(decode(&rec).is_ok());
        let mut b = rec;
        for (at, byte) in edits {
            let i = at % b.len();
            b[i] = byte;
        }
        if let Some(n) = resize {
            b.resize(n, 0xff);
        }
        check_round_trip(&b, now);
    }
}

fn record(pid: u64, flags: u8) -> Vec<u8> {
    let t = Tai64N::from_system_time(UNIX_EPOCH + Duration::from_secs(1_800_000_000)).unwrap();
    let mut v = [t.to_bytes(), t.to_bytes()].concat();
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&[0, 0, flags]);
    v
}

fn slot(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("svc");
    fs::create_dir_all(dir.join("supervise")).unwrap();
    for (name, data) in files {
        fs::write(dir.join(name), data).unwrap();
    }
    (tmp, dir)
}

#[test]
fn typed_errors_for_bad_files() {
    let good = record(12, 4);
    let tmp = tempfile::tempdir().unwrap();
    let e = read_slot(&tmp.path().join("nope")).unwrap_err();
    assert!(matches!(e, StatusError::NotSupervised { .. }), "{e:?}");
    assert!(
        e.to_string().ends_with("nope: supervisor not running"),
        "{e}"
    );
    let (_t, dir) = slot(&[]);
    assert!(matches!(
        read_slot(&dir),
        Err(StatusError::NotSupervised { .. })
    ));
    assert!(!supervisor_running(&dir).unwrap());

    for len in [0usize, 20, 34, 36, 80, 5000] {
        let mut b = good.clone();
        b.resize(len, 7);
        let (_t, dir) = slot(&[("supervise/status", &b)]);
        match read_slot(&dir) {
            Err(StatusError::BadLength {
                path: Some(p),
                len: l,
            }) => {
                assert_eq!(p, dir.join("supervise/status"));
                assert_eq!(l, len.min(64));
            }
            other => panic!("{len}: {other:?}"),
        }
    }
    let mut garbled = good.clone();
    garbled[8..12].copy_from_slice(&[0xff; 4]);
    let (_t, dir) = slot(&[("supervise/status", &garbled)]);
    let e = read_slot(&dir).unwrap_err();
    assert!(
        matches!(e, StatusError::BadStamp { path: Some(_) }),
        "{e:?}"
    );

    let (_t, dir) = slot(&[
        ("supervise/status", &good),
        ("supervise/death_tally", &[0; 15]),
    ]);
    let e = read_slot(&dir).unwrap_err();
    assert!(
        matches!(e, StatusError::BadDeathTally { len: 15, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .ends_with("death_tally: length 15, not a multiple of 14"),
        "{e}"
    );

    let (_t, dir) = slot(&[]);
    fs::create_dir(dir.join("supervise/status")).unwrap();
    let e = read_slot(&dir).unwrap_err();
    assert!(matches!(e, StatusError::Io { .. }), "{e:?}");
    assert!(e.to_string().ends_with("status: Is a directory"), "{e}");
}

#[test]
fn reads_tally_and_down_file() {
    let good = record(12, 4);
    let (_t, dir) = slot(&[("supervise/status", &good)]);
    let st = read_slot(&dir).unwrap();
    assert_eq!((st.deaths, st.normally_up, st.pid), (0, true, Some(12)));
    let (_t, dir) = slot(&[
        ("supervise/status", &good),
        ("supervise/death_tally", &[0; 28]),
        ("down", b""),
    ]);
    let st = read_slot(&dir).unwrap();
    assert_eq!((st.deaths, st.normally_up), (2, false));
}

// ---- real s6 ------------------------------------------------------------

fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
        .unwrap_or(false)
}

fn run(prog: &str, args: &[&str]) -> (bool, String) {
    match Command::new(prog).args(args).stdin(Stdio::null()).output() {
        Ok(o) => (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        ),
        Err(e) => (false, e.to_string()),
    }
}

/// Stops s6-svscan (and so its supervisors and services) even on panic.
struct Scan {
    child: Child,
    dir: PathBuf,
    services: Vec<PathBuf>,
}

impl Drop for Scan {
    fn drop(&mut self) {
        let _ = run("s6-svscanctl", &["-t", &self.dir.to_string_lossy()]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("s6-svscan did not exit on -t: killing it and its services");
        for s in &self.services {
            if let Ok(Status { pid: Some(p), .. }) = read_slot(s) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(p as i32),
                    nix::sys::signal::SIGKILL,
                );
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` until it gives a value, up to 30 s.
fn poll<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    svkit_testkit::poll(what, Duration::from_secs(30), f)
}

fn service(scan: &Path, name: &str, run_script: &str, extra: &[(&str, &str)]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scan.join(name);
    fs::create_dir_all(&dir).unwrap();
    for (file, body) in [("run", run_script)].iter().chain(extra) {
        let p = dir.join(file);
        fs::write(&p, body).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// Compares every s6-svstat -o field with ours on a state that holds still.
fn compare(dir: &Path) -> Status {
    let d = dir.to_string_lossy().into_owned();
    let spec = SVSTAT_FIELDS.join(",");
    poll(&format!("a stable state of {d}"), || {
        let st = read_slot(dir).ok()?;
        let before = SystemTime::now();
        let (ok, out) = run("s6-svstat", &["-o", &spec, &d]);
        let after = SystemTime::now();
        assert!(ok, "s6-svstat {d}: {out}");
        if read_slot(dir).ok()?.raw != st.raw {
            return None;
        }
        let flavor = installed_flavor();
        let theirs: Vec<&str> = out.split(' ').collect();
        let lo = svstat_fields(&st, before, flavor);
        let hi = svstat_fields(&st, after, flavor);
        assert_eq!(theirs.len(), lo.len(), "{out}");
        for ((name, l), (h, t)) in lo.iter().zip(hi.iter().map(|(_, h)| h).zip(&theirs)) {
            if name.ends_with("for") {
                let (l, h, t): (u64, u64, u64) =
                    (l.parse().ok()?, h.parse().ok()?, t.parse().ok()?);
                assert!(l <= t && t <= h, "{d} {name}: s6 {t}, ours {l}..{h}");
            } else {
                assert_eq!(l, t, "{d} {name}: {out}");
            }
        }
        Some(st)
    })
}

/// The `s6-svstat` format rule of the s6 on this host (Debian's package),
/// read from its version, never from the data being compared.
fn installed_flavor() -> SvstatFlavor {
    let o = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", "s6"])
        .output()
        .expect("dpkg-query");
    let v = String::from_utf8_lossy(&o.stdout).into_owned();
    let nums: Vec<u32> = v.split(['.', '-']).filter_map(|p| p.parse().ok()).collect();
    assert!(nums.len() >= 3, "no s6 version from dpkg-query: {v:?}");
    if nums.as_slice() >= [2, 13, 2].as_slice() {
        SvstatFlavor::Since2_13_2
    } else {
        SvstatFlavor::Before2_13_2
    }
}

#[test]
fn matches_real_s6_svstat() {
    if !on_path("s6-svscan") || !on_path("s6-svstat") {
        svkit_testkit::skip(
            "matches_real_s6_svstat",
            "s6-svscan/s6-svstat not on PATH (apt-get install s6)",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let scan = tmp.path().join("scan");
    let sleeper = "#!/bin/sh\nexec sleep 1000\n";
    let running = service(&scan, "running", sleeper, &[]);
    let stopped = service(&scan, "stopped", sleeper, &[]);
    let exited = service(&scan, "exited", "#!/bin/sh\nexit 3\n", &[("down", "")]);
    let never = service(&scan, "never", sleeper, &[("down", "")]);
    let failed = service(
        &scan,
        "failed",
        "#!/bin/sh\nexit 1\n",
        &[("finish", "#!/bin/sh\nexit 125\n")],
    );
    let services = vec![
        running.clone(),
        stopped.clone(),
        exited.clone(),
        never.clone(),
        failed.clone(),
    ];
    let child = Command::new("s6-svscan")
        .arg(&scan)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _guard = Scan {
        child,
        dir: scan.clone(),
        services: services.clone(),
    };
    for s in &services {
        poll("s6-svok", || {
            run("s6-svok", &[&s.to_string_lossy()]).0.then_some(())
        });
        poll("supervisor lock", || {
            supervisor_running(s).ok().filter(|&r| r)
        });
    }

    poll("running up", || read_slot(&running).ok().filter(|s| s.up));
    let st = compare(&running);
    assert!(st.up && st.want_up && st.normally_up && st.pid.is_some());

    poll("stopped up", || read_slot(&stopped).ok().filter(|s| s.up));
    assert!(run("s6-svc", &["-d", &stopped.to_string_lossy()]).0);
    poll("stopped down", || {
        read_slot(&stopped).ok().filter(|s| !s.up && !s.finishing)
    });
    let st = compare(&stopped);
    assert_eq!(st.last_exit, LastExit::Signaled(15));
    assert!(!st.want_up && st.deaths == 1);

    let st = compare(&never);
    assert!(st.never_started && !st.normally_up && !st.want_up);

    assert!(run("s6-svc", &["-o", &exited.to_string_lossy()]).0);
    poll("exited", || {
        read_slot(&exited)
            .ok()
            .filter(|s| s.last_exit == LastExit::Exited(3) && !s.finishing)
    });
    let st = compare(&exited);
    assert!(!st.up && !st.normally_up && st.deaths == 1);

    poll("failed", || {
        read_slot(&failed)
            .ok()
            .filter(|s| kept_down(&s.raw) && !s.never_started)
    });
    let st = compare(&failed);
    assert_eq!(st.last_exit, LastExit::Exited(1));
    assert!(!st.want_up && st.normally_up);
}
