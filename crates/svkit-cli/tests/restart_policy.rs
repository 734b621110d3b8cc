//! The restart policy rendered into `finish`, under real s6 in the sandbox.
//!
//! One sandbox runs every case side by side (they are independent slots), so
//! the file costs about as long as its slowest case, the backoff (~20 s):
//!
//! - `perm` exits 78 (a permanent exit code): down for good after one death;
//! - `clean-stop` exits 0 with `on_clean_exit: stop`: not restarted;
//! - `clean-restart` exits 0 with `on_clean_exit: restart`: restarted;
//! - `backoff` exits 1 with `backoff.max_s: 4`: the delays its `finish`
//!   announces grow up to `max_s`, and the gaps between its deaths, read
//!   from s6's own `supervise/death_tally`, are at least those delays;
//! - `loop` exits 1 with `max_deaths: 3, within_s: 60`: stopped after 3;
//! - `reset` exits 1 at once, but its 4th run lasts 8 s, well past
//!   `backoff.reset_after_s` (1 s) and the window its 3 deaths before it
//!   span: the delays start over after it (1, 2, then none, then 1 s;
//!   without the reset the 4th would be 4 s).
//! - `stopper` exits 1 at once: `svctl stop` during its 16 s backoff ends
//!   its `finish` at once, not when the delay ends.
//!
//! Every wait is a deadline poll. "Stays down" is checked by an observation
//! window: a deadline poll (at least [`WINDOW`], and for as long as the
//! backoff case takes) that fails as soon as a stopped slot's death tally or
//! status file changes. s6-supervise respawns at most once a second, so a
//! window of several seconds would see any restart.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use svkit::s6::tai64::Tai64N;
use svkit_testkit::{poll, sandbox_or_skip, svstat, Fixture, Sandbox};

const CONFIG: &str = r#"{
  "user": "nobody",
  "slots": [
    { "name": "perm", "command": ["sh", "-c", "exit 78"], "autostart": "always" },
    { "name": "clean-stop", "command": ["sh", "-c", "exit 0"], "autostart": "always",
      "restart": { "on_clean_exit": "stop" } },
    { "name": "clean-restart", "command": ["sh", "-c", "exit 0"], "autostart": "always",
      "restart": { "on_clean_exit": "restart" } },
    { "name": "backoff", "command": ["sh", "-c", "exit 1"], "autostart": "always",
      "restart": { "backoff": { "max_s": 4 }, "max_deaths": 0 } },
    { "name": "loop", "command": ["sh", "-c", "exit 1"], "autostart": "always",
      "restart": { "max_deaths": 3, "within_s": 60 } },
    { "name": "reset", "autostart": "always",
      "command": ["sh", "-c", "n=$(cat /tmp/reset.n 2>/dev/null || echo 0); n=$((n + 1)); echo $n > /tmp/reset.n; [ $n -eq 4 ] && sleep 8; exit 1"],
      "restart": { "backoff": { "max_s": 4, "reset_after_s": 1 }, "max_deaths": 0 } },
    { "name": "stopper", "command": ["sh", "-c", "exit 1"], "autostart": "always",
      "restart": { "backoff": { "max_s": 30 }, "max_deaths": 0 } }
  ]
}"#;

/// `backoff.max_s` of the `backoff` slot.
const MAX_S: u32 = 4;
/// Deaths of `backoff` to collect: delays 0, 1, 2, 4, 4 after the first five,
/// so the last two gaps are at the cap.
const BACKOFF_DEATHS: usize = 6;
/// Minimum observation window for the slots that must stay down.
const WINDOW: Duration = Duration::from_secs(4);
/// Bytes in one death tally record: TAI64N stamp, exit code, signal.
const RECORD: usize = 14;

/// One death as s6-supervise recorded it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Death {
    stamp: Tai64N,
    code: u8,
    sig: u8,
}

fn supervise(sbx: &Sandbox, slot: &str, file: &str) -> PathBuf {
    sbx.root()
        .join("run/service")
        .join(slot)
        .join("supervise")
        .join(file)
}

/// The slot's death tally, read natively (empty until the first death).
fn deaths(sbx: &Sandbox, slot: &str) -> Vec<Death> {
    let bytes = fs::read(supervise(sbx, slot, "death_tally")).unwrap_or_default();
    assert_eq!(
        bytes.len() % RECORD,
        0,
        "{slot}: death_tally is not whole {RECORD}-byte records"
    );
    bytes
        .chunks_exact(RECORD)
        .map(|r| Death {
            stamp: Tai64N::from_bytes(&r[..12]).expect("TAI64N stamp"),
            code: r[12],
            sig: r[13],
        })
        .collect()
}

fn secs_between(later: &Tai64N, earlier: &Tai64N) -> f64 {
    let (s, n) = later.wrapping_sub(earlier);
    s as f64 + f64::from(n) / 1e9
}

/// What must not change while a stopped slot is watched.
fn frozen(sbx: &Sandbox, slot: &str) -> (Vec<u8>, Vec<u8>) {
    (
        fs::read(supervise(sbx, slot, "death_tally")).unwrap_or_default(),
        fs::read(supervise(sbx, slot, "status")).unwrap_or_default(),
    )
}

