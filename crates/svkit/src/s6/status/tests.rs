use std::time::{Duration, UNIX_EPOCH};

use super::*;

const T0: u64 = 1_796_016_145;

fn tai(unix: u64, nanos: u32) -> Tai64N {
    Tai64N::from_system_time(UNIX_EPOCH + Duration::new(unix, nanos)).unwrap()
}

/// A status record laid out by hand, independent of `RawStatus::encode`.
fn record(stamp: Tai64N, ready: Tai64N, pid: u64, wstat: u16, flags: u8) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&stamp.label().to_be_bytes());
    v.extend_from_slice(&stamp.nanos().to_be_bytes());
    v.extend_from_slice(&ready.label().to_be_bytes());
    v.extend_from_slice(&ready.nanos().to_be_bytes());
    v.extend_from_slice(&pid.to_be_bytes());
    v.extend_from_slice(&wstat.to_be_bytes());
    v.push(flags);
    v
}

#[test]
fn decode_errors() {
    let good = record(tai(T0, 0), tai(T0, 0), 1, 0, 0);
    for len in [0, 12, 34, 36, 42, 44] {
        let mut b = good.clone();
        b.resize(len, 0);
        match decode(&b) {
            Err(StatusError::BadLength { path: None, len: l }) => assert_eq!(l, len),
            other => panic!("{len}: {other:?}"),
        }
    }
    let mut b = good.clone();
    b[20..24].copy_from_slice(&1_000_000_000u32.to_be_bytes());
    assert!(matches!(
        decode(&b),
        Err(StatusError::BadStamp { path: None })
    ));
    let mut b = good.clone();
    b[24..32].copy_from_slice(&(1u64 << 31).to_be_bytes());
    assert!(matches!(decode(&b), Err(StatusError::BadPid { pid, .. }) if pid == 1 << 31));
    let e = decode(&[0; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid supervise/status: length 3, expected 35 or 43"
    );
}

#[test]
fn high_flag_bits_are_ignored_like_s6() {
    let b = record(tai(T0, 0), tai(T0, 0), 1, 0, 0xf0 | FLAG_READY);
    let raw = decode(&b).unwrap();
    assert!(raw.ready && !raw.paused && !raw.want_up && !raw.finishing);
}

#[test]
fn signal_names_follow_skalibs() {
    assert_eq!(sig_name(15), "TERM");
    assert_eq!(sig_name(6), "ABRT");
    assert_eq!(sig_name(29), "POLL");
    assert_eq!(sig_name(17), "CHLD");
    assert_eq!(sig_name(40), "???");
}

#[test]
fn io_error_message_is_strerror() {
    let e = StatusError::Io {
        path: "/x/supervise/status".into(),
        source: io::Error::from_raw_os_error(nix::libc::EACCES),
    };
    assert_eq!(
        e.to_string(),
        "unable to read /x/supervise/status: Permission denied"
    );
}

#[test]
fn only_a_read_error_has_a_source_and_only_eacces_is_denied() {
    use std::error::Error;
    let io_err = |errno| StatusError::Io {
        path: "/x/supervise/status".into(),
        source: io::Error::from_raw_os_error(errno),
    };
    let denied = io_err(nix::libc::EACCES);
    assert!(denied.is_denied());
    assert_eq!(
        denied.source().map(ToString::to_string),
        Some("Permission denied (os error 13)".to_owned())
    );
    let missing = io_err(nix::libc::ENOENT);
    assert!(!missing.is_denied());
    assert!(missing.source().is_some());
    let bad = StatusError::BadLength { path: None, len: 3 };
    assert!(!bad.is_denied());
    assert!(bad.source().is_none());
}

/// Each term of the "never started" rule: s6 2.13.2+'s paused mark, or
/// the initial record of earlier versions (down, exit 0, ready, both
/// stamps equal); a death or a running process is never it.
#[test]
fn never_started_is_the_initial_record_only() {
    let t = tai(T0, 5);
    let later = tai(T0, 6);
    let raw =
        |stamp, ready, pid, wstat, flags| decode(&record(stamp, ready, pid, wstat, flags)).unwrap();
    // 2.13.2+: down and paused, whatever the stamps.
    assert!(raw(t, later, 0, 0, FLAG_PAUSED).never_started());
    // Earlier: the initial record.
    assert!(raw(t, t, 0, 0, FLAG_READY).never_started());
    // A clean exit: stamps read apart.
    assert!(!raw(t, later, 0, 0, FLAG_READY).never_started());
    // A death with an exit code, stamps equal.
    assert!(!raw(t, t, 0, 1 << 8, FLAG_READY).never_started());
    // Down but not down-ready.
    assert!(!raw(t, t, 0, 0, 0).never_started());
    // Up, paused (s6-svc -p) or not.
    assert!(!raw(t, t, 42, 0, FLAG_READY | FLAG_PAUSED).never_started());
    assert!(!raw(t, t, 42, 0, FLAG_READY).never_started());
    // Its finish script running (pid is finish's).
    assert!(!raw(t, t, 42, 0, FLAG_FINISHING | FLAG_PAUSED).never_started());
}

#[test]
fn a_last_exit_says_itself_in_json() {
    assert_eq!(LastExit::None.json(), serde_json::Value::Null);
    assert_eq!(LastExit::Exited(3).json().to_string(), r#"{"code":3}"#);
    assert_eq!(
        LastExit::Signaled(15).json().to_string(),
        r#"{"signal":"SIGTERM","signum":15}"#
    );
    assert_eq!(
        LastExit::Other(0x137f).json().to_string(),
        r#"{"wstat":4991}"#
    );
}

#[test]
fn a_wait_status_reads_as_waitpid_macros_do() {
    assert_eq!(LastExit::from_wstat(0), LastExit::Exited(0));
    assert_eq!(LastExit::from_wstat(0x0100), LastExit::Exited(1));
    assert_eq!(LastExit::from_wstat(0x8f00), LastExit::Exited(0x8f));
    assert_eq!(LastExit::from_wstat(0x000f), LastExit::Signaled(15));
    // A core dump bit beside the signal.
    assert_eq!(LastExit::from_wstat(0x0086), LastExit::Signaled(6));
    assert_eq!(LastExit::from_wstat(0x137f), LastExit::Other(0x137f));
}

/// s6-svstat's "up": a process, and not its finish script.
#[test]
fn up_is_a_run_process_that_is_not_finishing() {
    let t = tai(T0, 0);
    let raw = |pid, flags| decode(&record(t, t, pid, 0, flags)).unwrap();
    assert!(raw(42, 0).is_up());
    assert!(raw(42, FLAG_WANTUP | FLAG_READY).is_up());
    assert!(!raw(42, FLAG_FINISHING).is_up());
    assert!(!raw(0, 0).is_up());
    assert!(!raw(0, FLAG_WANTUP).is_up());
}

/// What the status file says, typed: no last exit while up, ready and
/// paused only while up (s6 leaves both flags on a down service).
#[test]
fn a_status_is_typed_from_its_record() {
    let t = tai(T0, 0);
    let st = |pid, wstat, flags| {
        Status::from_parts(decode(&record(t, t, pid, wstat, flags)).unwrap(), true, 0)
    };
    let up = st(42, 3 << 8, FLAG_READY | FLAG_PAUSED | FLAG_WANTUP);
    assert!(up.up && up.ready && up.paused && up.want_up);
    assert_eq!((up.pid, up.last_exit), (Some(42), LastExit::None));
    let down = st(0, 3 << 8, FLAG_READY | FLAG_PAUSED);
    assert!(!down.up && !down.ready && !down.paused, "{down:?}");
    assert!(down.never_started, "{down:?}");
    assert_eq!((down.pid, down.last_exit), (None, LastExit::None));
    let died = Status::from_parts(
        decode(&record(t, tai(T0, 1), 0, 3 << 8, FLAG_READY)).unwrap(),
        true,
        1,
    );
    assert_eq!(died.last_exit, LastExit::Exited(3));
    let killed = Status::from_parts(decode(&record(t, tai(T0, 1), 0, 9, 0)).unwrap(), true, 1);
    assert_eq!(killed.last_exit, LastExit::Signaled(9));
}

/// Whole seconds as s6-svstat counts them; a stamp after the clock, or a
/// clock before any label, counts as no time at all.
#[test]
fn seconds_since_a_stamp() {
    let st = Status::from_parts(
        decode(&record(tai(T0, 0), tai(T0 - 10, 0), 42, 0, FLAG_READY)).unwrap(),
        true,
        0,
    );
    let at = |s: u64, n: u32| UNIX_EPOCH + Duration::new(s, n);
    assert_eq!(st.secs_since(at(T0 + 5, 700_000_000)), 5);
    assert_eq!(st.secs_ready(at(T0 + 5, 700_000_000)), 15);
    assert_eq!(st.secs_since(at(T0 - 1, 0)), 0);
    assert_eq!(st.secs_ready(at(T0 - 11, 0)), 0);
    let long_ago = UNIX_EPOCH.checked_sub(Duration::from_secs((1 << 62) + 1000));
    if let Some(t) = long_ago {
        assert_eq!(st.secs_since(t), 0);
    }
}

#[test]
fn the_death_tally_reads_record_by_record() {
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(t.path().join("supervise")).expect("mkdir");
    assert_eq!(death_tally(t.path()).expect("none"), []);
    let mut tally = vec![0u8; 12];
    tally.extend_from_slice(&[0, 0]);
    tally.extend_from_slice(&[0u8; 12]);
    tally.extend_from_slice(&[137, 9]);
    std::fs::write(t.path().join("supervise/death_tally"), &tally).expect("write");
    let d = death_tally(t.path()).expect("read");
    assert_eq!(
        d,
        [
            Death { code: 0, signal: 0 },
            Death {
                code: 137,
                signal: 9
            }
        ]
    );
    assert!(d[0].exited_zero() && !d[1].exited_zero());
    // With their stamps; nanoseconds past 10^9 are no stamp.
    tally[12 + 14 - 1] = 7;
    std::fs::write(t.path().join("supervise/death_tally"), &tally).expect("write");
    let stamped = death_tally_stamped(t.path()).expect("read");
    assert_eq!(stamped[1].0, Tai64N::new(0, 7).expect("stamp"));
    assert_eq!(stamped[1].1, d[1]);
    tally[14 + 8..14 + 12].copy_from_slice(&1_000_000_000u32.to_be_bytes());
    std::fs::write(t.path().join("supervise/death_tally"), &tally).expect("write");
    assert!(matches!(
        death_tally_stamped(t.path()),
        Err(StatusError::BadStamp { .. })
    ));
    std::fs::write(t.path().join("supervise/death_tally"), &tally[..15]).expect("write");
    assert!(matches!(
        death_tally(t.path()),
        Err(StatusError::BadDeathTally { len: 15, .. })
    ));
}
