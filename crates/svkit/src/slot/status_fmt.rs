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
    /// The JSON document ([`json_doc`]).
    pub fn json(&self) -> String {
        let (rows, unknown, orphans) = (&self.rows, &self.unknown, &self.orphans);
        json_doc(rows, unknown, orphans, &self.supervision, self.now)
    }

    /// The table, and the supervision line under it; nothing when nothing
    /// asked for exists (the warnings say it all).
    pub fn text(&self, colour: bool) -> String {
        if self.rows.is_empty() && !self.unknown.is_empty() {
            return String::new();
        }
        let mut t = table(&self.rows, self.now, colour);
        t.extend(mode_line(&self.supervision, &self.scandir));
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
pub(super) fn updown(b: bool) -> &'static str {
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
    })
}

/// The whole document: `{"schema": 1, "slots": [...], "unknown": [...]}`.
pub fn json_doc(
    rows: &[Row],
    unknown: &[String],
    orphans: &[crate::state::Orphan],
    mode: &Supervision,
    now: SystemTime,
) -> String {
    let doc = json!({
        "schema": 1,
        "supervision": mode.name(),
        "slots": rows.iter().map(|r| row_json(r, now)).collect::<Vec<_>>(),
        "unknown": unknown,
        "orphans": crate::state::orphans_json(orphans),
    });
    format!("{doc}\n")
}

/// The line under the table when svkit-init runs the tree (s6-overlay's
/// is the usual case, and says nothing).
pub fn mode_line(mode: &Supervision, scandir: &std::path::Path) -> Option<String> {
    match mode {
        Supervision::Init(pid) => Some(format!(
            "supervised by svkit-init (pid {pid}), not s6-overlay; scandir {}\n",
            scandir.display()
        )),
        _ => None,
    }
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

/// The UPTIME/EXIT column.
fn info(r: &Row, now: SystemTime) -> String {
    if let (None, Some(_)) = (&r.st, &r.unreadable) {
        return "permission denied".into();
    }
    let Some(s) = &r.st else {
        if r.missing {
            return "declared, not in the scandir".into();
        }
        return "supervisor not running".into();
    };
    let t = human_secs(r.secs_since(s, now));
    if let (true, Some(w)) = (s.up, &r.v.waiting) {
        if !r.v.blocked_by.is_empty() {
            return format!(
                "waiting for {w}, {t}: {} failed for good",
                r.v.blocked_by.join(", ")
            );
        }
        return format!("waiting for {w}, {t}");
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

/// The LOG column: the dir, after what is wrong with its logger.
fn log_cell(r: &Row) -> String {
    let dir = r.log_dir.as_deref().unwrap_or("-");
    match &r.v.log {
        None => dir.to_string(),
        Some(f) => format!("{}! {dir}", f.kind().replace('_', " ")),
    }
}

/// The READY column: the one rule of `health::ready`, `timeout` once
/// the readiness check gave up, `unhealthy` while its liveness check fails.
fn ready_cell(r: &Row, none: &'static str) -> &'static str {
    match &r.st {
        Some(s) if s.up && r.v.ready => "yes",
        Some(s) if s.up && r.v.unhealthy => "unhealthy",
        Some(s) if s.up && r.v.ready_overdue => "timeout",
        Some(s) if s.up => "no",
        _ => none,
    }
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn colour_of(r: &Row) -> &'static str {
    if r.v.log.is_some() {
        return RED;
    }
    match r.state() {
        State::Up if r.in_wanted_state() => GREEN,
        State::Down | State::Done | State::Foreground if r.in_wanted_state() => DIM,
        State::Failed | State::Unsupervised | State::Missing => RED,
        State::Up
        | State::Down
        | State::Done
        | State::Foreground
        | State::Waiting
        | State::Unreadable => YELLOW,
    }
}

/// The aligned table; `colour` adds ANSI colours to the STATE column.
pub fn table(rows: &[Row], now: SystemTime, colour: bool) -> String {
    let with_log = rows
        .iter()
        .any(|r| r.log_dir.is_some() || r.v.log.is_some());
    let mut head = vec![
        "NAME",
        "STATE",
        "WANT",
        "PID",
        "UPTIME/EXIT",
        "READY",
        "DEATHS",
    ];
    if with_log {
        head.push("LOG");
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let s = r.st.as_ref();
            // Unknown to this user: `?`, not `-` (which means "none").
            let none = if r.unreadable.is_some() { "?" } else { "-" };
            let mut c = vec![
                r.name.clone(),
                r.state().as_str().to_string(),
                s.map_or(none, |s| updown(s.want_up)).to_string(),
                s.and_then(|s| s.pid)
                    .map_or_else(|| none.into(), |p| p.to_string()),
                info(r, now),
                ready_cell(r, none).into(),
                s.map_or_else(|| none.into(), |_| r.v.deaths.to_string()),
            ];
            if with_log {
                c.push(log_cell(r));
            }
            c
        })
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, row: &[String], paint: Option<&str>| {
        let last = row.len() - 1;
        for (i, (c, w)) in row.iter().zip(&width).enumerate() {
            let pad = w.saturating_sub(c.chars().count());
            match paint {
                Some(p) if i == 1 => {
                    let _ = write!(out, "{p}{c}{RESET}");
                }
                _ => out.push_str(c),
            }
            if i < last {
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push('\n');
    };
    let head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    line(&mut out, &head, None);
    for (r, c) in rows.iter().zip(&cells) {
        line(&mut out, c, colour.then(|| colour_of(r)));
    }
    out
}

#[cfg(test)]
#[path = "status_fmt_tests.rs"]
mod tests;