#[test]
fn restart_policy_under_real_s6() {
    if !sandbox_or_skip("restart_policy_under_real_s6") {
        return;
    }
    let fx = Fixture::bare(CONFIG);
    let sbx = fx.boot();
    let long = Duration::from_secs(20);

    // Stopped slots: down, not wanted up, with exactly the expected deaths.
    // (slot, deaths before it stops, exit code of each)
    let stopped: [(&str, usize, u8); 3] = [("perm", 1, 78), ("clean-stop", 1, 0), ("loop", 3, 1)];
    for (slot, n, code) in stopped {
        poll(&format!("{slot} stopped for good"), long, || {
            (svstat(&sbx, slot, "up,wantedup") == "false false" && deaths(&sbx, slot).len() >= n)
                .then_some(())
        });
        let d = deaths(&sbx, slot);
        assert_eq!(d.len(), n, "{slot}: deaths {d:?}");
        assert!(
            d.iter().all(|d| d.code == code && d.sig == 0),
            "{slot}: expected exit code {code} in every record: {d:?}"
        );
    }

    // on_clean_exit: restart: clean exits keep being restarted.
    poll("clean-restart restarted after clean exits", long, || {
        (deaths(&sbx, "clean-restart").len() >= 3).then_some(())
    });
    assert!(deaths(&sbx, "clean-restart").iter().all(|d| d.code == 0));
    assert_eq!(
        svstat(&sbx, "clean-restart", "up,wantedup")
            .split(' ')
            .nth(1),
        Some("true"),
        "clean-restart must stay wanted up"
    );

    // Observation window: while the backoff slot collects its deaths (and at
    // least WINDOW), no stopped slot may die again or change state.
    let before: Vec<_> = stopped.iter().map(|(s, _, _)| frozen(&sbx, s)).collect();
    let start = Instant::now();
    poll(
        "backoff deaths (stopped slots watched meanwhile)",
        Duration::from_secs(40),
        || {
            for ((slot, _, _), was) in stopped.iter().zip(&before) {
                let now = frozen(&sbx, slot);
                assert!(
                    &now == was,
                    "{slot} changed after stopping for good: deaths {:?}",
                    deaths(&sbx, slot)
                );
            }
            (start.elapsed() >= WINDOW && deaths(&sbx, "backoff").len() >= BACKOFF_DEATHS)
                .then_some(())
        },
    );
    for (slot, n, _) in stopped {
        assert_eq!(
            svstat(&sbx, slot, "up,wantedup"),
            "false false",
            "{slot} after the window"
        );
        assert_eq!(deaths(&sbx, slot).len(), n, "{slot} after the window");
    }

    // Backoff: the delay finish chose after each death (it says so before
    // sleeping) grows, then sits at max_s; none after the first death.
    let logs = sbx.logs();
    let announced: Vec<u32> = logs
        .lines()
        .filter_map(|l| {
            l.split_once("slot backoff is crash-looping: restarting in ")
                .and_then(|(_, rest)| rest.strip_suffix(" s"))
                .map(|n| n.parse().expect("a delay in whole seconds"))
        })
        .collect();
    let delays: Vec<u32> = std::iter::once(0)
        .chain(announced.iter().copied())
        .collect();
    let want = [0, 1, 2, MAX_S, MAX_S];
    assert!(
        delays.len() >= want.len() && delays[..want.len()] == want,
        "delays after each death: want {want:?} (max_s {MAX_S}), finish said {announced:?}"
    );
    // And it waited that long: the gap after each death (s6's stamps) is
    // at least its delay, plus s6's 1 s respawn spacing and the run, with
    // room for a loaded machine.
    let d = deaths(&sbx, "backoff");
    assert!(d.iter().all(|d| d.code == 1), "{d:?}");
    let gaps: Vec<f64> = d
        .windows(2)
        .take(BACKOFF_DEATHS - 1)
        .map(|w| secs_between(&w[1].stamp, &w[0].stamp))
        .collect();
    eprintln!("backoff gaps (s): {gaps:.2?}");
    for (g, &delay) in gaps.iter().zip(&delays) {
        let delay = f64::from(delay);
        assert!(
            *g >= delay && *g < delay + 6.0,
            "a gap is not its delay ({delays:?}) plus s6's spacing: {gaps:.2?}"
        );
    }
    assert_eq!(
        svstat(&sbx, "backoff", "up,wantedup").split(' ').nth(1),
        Some("true"),
        "a backing-off slot stays wanted up"
    );

    // Backoff reset: a run longer than reset_after_s starts the count over.
    let reset = poll("reset announced 3 delays", Duration::from_secs(30), || {
        let said: Vec<u32> = (sbx.logs().lines())
            .filter_map(|l| {
                l.split_once("slot reset is crash-looping: restarting in ")
                    .and_then(|(_, rest)| rest.strip_suffix(" s"))
                    .and_then(|n| n.parse().ok())
            })
            .collect();
        (said.len() >= 3).then_some(said)
    });
    assert_eq!(reset[..3], [1, 2, 1], "delays of `reset`: {reset:?}");

    // A stop during a backoff ends it: `svctl stop --wait` waits for the
    // slot's `finish` to end, which used to sit out the whole delay.
    sbx.wait_for_log(
        "slot stopper is crash-looping: restarting in 16 s",
        Duration::from_secs(40),
    );
    let asked = Instant::now();
    let o = sbx.exec(&["svctl", "stop", "--wait", "--timeout", "5s", "stopper"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    let o = sbx.exec(&["svctl", "status", "--json", "stopper"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["slots"][0]["finishing"], false, "{doc}");
    assert_eq!(svstat(&sbx, "stopper", "up,wantedup"), "false false");

    for needle in [
        "slot perm exited 78, a permanent failure",
        "slot clean-stop exited cleanly: not restarting",
        "slot loop died 3 times within 60 s",
        "slot backoff is crash-looping: restarting in 4 s",
    ] {
        assert!(logs.contains(needle), "missing {needle:?} in logs:\n{logs}");
    }
    sbx.stop();
}
