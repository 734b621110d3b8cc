//! Slots as Prometheus metrics: the text exposition format (version
//! 0.0.4), one sample per slot and metric, labelled `slot="NAME"`, every
//! family with its HELP and TYPE lines. Made for node-exporter's textfile
//! collector, which reads a file written at some earlier time: besides
//! durations, the time of the last change is given as a timestamp, which
//! does not go stale between writes.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use super::health::{in_wanted_state, Verdict};
use super::snapshot::{Slots, Snapshot};
use super::usage::Usage;
use crate::s6::status::{death_tally, Death, Status, StatusError};

/// One slot's readings.
#[derive(Debug, Clone)]
pub struct SlotMetrics {
    pub name: String,
    /// None: no supervisor runs on it.
    pub st: Option<Status>,
    pub v: Verdict,
    pub last_death: Option<Death>,
    /// Has a logger of its own.
    pub logger: bool,
    /// Its program's tree, when the snapshot was measured and it runs.
    pub usage: Option<Usage>,
}

/// The exposition of a snapshot's slots (those this user may read and
/// that exist), as `svctl metrics` prints it and `svkit serve` answers;
/// `Err`: the slot whose death tally could not be read.
pub fn of_snapshot(slots: &Slots<'_>, snap: Snapshot) -> Result<String, (String, StatusError)> {
    let mut readings = Vec::new();
    for r in (snap.rows.into_iter()).filter(|r| !r.missing && r.unreadable.is_none()) {
        // Its last death, read from s6's tally.
        let dir = slots.dir(&r.name);
        let last_death = match &r.st {
            Some(s) if s.deaths > 0 => death_tally(&dir).map_err(|e| (r.name.clone(), e))?,
            _ => Vec::new(),
        };
        readings.push(SlotMetrics {
            last_death: last_death.last().copied(),
            logger: super::logger::has_logger(&dir),
            name: r.name,
            st: r.st,
            v: r.v,
            usage: r.usage,
        });
    }
    Ok(exposition(&readings, snap.now))
}

/// One metric family: name, help, and its value for a slot (None: no
/// sample for that slot).
type Family = (
    &'static str,
    &'static str,
    fn(&SlotMetrics, SystemTime) -> Option<f64>,
);

fn b(x: bool) -> Option<f64> {
    Some(if x { 1.0 } else { 0.0 })
}

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

