//! `svctl status` output: the table and the JSON document (schema in
//! docs/svctl.md), pure functions of a [`Snapshot`]'s rows and a clock
//! reading; and the last exit as text, for status and events alike.

use std::fmt::Write as _;
use std::time::SystemTime;

use crate::container::Supervision;
use serde_json::{json, Value};

pub use super::snapshot::{Row, Snapshot, State};
use crate::s6::status::{sig_name, LastExit, Status};

impl Snapshot {
    /// The whole document: `{"schema": 1, "slots": [...], "unknown": [...]}`.
    pub fn json(&self) -> String {
        let doc = json!({
            "schema": 1,
            "supervision": self.supervision.name(),
            "slots": self.rows.iter().map(|r| row_json(r, self.now)).collect::<Vec<_>>(),
            "unknown": self.unknown,
            "orphans": crate::state::orphans_json(&self.orphans),
        });
        format!("{doc}\n")
    }

    /// The table, and under it the line saying svkit-init runs the tree
    /// (s6-overlay's is the usual case, and says nothing); nothing when
    /// nothing asked for exists (the warnings say it all).
    pub fn text(&self, colour: bool) -> String {
        if self.rows.is_empty() && !self.unknown.is_empty() {
            return String::new();
        }
        let mut t = table(&self.rows, self.now, colour);
        if let Supervision::Init(pid) = &self.supervision {
            let _ = writeln!(
                t,
                "supervised by svkit-init (pid {pid}), not s6-overlay; scandir {}",
                self.scandir.display()
            );
        }
        t
    }
}

/// The last exit as text, `None` before the first: `exit 3`, `SIGTERM`,
/// `wstat N`; `long` (events) spells `signal SIGTERM`, `wait status N`.
pub fn last_exit(e: LastExit, long: bool) -> Option<String> {
    let sig = if long { "signal SIG" } else { "SIG" };
    let wstat = if long { "wait status" } else { "wstat" };
    match e {
        LastExit::None => None,
        LastExit::Exited(c) => Some(format!("exit {c}")),
        LastExit::Signaled(g) => Some(format!("{sig}{}", sig_name(g))),
        LastExit::Other(w) => Some(format!("{wstat} {w}")),
    }
}

/// `up` or `down`, as status and events spell a wanted state.
pub fn updown(b: bool) -> &'static str {
    if b {
        "up"
    } else {
        "down"
    }
}

/// One slot's JSON object.
pub fn row_json(r: &Row, now: SystemTime) -> Value {
    let st = r.st.as_ref();
    // Unknown, not false, when this user may not read it.
    let hidden = st.is_none() && r.unreadable.is_some();
    let known = |v: Value| if hidden { Value::Null } else { v };
    // Without a supervisor: false.
    let flag = |f: fn(&Status) -> bool| known(json!(st.is_some_and(f)));
    json!({
        "name": r.name,
        "svkit": r.ours,
        "supervised": known(json!(st.is_some())),
        "state": r.state().as_str(),
        "desired": updown(r.v.desired_up),
        "failed": known(json!(r.v.failed)),
        "why": known(json!(r.v.why)),
        "done": known(json!(r.v.done)),
        "ready": known(json!(r.v.ready)),
        "ready_overdue": known(json!(r.v.ready_overdue)),
        "waiting_for": known(json!(r.v.waiting)),
        "blocked_by": known(json!(r.v.blocked_by)),
        "liveness": r.v.live.as_ref().map(|l| json!({
            "failing": l.failing, "of": l.of, "last_error": l.last_error,
        })),
        "log_dir": r.log_dir,
        "stray_pid": r.v.stray,
        "status_unrecorded": r.v.unrecorded.map(|u| json!({
            "file_pid": u.file_pid,
            "written": u.written.map(crate::clock::rfc3339_utc),
        })),
        "foreground_pid": r.v.foreground,
        "log_fault": r.v.log.as_ref().map(|f| json!({"kind": f.kind(), "why": f.to_string()})),
        "unreadable": r.unreadable,
        "up": flag(|s| s.up),
        "want": st.map(|s| updown(s.want_up)),
        "normally": st.map(|s| updown(s.normally_up)),
        "notified": flag(|s| s.ready),
        "paused": flag(|s| s.paused),
        "finishing": flag(|s| s.finishing),
        "never_started": st.map(|s| s.never_started),
        "pid": st.and_then(|s| s.pid),
        "since_s": st.map(|s| r.secs_since(s, now)),
        "since_tai64n": st.map(|s| s.raw.stamp.to_string()),
        "ready_s": st.map(|s| s.secs_ready(now)),
        "ready_since_tai64n": st.map(|s| s.raw.ready_stamp.to_string()),
        "last_exit": st.map(|s| s.last_exit.json()),
        "deaths": st.map(|_| r.v.deaths),
        "schedule": r.v.job.as_ref().map(|j| j.schedule.as_str()),
        "next_run": r.v.job.as_ref().and_then(|j| j.next_run).map(crate::clock::rfc3339_utc),
        "last_run": r.v.job.as_ref().and_then(|j| j.last_run).map(|l| json!({
            "start": crate::clock::rfc3339_utc(super::job::at(l.start)),
            "duration_s": l.duration_ms as f64 / 1000.0,
            "exit": if l.code == 256 { json!(super::job::result(&l)) } else { json!(l.code) },
        })),
        "skipped": r.v.job.as_ref().map(|j| j.last_run.map_or(0, |l| l.skipped)),
        "usage": r.usage,
        "log_usage": r.log_usage,
    })
}

