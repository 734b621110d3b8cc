//! The slot files the golden tests only compare byte for byte, proven by
//! what real s6 does with them (s6-overlay's own `/init` in the sandbox):
//!
//! - `down-signal` (`down_signal`): `svctl stop` sends that signal, not TERM;
//! - `timeout-kill` (`stop_timeout_ms`): a process that ignores the down
//!   signal is SIGKILLed, no sooner than that and not much later;
//! - `data/check` (`readiness.check`): the slot is ready only once the check
//!   command passes, run again and again until then;
//! - `max-death-tally` (`max_deaths` > 100): s6 keeps more than its default
//!   100 death records, so a crash loop stops after `max_deaths` deaths.
//!
//! Each case boots its own sandbox (the cases run in parallel), with a
//! config using only its feature. The slots' commands are small sh scripts
//! in the rootfs that leave evidence under the sandbox's `/tmp`; s6's own
//! view comes from `s6-svstat`, `s6-svdt` and `supervise/death_tally`.
//! Every wait is a deadline poll.
//!
//! To see a case fail, break what the renderer writes for its feature in
//! `crates/svkit/src/render/mod.rs` (e.g. `down-signal` always `SIGTERM`,
//! no `timeout-kill`, a `data/check` that runs `true`, `max-death-tally`
//! one lower) and run this file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use svkit::s6::tai64::Tai64N;
use svkit_testkit::{poll, sandbox_or_skip, stdout, svstat, Rootfs, Sandbox};

/// `sigtrap.sh NAME exit|ignore`: writes its pid to `/tmp/NAME.pid` once its
/// traps are set, then appends the name of every signal it is sent to
/// `/tmp/NAME.sigs`, and exits 0 on the first (`exit`) or carries on
/// (`ignore`). CONT (which s6 sends after every down signal) and KILL are
/// not trapped.
const SIGTRAP: &str = r#"#!/bin/sh
out=/tmp/$1.sigs
for s in HUP INT QUIT USR1 USR2 ALRM TERM; do
  if [ "$2" = exit ]; then
    trap "echo $s >> $out; exit 0" "$s"
  else
    trap "echo $s >> $out" "$s"
  fi
done
echo $$ > "/tmp/$1.pid.new" && mv "/tmp/$1.pid.new" "/tmp/$1.pid"
while :; do
  sleep 1 &
  wait $!
done
"#;

/// `check.sh NAME`: a readiness check that logs each run to
/// `/tmp/NAME.checks` and passes once `/tmp/NAME.ready` exists.
const CHECK: &str = r#"#!/bin/sh
echo run >> "/tmp/$1.checks"
[ -e "/tmp/$1.ready" ]
"#;

/// `crash.sh NAME`: logs each run to `/tmp/NAME.runs`, then exits 1 as soon
/// as `/tmp/NAME.go` exists (at once, in every run after the first one that
/// saw it).
const CRASH: &str = r#"#!/bin/sh
echo run >> "/tmp/$1.runs"
while [ ! -e "/tmp/$1.go" ]; do
  sleep 0.05
done
exit 1
"#;

/// Bytes in one death tally record: TAI64N stamp, exit code, signal.
const RECORD: usize = 14;
/// s6-supervise's death tally size when there is no `max-death-tally`.
const S6_DEFAULT_TALLY: usize = 100;
/// Boot, supervision and the first run of a slot, on a loaded machine.
const BOOT: Duration = Duration::from_secs(30);

/// A sandbox whose rootfs has `config` and the helper scripts, idling.
fn boot(config: &str) -> (Rootfs, Sandbox) {
    let rootfs = Rootfs::with_svkit(config);
    rootfs
        .script("opt/svkit-test/sigtrap.sh", SIGTRAP)
        .script("opt/svkit-test/check.sh", CHECK)
        .script("opt/svkit-test/crash.sh", CRASH);
    let sbx = Sandbox::start(&["--rootfs", &rootfs.arg()], &["sleep", "100000"]);
    (rootfs, sbx)
}

fn slot_file(sbx: &Sandbox, slot: &str, file: &str) -> PathBuf {
    sbx.root().join("run/service").join(slot).join(file)
}

fn tmp(sbx: &Sandbox, file: &str) -> PathBuf {
    sbx.root().join("tmp").join(file)
}

/// What the renderer put in a slot file, for failure messages.
fn rendered(sbx: &Sandbox, slot: &str, file: &str) -> String {
    match fs::read_to_string(slot_file(sbx, slot, file)) {
        Ok(s) => format!("{slot}/{file}: {s:?}"),
        Err(e) => format!("{slot}/{file}: {e}"),
    }
}

/// (exit code, signal) of every death s6-supervise recorded, read natively.
fn deaths(sbx: &Sandbox, slot: &str) -> Vec<(u8, u8)> {
    let bytes = fs::read(slot_file(sbx, slot, "supervise/death_tally")).unwrap_or_default();
    assert_eq!(bytes.len() % RECORD, 0, "{slot}: torn death_tally");
    bytes.chunks_exact(RECORD).map(|r| (r[12], r[13])).collect()
}