const FAMILIES: &[Family] = &[
    ("svkit_slot_supervised", "Whether an s6-supervise runs on the slot (1) or not (0).", |m, _| b(m.st.is_some())),
    ("svkit_slot_up", "Whether the slot's process is up (1) or not (0).", |m, _| b(m.st.as_ref().is_some_and(|s| s.up))),
    ("svkit_slot_ready", "Whether the slot is up and ready (1): notified readiness, or up when it does not notify.", |m, _| b(m.v.ready)),
    ("svkit_slot_wanted_up", "Whether s6 wants the slot up (1) or down (0): its want flag (svctl start/stop).", |m, _| m.st.as_ref().map(|s| f64::from(u8::from(s.want_up)))),
    ("svkit_slot_desired_up", "Whether svkit wants the slot up (1): its remembered state, else no down file.", |m, _| b(m.v.desired_up)),
    ("svkit_slot_in_wanted_state", "Whether the slot is in the state it is wanted in (1): the health check of svctl status.", |m, _| b(in_wanted_state(m.st.as_ref(), &m.v))),
    ("svkit_slot_failed", "Whether the slot is kept down for good by its finish after a failure (1).", |m, _| b(m.v.failed)),
    ("svkit_slot_done", "Whether the slot is kept down after a clean exit of its own (1): a finished job.", |m, _| b(m.v.done)),
    ("svkit_slot_ready_overdue", "Whether the slot is up but its readiness check gave up (1).", |m, _| b(m.v.ready_overdue)),
    ("svkit_slot_log_ok", "Whether the slot's output gets through its logger (1) or not (0: see svctl status for why); absent without a logger.", |m, _| if m.logger { b(m.v.log.is_none()) } else { None }),
    ("svkit_slot_deaths", "Deaths (restarts) in s6's death tally, completions not counted: since its supervisor started, at most max-death-tally (default 100).", |m, _| m.st.as_ref().map(|_| m.v.deaths as f64)),
    ("svkit_slot_since_seconds", "Seconds since the slot last went up or down.", |m, now| m.st.as_ref().map(|s| s.secs_since(now) as f64)),
    ("svkit_slot_uptime_seconds", "Seconds the slot's process has been up; 0 when down.", |m, now| m.st.as_ref().map(|s| if s.up { s.secs_since(now) as f64 } else { 0.0 })),
    ("svkit_slot_state_change_timestamp_seconds", "Unix time the slot last went up or down.", |m, _| m.st.as_ref().map(|s| secs(s.since))),
    ("svkit_slot_last_exit_code", "Exit code of the slot's last death (128 + N when killed by signal N, as s6 records it); absent before the first.", |m, _| m.last_death.map(|d| f64::from(d.code))),
    ("svkit_slot_last_exit_signal", "Signal that killed the slot's process the last time it died, 0 if it exited; absent before the first death.", |m, _| m.last_death.map(|d| f64::from(d.signal))),
    ("svkit_slot_cpu_seconds_total", "CPU seconds (user and system) of the slot's program and every descendant, reaped children included; starts again with each run; absent when not running.", |m, _| m.usage.map(|u| u.cpu_seconds)),
    ("svkit_slot_memory_rss_bytes", "Resident memory of the slot's program and every descendant; absent when not running.", |m, _| m.usage.map(|u| u.rss_bytes as f64)),
    ("svkit_slot_next_run_timestamp_seconds", "Unix time a job runs next, while it waits for that tick; absent otherwise.", |m, _| m.v.job.as_ref().and_then(|j| j.next_run).map(secs)),
    ("svkit_slot_last_run_duration_seconds", "Seconds a job's last run took; absent before its first.", |m, _| m.v.job.as_ref().and_then(|j| j.last_run).map(|l| l.duration_ms as f64 / 1000.0)),
    ("svkit_slot_last_run_exit_code", "Exit code of a job's last run (128 + N when killed by signal N); absent before its first.", |m, _| m.v.job.as_ref().and_then(|j| j.last_run).map(|l| f64::from(if l.code == 256 { 128 + l.signal } else { l.code }))),
    ("svkit_slot_runs_skipped", "Ticks of a job skipped because a run still went on (one run at a time), since its first run recorded.", |m, _| m.v.job.as_ref().map(|j| j.last_run.map_or(0.0, |l| l.skipped as f64))),
    ("svkit_slot_processes", "Processes of the slot's program's tree; absent when not running.", |m, _| m.usage.map(|u| u.processes as f64)),
];

/// A label value, escaped as the format wants: `\`, `"` and newline.
fn label(v: &str) -> String {
    (v.replace('\\', "\\\\").replace('"', "\\\"")).replace('\n', "\\n")
}

/// The exposition of `slots` at `now`: every family's HELP and TYPE, then
/// its samples (a family with no sample keeps its HELP and TYPE).
pub fn exposition(slots: &[SlotMetrics], now: SystemTime) -> String {
    let mut out = String::new();
    for (name, help, value) in FAMILIES {
        let _ = writeln!(out, "# HELP {name} {help}");
        // The one counter says so by its name, as the format's names do.
        let kind = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for m in slots {
            if let Some(v) = value(m, now) {
                let _ = writeln!(out, "{name}{{slot=\"{}\"}} {v}", label(&m.name));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_absent_values_leave_no_sample() {
        assert_eq!(label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        let m = SlotMetrics {
            name: "x\"y".into(),
            st: None,
            v: Verdict {
                desired_up: true,
                ..Verdict::default()
            },
            last_death: None,
            logger: false,
            usage: None,
        };
        let text = exposition(&[m], UNIX_EPOCH);
        assert!(
            text.contains("svkit_slot_supervised{slot=\"x\\\"y\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("svkit_slot_desired_up{slot=\"x\\\"y\"} 1\n"),
            "{text}"
        );
        assert!(!text.contains("svkit_slot_deaths{"), "{text}");
        assert!(text.contains("# TYPE svkit_slot_deaths gauge\n"), "{text}");
        assert_eq!(text.matches("# HELP ").count(), FAMILIES.len());
    }
}