/// `4d03h`, `2h05m`, `5m03s`, `42s`.
pub fn human_secs(s: u64) -> String {
    let (d, h, m, sec) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    if d > 0 {
        format!("{d}d{h:02}h")
    } else if h > 0 {
        format!("{h}h{m:02}m")
    } else if m > 0 {
        format!("{m}m{sec:02}s")
    } else {
        format!("{sec}s")
    }
}

/// CPU time as `ps` would: `0.42s`, `12.3s`, then as [`human_secs`].
pub fn human_cpu(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.2}s")
    } else if s < 60.0 {
        format!("{s:.1}s")
    } else {
        human_secs(s as u64)
    }
}

/// Bytes in binary units, three digits at most: `980K`, `12.4M`, `1.2G`.
pub fn human_bytes(b: u64) -> String {
    let k = b as f64 / 1024.0;
    let (v, unit) = match k {
        k if k < 1000.0 => (k, "K"),
        k if k < 1000.0 * 1024.0 => (k / 1024.0, "M"),
        k => (k / (1024.0 * 1024.0), "G"),
    };
    if v < 10.0 && unit != "K" {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.0}{unit}")
    }
}

/// The UPTIME/EXIT column: uptime, else the last exit, and why.
pub fn info(r: &Row, now: SystemTime) -> String {
    let Some(s) = &r.st else {
        return match (&r.unreadable, r.missing) {
            (Some(_), _) => "permission denied",
            (None, true) => "declared, not in the scandir",
            (None, false) => "supervisor not running",
        }
        .into();
    };
    let t = human_secs(r.secs_since(s, now));
    if let Some(j) = &r.v.job {
        return job_info(j, s, now);
    }
    if let (true, Some(w)) = (s.up, &r.v.waiting) {
        let blocked = match r.v.blocked_by.join(", ") {
            b if b.is_empty() => b,
            b => format!(": {b} failed for good"),
        };
        return format!("waiting for {w}, {t}{blocked}");
    }
    if s.up {
        let t = match &r.v.live {
            Some(l) if l.failing > 0 => format!("{t}, unhealthy ({}/{})", l.failing, l.of),
            _ => t,
        };
        return if s.paused { format!("{t} (paused)") } else { t };
    }
    if s.finishing {
        return format!("finishing, {t}");
    }
    if let Some(pid) = r.v.foreground {
        return format!("its program runs in the foreground (pid {pid})");
    }
    let exit = last_exit(s.last_exit, false)
        .map_or_else(|| "not started yet".into(), |e| format!("{e}, {t} ago"));
    match &r.v.why {
        Some(why) if r.v.failed => format!("{exit}: {why}"),
        _ => exit,
    }
}