/// The pid a sigtrap.sh slot wrote once its traps were set.
fn trapping_pid(sbx: &Sandbox, slot: &str) -> String {
    poll(&format!("{slot} trapping signals"), BOOT, || {
        fs::read_to_string(tmp(sbx, &format!("{slot}.pid")))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    })
}

fn signals_received(sbx: &Sandbox, slot: &str) -> String {
    fs::read_to_string(tmp(sbx, &format!("{slot}.sigs"))).unwrap_or_default()
}

/// Lines in a file of the sandbox (0 when it does not exist).
fn lines(p: &std::path::Path) -> usize {
    fs::read_to_string(p).unwrap_or_default().lines().count()
}

fn alive(sbx: &Sandbox, pid: &str) -> bool {
    sbx.sh(&format!("kill -0 {pid}")).status.success()
}

fn svctl_stop(sbx: &Sandbox, slot: &str) {
    let o = sbx.exec(&["svctl", "stop", slot]);
    assert!(
        o.status.success(),
        "svctl stop {slot}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn down_signal_is_what_stop_sends() {
    if !sandbox_or_skip("down_signal_is_what_stop_sends") {
        return;
    }
    let (_rootfs, sbx) = boot(
        r#"{ "user": "nobody", "slots": [
          { "name": "usr1", "command": ["/opt/svkit-test/sigtrap.sh", "usr1", "exit"],
            "down_signal": "USR1" },
          { "name": "hup", "command": ["/opt/svkit-test/sigtrap.sh", "hup", "exit"],
            "down_signal": "SIGHUP" }
        ] }"#,
    );
    let cases = [("usr1", "USR1"), ("hup", "HUP")];
    let pids: Vec<String> = cases.iter().map(|(s, _)| trapping_pid(&sbx, s)).collect();
    for (slot, _) in cases {
        svctl_stop(&sbx, slot);
    }
    for ((slot, want), pid) in cases.iter().zip(&pids) {
        poll(&format!("{slot} down after svctl stop"), BOOT, || {
            (svstat(&sbx, slot, "up,wantedup") == "false false" && !alive(&sbx, pid)).then_some(())
        });
        assert_eq!(
            signals_received(&sbx, slot),
            format!("{want}\n"),
            "{slot}: signals the process got on svctl stop ({})",
            rendered(&sbx, slot, "down-signal")
        );
        // It died of its trap (exit 0), not of a signal.
        assert_eq!(deaths(&sbx, slot), [(0, 0)], "{slot}: death tally");
    }
    sbx.stop();
}

#[test]
fn timeout_kill_kills_what_ignores_the_down_signal() {
    if !sandbox_or_skip("timeout_kill_kills_what_ignores_the_down_signal") {
        return;
    }
    const TIMEOUT_MS: u64 = 3000;
    let (_rootfs, sbx) = boot(&format!(
        r#"{{ "user": "nobody", "slots": [
          {{ "name": "stubborn", "command": ["/opt/svkit-test/sigtrap.sh", "stubborn", "ignore"],
             "stop_timeout_ms": {TIMEOUT_MS} }}
        ] }}"#
    ));
    let pid = trapping_pid(&sbx, "stubborn");
    let timeout = Duration::from_millis(TIMEOUT_MS);
    let asked = Instant::now();
    svctl_stop(&sbx, "stubborn");
    // The TERM arrives and is ignored; then only s6's timeout ends it.
    poll("stubborn got TERM", BOOT, || {
        (signals_received(&sbx, "stubborn") == "TERM\n").then_some(())
    });
    let gone = poll(
        "stubborn killed after stop_timeout_ms",
        timeout + Duration::from_secs(20),
        || {
            (svstat(&sbx, "stubborn", "up") == "false" && !alive(&sbx, &pid))
                .then(|| asked.elapsed())
        },
    );
    eprintln!("stop to gone: {gone:.2?} (stop_timeout_ms {TIMEOUT_MS})");
    let file = rendered(&sbx, "stubborn", "timeout-kill");
    // s6 arms the timer after svctl asked, so never before the timeout;
    // the upper bound is generous for a loaded machine.
    assert!(
        gone >= timeout,
        "killed {gone:.2?} after the stop, before stop_timeout_ms ({file})"
    );
    assert!(
        gone < timeout + Duration::from_secs(10),
        "killed {gone:.2?} after the stop ({file})"
    );
    // Killed by SIGKILL, which no trap sees: the trap ran only for TERM.
    assert_eq!(
        deaths(&sbx, "stubborn"),
        [(128 + 9, 9)],
        "death tally: one death by SIGKILL ({file})"
    );
    assert_eq!(svstat(&sbx, "stubborn", "signal"), "SIGKILL");
    assert_eq!(signals_received(&sbx, "stubborn"), "TERM\n");
    sbx.stop();
}