/// A job's UPTIME/EXIT: `next 03:00 (in 5h12m)` while it waits,
/// `running 12s` during a run, `paused` when stopped; then its last run,
/// `last ok 4.2s, 21h ago` or `last failed: exit 2, 21h ago`.
fn job_info(j: &super::job::JobState, s: &Status, now: SystemTime) -> String {
    let ago = |t: SystemTime| human_secs(now.duration_since(t).map_or(0, |d| d.as_secs()));
    let mut out = match (j.next_run, j.running_since) {
        (Some(next), _) => {
            let zone = crate::schedule::zone(std::path::Path::new("/"), None)
                .unwrap_or(jiff::tz::TimeZone::UTC);
            let dt = match jiff::Timestamp::try_from(next).map(|t| zone.to_datetime(t)) {
                Ok(t) if t.second() == 0 => t.strftime("%H:%M").to_string(),
                Ok(t) => t.strftime("%H:%M:%S").to_string(),
                Err(_) => "?".into(),
            };
            let left = human_secs(next.duration_since(now).map_or(0, |d| d.as_secs()));
            format!("next {dt} (in {left})")
        }
        (None, Some(t)) if s.up => format!("running {}", ago(t)),
        _ if s.up || j.between_runs => "starting".into(),
        _ => "paused".into(),
    };
    if let Some(l) = j.last_run {
        let ended = super::job::at(l.start) + std::time::Duration::from_millis(l.duration_ms);
        let took = super::job::secs(l.duration_ms);
        let how = if l.ok() {
            "ok".to_string()
        } else {
            format!("failed: {} after", super::job::result(&l))
        };
        let _ = write!(out, ", last {how} {took}, {} ago", ago(ended));
    }
    out
}

/// The READY column: the one rule of `health::ready`, `timeout` once
/// the readiness check gave up, `unhealthy` while its liveness check fails.
pub fn ready_cell(r: &Row, none: &'static str) -> &'static str {
    match &r.st {
        Some(s) if s.up && r.v.ready => "yes",
        Some(s) if s.up && r.v.unhealthy => "unhealthy",
        Some(s) if s.up && r.v.ready_overdue => "timeout",
        Some(s) if s.up => "no",
        _ => none,
    }
}

/// How a row should strike the eye, whatever paints it (the table's ANSI
/// colours, `svctl top`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// In its wanted state, up.
    Good,
    /// In its wanted state, not running (down, done, in the foreground).
    Quiet,
    /// Not in its wanted state yet (waiting, starting, stopping).
    Warn,
    /// Failed, unsupervised, missing, or its output lost.
    Bad,
}

pub fn tone(r: &Row) -> Tone {
    if r.v.log.is_some() {
        return Tone::Bad;
    }
    match r.state() {
        State::Up | State::Scheduled if r.in_wanted_state() => Tone::Good,
        State::Down | State::Done | State::Foreground if r.in_wanted_state() => Tone::Quiet,
        State::Failed | State::Unsupervised | State::Missing => Tone::Bad,
        _ => Tone::Warn,
    }
}