#[test]
fn readiness_check_makes_the_slot_ready_once_it_passes() {
    if !sandbox_or_skip("readiness_check_makes_the_slot_ready_once_it_passes") {
        return;
    }
    let (_rootfs, sbx) = boot(
        r#"{ "user": "nobody", "slots": [
          { "name": "checked", "command": ["sleep", "100000"],
            "readiness": { "check": { "command": ["/opt/svkit-test/check.sh", "checked"],
                                      "interval_ms": 100 } } }
        ] }"#,
    );
    let checks = tmp(&sbx, "checked.checks");
    let runs = || lines(&checks);
    // Up, and not ready while the check runs and fails, time after time.
    let pid = poll("checked up", BOOT, || {
        let p = svstat(&sbx, "checked", "pid");
        (svstat(&sbx, "checked", "up") == "true").then_some(p)
    });
    poll("the check run 3 times", BOOT, || {
        let n = runs();
        assert_eq!(
            svstat(&sbx, "checked", "up,ready"),
            "true false",
            "ready after {n} failed checks ({})",
            rendered(&sbx, "checked", "data/check")
        );
        (n >= 3).then_some(())
    });
    fs::write(tmp(&sbx, "checked.ready"), "").expect("write the ready flag");
    let before = runs();
    poll("checked ready once the check passes", BOOT, || {
        (svstat(&sbx, "checked", "up,ready") == "true true").then_some(())
    });
    assert!(
        runs() > before,
        "ready without the check running again ({})",
        rendered(&sbx, "checked", "data/check")
    );
    assert_eq!(
        svstat(&sbx, "checked", "pid"),
        pid,
        "the same run throughout"
    );
    sbx.stop();
}

#[test]
fn max_death_tally_lets_max_deaths_above_100_stop_a_crash_loop() {
    if !sandbox_or_skip("max_death_tally_lets_max_deaths_above_100_stop_a_crash_loop") {
        return;
    }
    const MAX_DEATHS: usize = 103;
    /// Real deaths (s6 spaces runs ≥ 1 s apart); the tally is seeded with
    /// the others, so it crosses s6's default 100 with real ones.
    const REAL: usize = 6;
    let (_rootfs, sbx) = boot(&format!(
        r#"{{ "user": "nobody", "slots": [
          {{ "name": "loop", "command": ["/opt/svkit-test/crash.sh", "loop"],
             "restart": {{ "max_deaths": {MAX_DEATHS}, "within_s": 3600, "backoff": {{ "max_s": 0 }} }} }}
        ] }}"#
    ));
    // s6-supervise empties the tally when it starts; it is up (and blocked
    // in crash.sh) before its first death.
    poll("loop up", BOOT, || {
        (svstat(&sbx, "loop", "up") == "true").then_some(())
    });
    assert!(deaths(&sbx, "loop").is_empty());
    // Earlier deaths, as s6-supervise records them (it reads the tally back
    // at every death and keeps the newest max-death-tally records).
    let stamp = Tai64N::from_wallclock(SystemTime::now()).expect("TAI64N now");
    let mut seed = Vec::new();
    for _ in 0..MAX_DEATHS - REAL {
        seed.extend_from_slice(&stamp.to_bytes());
        seed.extend_from_slice(&[1, 0]);
    }
    fs::write(slot_file(&sbx, "loop", "supervise/death_tally"), &seed).expect("seed the tally");
    fs::write(tmp(&sbx, "loop.go"), "").expect("write the go flag");

    poll(
        &format!("loop stopped for good after {MAX_DEATHS} deaths"),
        Duration::from_secs(REAL as u64 * 5 + 30),
        || {
            let d = deaths(&sbx, "loop");
            let runs = lines(&tmp(&sbx, "loop.runs"));
            // A run past the deadly one: the loop went on (a tally capped
            // at 100 never reaches max_deaths).
            assert!(
                runs <= REAL && d.len() <= MAX_DEATHS,
                "loop still restarting after {runs} runs, {} deaths recorded, \
                 max_deaths {MAX_DEATHS} ({})",
                d.len(),
                rendered(&sbx, "loop", "max-death-tally")
            );
            (svstat(&sbx, "loop", "up,wantedup") == "false false").then_some(())
        },
    );
    let d = deaths(&sbx, "loop");
    assert_eq!(
        d.len(),
        MAX_DEATHS,
        "s6 kept {} death records (default {S6_DEFAULT_TALLY}; {})",
        d.len(),
        rendered(&sbx, "loop", "max-death-tally")
    );
    assert!(d.iter().all(|r| *r == (1, 0)), "{d:?}");
    assert_eq!(lines(&tmp(&sbx, "loop.runs")), REAL, "runs of loop");
    // s6's own reader agrees.
    let svdt = stdout(&sbx.sh("s6-svdt /run/service/loop"));
    assert_eq!(svdt.lines().count(), MAX_DEATHS, "s6-svdt:\n{svdt}");
    sbx.wait_for_log(
        &format!("slot loop died {MAX_DEATHS} times within 3600 s: not restarting"),
        BOOT,
    );
    sbx.stop();
}