/// The aligned table, its header first; `colour` adds ANSI colours to
/// the STATE column.
pub fn table(rows: &[Row], now: SystemTime, colour: bool) -> String {
    let with_log = rows
        .iter()
        .any(|r| r.log_dir.is_some() || r.v.log.is_some());
    let head = "NAME STATE WANT PID CPU MEM UPTIME/EXIT READY DEATHS LOG".split(' ');
    let mut cells: Vec<Vec<String>> = vec![head
        .take(9 + usize::from(with_log))
        .map(String::from)
        .collect()];
    cells.extend(rows.iter().map(|r| {
        let s = r.st.as_ref();
        // Unknown to this user: `?`, not `-` (which means "none").
        let none = if r.unreadable.is_some() { "?" } else { "-" };
        let mut c = vec![
            r.name.clone(),
            r.state().as_str().to_string(),
            s.map_or(none, |s| updown(s.want_up)).to_string(),
            s.and_then(|s| s.pid)
                .map_or_else(|| none.into(), |p| p.to_string()),
            r.usage
                .map_or_else(|| none.into(), |u| human_cpu(u.cpu_seconds)),
            r.usage
                .map_or_else(|| none.into(), |u| human_bytes(u.rss_bytes)),
            info(r, now),
            ready_cell(r, none).into(),
            s.map_or_else(|| none.into(), |_| r.v.deaths.to_string()),
        ];
        if with_log {
            // The LOG column: the dir, after what is wrong with its logger.
            let dir = r.log_dir.as_deref().unwrap_or("-");
            c.push(
                r.v.log
                    .as_ref()
                    .map_or(dir.to_string(), |f| format!("{}! {dir}", f.words())),
            );
        }
        c
    }));
    let mut width = vec![0; cells[0].len()];
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let paints = rows.iter().map(|r| {
        colour.then(|| match tone(r) {
            Tone::Good => "\x1b[32m",
            Tone::Quiet => "\x1b[2m",
            Tone::Warn => "\x1b[33m",
            Tone::Bad => "\x1b[31m",
        })
    });
    let mut out = String::new();
    for (row, paint) in cells.iter().zip(std::iter::once(None).chain(paints)) {
        let last = row.len() - 1;
        for (i, (c, w)) in row.iter().zip(&width).enumerate() {
            match paint {
                Some(p) if i == 1 => {
                    let _ = write!(out, "{p}{c}\x1b[0m");
                }
                _ => out.push_str(c),
            }
            if i < last {
                out.push_str(&" ".repeat(w - c.chars().count() + 2));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::s6::status::{Death, RawStatus};
    use crate::s6::tai64::Tai64N;
    use crate::slot::health::{self, Verdict};
    use crate::slot::usage::Usage;
    use std::time::Duration;

    fn at(t: SystemTime) -> Tai64N {
        Tai64N::from_system_time(t).expect("stamp")
    }

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    fn raw(pid: u32, wstat: u16, want_up: bool, ready: bool, ago: u64) -> RawStatus {
        let t = at(now() - Duration::from_secs(ago));
        RawStatus {
            stamp: t,
            ready_stamp: t,
            pid,
            pgid: None,
            wstat,
            paused: false,
            finishing: false,
            want_up,
            ready,
        }
    }

    /// A row as `Slots::verdict` would make it: `v` says failed/done/overdue;
    /// ready follows the one rule (`health::ready`), here without notification
    /// unless the row is overdue.
    fn row(name: &str, r: RawStatus, v: Verdict, log: Option<&str>) -> Row {
        let st = Status::from_parts(r, true, 2);
        let ready = health::ready(&st, v.ready_overdue) && !v.unhealthy && v.waiting.is_none();
        // Two deaths in every tally, the last an exit 0: the done job's
        // completion, a death of every other slot.
        let tally = [Death { code: 1, signal: 0 }, Death { code: 0, signal: 0 }];
        let deaths = health::deaths(&tally, v.done);
        Row {
            name: name.into(),
            ours: true,
            st: Some(st),
            v: Verdict {
                desired_up: true,
                ready,
                deaths,
                ..v
            },
            log_dir: log.map(str::to_string),
            unreadable: None,
            missing: false,
            usage: None,
            log_usage: None,
        }
    }

    /// The JSON document of a snapshot of `rows`.
    fn json_doc(
        rows: &[Row],
        unknown: &[String],
        orphans: &[crate::state::Orphan],
        mode: &Supervision,
        now: SystemTime,
    ) -> String {
        Snapshot {
            scandir: "/run/service".into(),
            named: false,
            rows: rows.to_vec(),
            unknown: unknown.to_vec(),
            orphans: orphans.to_vec(),
            orphans_error: None,
            supervision: mode.clone(),
            now,
        }
        .json()
    }

    fn plain() -> Verdict {
        Verdict::default()
    }

    fn rows() -> Vec<Row> {
        let gw = row(
            "gateway-default",
            raw(4242, 0, true, true, 3723),
            plain(),
            Some("/data/logs/gw"),
        );
        let busy = Usage {
            cpu_seconds: 754.5,
            rss_bytes: 52_428_800,
            processes: 3,
            threads: 9,
        };
        vec![
            Row {
                usage: Some(busy),
                ..gw
            },
            // exit 1, waiting to be restarted
            row("dash", raw(0, 1 << 8, true, false, 5), plain(), None),
            // killed by SIGTERM after `s6-svc -d`
            row("worker", raw(0, 15, false, true, 61), plain(), None),
            // exit 78: permanent failure
            row(
                "broken",
                raw(0, 78 << 8, false, true, 10),
                Verdict {
                    failed: true,
                    why: Some("exited 78, a permanent exit code".into()),
                    ..plain()
                },
                None,
            ),
            // a clean exit kept down by on_clean_exit: stop
            row(
                "job",
                raw(0, 0, false, false, 20),
                Verdict {
                    done: true,
                    ..plain()
                },
                None,
            ),
            // up, no readiness notification: ready although s6's flag is not set
            row("plainup", raw(77, 0, true, false, 30), plain(), None),
            // up, its readiness check gave up
            row(
                "slow",
                raw(88, 0, true, false, 90),
                Verdict {
                    ready_overdue: true,
                    ..plain()
                },
                None,
            ),
            // up, its liveness check failing
            row(
                "sick",
                raw(99, 0, true, false, 40),
                Verdict {
                    unhealthy: true,
                    ..plain()
                },
                None,
            ),
            // its run waits for a dependency that failed for good
            row(
                "web",
                raw(100, 0, true, false, 50),
                Verdict {
                    waiting: Some("migrate (completed)".into()),
                    blocked_by: vec!["migrate".into()],
                    ..plain()
                },
                None,
            ),
            Row {
                name: "orphan".into(),
                ours: false,
                st: None,
                v: plain(),
                log_dir: None,
                unreadable: None,
                missing: false,
                usage: None,
                log_usage: None,
            },
        ]
    }

    #[test]
    fn table_is_aligned_without_colour() {
        let t = table(&rows(), now(), false);
        let expected = "\
NAME             STATE         WANT  PID   CPU     MEM  UPTIME/EXIT                                                    READY      DEATHS  LOG
gateway-default  up            up    4242  12m34s  50M  1h02m                                                          yes        2       /data/logs/gw
dash             down          up    -     -       -    exit 1, 5s ago                                                 -          2       -
worker           down          down  -     -       -    SIGTERM, 1m01s ago                                             -          2       -
broken           failed        down  -     -       -    exit 78, 10s ago: exited 78, a permanent exit code             -          2       -
job              done          down  -     -       -    exit 0, 20s ago                                                -          1       -
plainup          up            up    77    -       -    30s                                                            yes        2       -
slow             up            up    88    -       -    1m30s                                                          timeout    2       -
sick             up            up    99    -       -    40s                                                            unhealthy  2       -
web              waiting       up    100   -       -    waiting for migrate (completed), 50s: migrate failed for good  no         2       -
orphan           unsupervised  -     -     -       -    supervisor not running                                         -          -       -
";
        assert_eq!(t, expected);
        assert!(!t.contains('\x1b'));
    }

    #[test]
    fn colour_paints_only_the_state() {
        let t = table(&rows(), now(), true);
        assert!(t.contains("\x1b[32mup\x1b[0m"), "{t}");
        assert!(t.contains("\x1b[33mdown\x1b[0m"), "{t}");
        assert!(t.contains("\x1b[31mfailed\x1b[0m"), "{t}");
        assert!(t.contains("\x1b[2mdown\x1b[0m"), "{t}");
        let plain: String = t.replace("\x1b[32m", "").replace("\x1b[33m", "");
        assert!(plain.starts_with("NAME "));
    }

    #[test]
    fn no_log_column_without_log_dirs() {
        let mut r = rows();
        r[0].log_dir = None;
        let t = table(&r, now(), false);
        assert!(!t.contains("LOG"), "{t}");
        assert!(t.lines().all(|l| !l.ends_with(' ')), "{t:?}");
    }

    #[test]
    fn wanted_state_rules() {
        let r = rows();
        let ok: Vec<bool> = r.iter().map(Row::in_wanted_state).collect();
        assert_eq!(
            ok,
            [true, false, true, false, true, true, false, false, false, false]
        );
    }

    #[test]
    fn json_schema() {
        let doc: Value = serde_json::from_str(&json_doc(
            &rows(),
            &["nope".into()],
            &[],
            &Supervision::Overlay,
            now(),
        ))
        .expect("json");
        assert_eq!(doc["schema"], 1);
        assert_eq!(doc["unknown"], json!(["nope"]));
        assert_eq!(doc["orphans"], json!([]));
        let s = &doc["slots"];
        let gw = &s[0];
        assert_eq!(gw["name"], "gateway-default");
        assert_eq!(gw["state"], "up");
        assert_eq!(gw["up"], true);
        assert_eq!(gw["want"], "up");
        assert_eq!(gw["normally"], "up");
        assert_eq!(gw["desired"], "up");
        assert_eq!(gw["ready"], true);
        assert_eq!(gw["pid"], 4242);
        assert_eq!(gw["since_s"], 3723);
        assert_eq!(gw["ready_s"], 3723);
        assert_eq!(gw["last_exit"], Value::Null);
        assert_eq!(gw["deaths"], 2);
        assert_eq!(gw["failed"], false);
        assert_eq!(gw["log_dir"], "/data/logs/gw");
        assert_eq!(gw["svkit"], true);
        assert_eq!(gw["supervised"], true);
        let label = gw["since_tai64n"].as_str().expect("label");
        assert!(label.starts_with("@4000") && label.len() == 25, "{label}");
        assert_eq!(s[1]["last_exit"], json!({ "code": 1 }));
        assert_eq!(s[1]["pid"], Value::Null);
        assert_eq!(
            s[2]["last_exit"],
            json!({ "signal": "SIGTERM", "signum": 15 })
        );
        assert_eq!(s[3]["state"], "failed");
        assert_eq!(s[3]["failed"], true);
        assert_eq!(s[3]["why"], "exited 78, a permanent exit code");
        assert_eq!(s[4]["state"], "done");
        assert_eq!(s[4]["done"], true);
        assert_eq!(s[4]["failed"], false);
        assert_eq!(
            (&s[5]["ready"], &s[5]["notified"]),
            (&json!(true), &json!(false))
        );
        assert_eq!(s[6]["ready"], false);
        assert_eq!(s[6]["ready_overdue"], true);
        assert_eq!(s[4]["deaths"], 1, "a completion is not a death");
        assert_eq!(
            (&s[7]["ready"], &s[7]["state"]),
            (&json!(false), &json!("up"))
        );
        assert_eq!(s[8]["blocked_by"], json!(["migrate"]));
        let orphan = &s[9];
        assert_eq!(orphan["supervised"], false);
        assert_eq!(orphan["state"], "unsupervised");
        assert_eq!(orphan["want"], Value::Null);
        // Every object has the same keys, supervised or not.
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().expect("obj").keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(gw), keys(orphan));
        assert_eq!(keys(gw).len(), 39);
        assert_eq!(
            gw["usage"],
            json!({"cpu_seconds": 754.5, "rss_bytes": 52_428_800, "processes": 3, "threads": 9})
        );
        assert_eq!(s[1]["usage"], Value::Null);
    }

    /// A declared slot with no dir (a boot could not make it): a row that
    /// says so, never in its wanted state.
    #[test]
    fn missing_row() {
        let gone = Row {
            name: "gone".into(),
            ours: false,
            st: None,
            v: Verdict {
                desired_up: true,
                ..plain()
            },
            log_dir: Some("/ro/logs/gone".into()),
            unreadable: None,
            missing: true,
            usage: None,
            log_usage: None,
        };
        assert!(!gone.in_wanted_state());
        let t = table(std::slice::from_ref(&gone), now(), false);
        let expected = "\
NAME  STATE    WANT  PID  CPU  MEM  UPTIME/EXIT                   READY  DEATHS  LOG
gone  missing  -     -    -    -    declared, not in the scandir  -      -       /ro/logs/gone
";
        assert_eq!(t, expected);
        let doc: Value =
            serde_json::from_str(&json_doc(&[gone], &[], &[], &Supervision::Overlay, now()))
                .expect("json");
        assert_eq!(doc["slots"][0]["state"], "missing");
        assert_eq!(doc["slots"][0]["supervised"], false);
    }

    #[test]
    fn usage_in_few_characters() {
        assert_eq!(human_cpu(0.004), "0.00s");
        assert_eq!(human_cpu(9.994), "9.99s");
        assert_eq!(human_cpu(42.25), "42.2s");
        assert_eq!(human_cpu(3723.0), "1h02m");
        assert_eq!(human_bytes(0), "0K");
        assert_eq!(human_bytes(999 * 1024), "999K");
        assert_eq!(human_bytes(1000 * 1024), "1.0M");
        assert_eq!(human_bytes(52_428_800), "50M");
        assert_eq!(human_bytes(3 << 30), "3.0G");
        assert_eq!(human_bytes(u64::MAX), "17179869184G");
    }

    #[test]
    fn durations() {
        assert_eq!(human_secs(0), "0s");
        assert_eq!(human_secs(59), "59s");
        assert_eq!(human_secs(60), "1m00s");
        assert_eq!(human_secs(3600), "1h00m");
        assert_eq!(human_secs(86400 * 2 + 3600 * 5), "2d05h");
    }

    /// Another user's slot: a row that says so, `?` where a value is unknown
    /// (not `-`, which means none), null in JSON.
    #[test]
    fn unreadable_slot() {
        let r = Row {
            name: "other".into(),
            ours: true,
            st: None,
            v: Verdict {
                desired_up: true,
                ..plain()
            },
            log_dir: Some("/data/logs/other".into()),
            unreadable: Some(
                "unable to read /run/service/other/supervise/status: Permission denied".into(),
            ),
            missing: false,
            usage: None,
            log_usage: None,
        };
        assert!(!r.in_wanted_state());
        let t = table(std::slice::from_ref(&r), now(), false);
        let line = t.lines().nth(1).expect("row");
        let cells: Vec<&str> = line.split("  ").filter(|c| !c.is_empty()).collect();
        assert_eq!(
            cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
            [
                "other",
                "unreadable",
                "?",
                "?",
                "?",
                "?",
                "permission denied",
                "?",
                "?",
                "/data/logs/other"
            ],
            "{t}"
        );
        let j = row_json(&r, now());
        assert_eq!(j["state"], "unreadable");
        assert!(j["unreadable"]
            .as_str()
            .is_some_and(|s| s.ends_with("Permission denied")));
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().expect("obj").keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&j), keys(&row_json(&rows()[0], now())));
        for k in [
            "supervised",
            "failed",
            "up",
            "ready",
            "pid",
            "deaths",
            "last_exit",
        ] {
            assert!(j[k].is_null(), "{k}: {j}");
        }
        assert_eq!(j["desired"], "up");
        let j = row_json(&rows()[0], now());
        assert!(j["unreadable"].is_null(), "{j}");
    }

    /// A slot whose program runs in the foreground (an opt-out) is not up:
    /// status says what runs, and it is down as wanted; up beside that copy,
    /// it is not in its wanted state.
    #[test]
    fn a_slot_whose_program_runs_in_the_foreground() {
        let fg = |up_pid: u32, want_up: bool| {
            row(
                "worker",
                raw(up_pid, 0, want_up, false, 5),
                Verdict {
                    foreground: Some(77),
                    ..plain()
                },
                None,
            )
        };
        let down = fg(0, false);
        assert_eq!(down.state(), State::Foreground);
        assert!(down.in_wanted_state());
        let text = table(std::slice::from_ref(&down), now(), false);
        assert!(
            text.contains(
                "foreground  down  -    -    -    its program runs in the foreground (pid 77)"
            ),
            "{text}"
        );
        let json = row_json(&down, now());
        assert_eq!(
            (&json["state"], &json["foreground_pid"], &json["up"]),
            (&json!("foreground"), &json!(77), &json!(false))
        );
        let beside = fg(4242, true);
        assert_eq!(beside.state(), State::Up);
        assert!(!beside.in_wanted_state());
    }
}
