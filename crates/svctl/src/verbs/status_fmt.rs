//! `svctl status` output: the table and the JSON document (schema in
//! docs/svctl.md). Pure functions of the rows and a clock reading.

use std::fmt::Write as _;
use std::time::SystemTime;

use serde_json::{json, Value};
use svkit::s6::health;
use svkit::s6::status::{sig_name, LastExit, Status};

/// One slot as status shows it.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    /// Has the `.svkit` marker.
    pub ours: bool,
    /// None: no supervisor runs on the slot.
    pub st: Option<Status>,
    /// What svkit wants (remembered state, else no `down` file).
    pub desired_up: bool,
    pub failed: bool,
    pub log_dir: Option<String>,
    /// Declared in the config, no dir in the scandir
    /// (`health::declared_missing`).
    pub missing: bool,
}

/// The STATE column: failed wins over up and down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Missing,
    Unsupervised,
    Failed,
    Up,
    Down,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Missing => "missing",
            State::Unsupervised => "unsupervised",
            State::Failed => "failed",
            State::Up => "up",
            State::Down => "down",
        }
    }
}

impl Row {
    pub fn state(&self) -> State {
        match &self.st {
            None if self.missing => State::Missing,
            None => State::Unsupervised,
            Some(_) if self.failed => State::Failed,
            Some(s) if s.up => State::Up,
            Some(_) => State::Down,
        }
    }

    /// The LSB "running as it should": see `health::in_wanted_state`.
    pub fn in_wanted_state(&self) -> bool {
        health::in_wanted_state(self.st.as_ref(), self.failed)
    }
}

fn updown(b: bool) -> &'static str {
    if b {
        "up"
    } else {
        "down"
    }
}

fn last_exit_json(l: LastExit) -> Value {
    match l {
        LastExit::None => Value::Null,
        LastExit::Exited(c) => json!({ "code": c }),
        LastExit::Signaled(s) => json!({ "signal": format!("SIG{}", sig_name(s)), "signum": s }),
        LastExit::Other(w) => json!({ "wstat": w }),
    }
}

/// One slot's JSON object.
pub fn row_json(r: &Row, now: SystemTime) -> Value {
    let base = json!({
        "name": r.name,
        "svkit": r.ours,
        "supervised": r.st.is_some(),
        "state": r.state().as_str(),
        "desired": updown(r.desired_up),
        "failed": r.failed,
        "log_dir": r.log_dir,
    });
    let Value::Object(mut o) = base else {
        return Value::Null;
    };
    let fields = match &r.st {
        Some(s) => json!({
            "up": s.up,
            "want": updown(s.want_up),
            "normally": updown(s.normally_up),
            "ready": s.ready,
            "paused": s.paused,
            "finishing": s.finishing,
            "never_started": s.never_started,
            "pid": s.pid,
            "since_s": s.secs_since(now),
            "since_tai64n": s.raw.stamp.to_string(),
            "ready_s": s.secs_ready(now),
            "ready_since_tai64n": s.raw.ready_stamp.to_string(),
            "last_exit": last_exit_json(s.last_exit),
            "deaths": s.deaths,
        }),
        None => json!({
            "up": false, "want": null, "normally": null, "ready": false,
            "paused": false, "finishing": false, "never_started": null,
            "pid": null, "since_s": null, "since_tai64n": null, "ready_s": null,
            "ready_since_tai64n": null, "last_exit": null, "deaths": null,
        }),
    };
    if let Value::Object(f) = fields {
        o.extend(f);
    }
    Value::Object(o)
}

/// The whole document: `{"schema": 1, "slots": [...], "unknown": [...]}`.
pub fn json_doc(rows: &[Row], unknown: &[String], now: SystemTime) -> String {
    let doc = json!({
        "schema": 1,
        "slots": rows.iter().map(|r| row_json(r, now)).collect::<Vec<_>>(),
        "unknown": unknown,
    });
    format!("{doc}\n")
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
    let Some(s) = &r.st else {
        if r.missing {
            return "declared, not in the scandir".into();
        }
        return "supervisor not running".into();
    };
    let t = human_secs(s.secs_since(now));
    if s.up {
        return if s.paused { format!("{t} (paused)") } else { t };
    }
    if s.finishing {
        return format!("finishing, {t}");
    }
    match s.last_exit {
        LastExit::None => "not started yet".into(),
        LastExit::Exited(c) => format!("exit {c}, {t} ago"),
        LastExit::Signaled(g) => format!("SIG{}, {t} ago", sig_name(g)),
        LastExit::Other(w) => format!("wstat {w}, {t} ago"),
    }
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn colour_of(r: &Row) -> &'static str {
    match r.state() {
        State::Up if r.in_wanted_state() => GREEN,
        State::Down if r.in_wanted_state() => DIM,
        State::Failed | State::Unsupervised | State::Missing => RED,
        State::Up | State::Down => YELLOW,
    }
}

/// The aligned table; `colour` adds ANSI colours to the STATE column.
pub fn table(rows: &[Row], now: SystemTime, colour: bool) -> String {
    let with_log = rows.iter().any(|r| r.log_dir.is_some());
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
            let mut c = vec![
                r.name.clone(),
                r.state().as_str().to_string(),
                s.map_or("-", |s| updown(s.want_up)).to_string(),
                s.and_then(|s| s.pid)
                    .map_or_else(|| "-".into(), |p| p.to_string()),
                info(r, now),
                match s {
                    Some(s) if s.up => if s.ready { "yes" } else { "no" }.to_string(),
                    _ => "-".into(),
                },
                s.map_or_else(|| "-".into(), |s| s.deaths.to_string()),
            ];
            if with_log {
                c.push(r.log_dir.clone().unwrap_or_else(|| "-".into()));
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

/// Colour only on a terminal, and never with NO_COLOR set (no-color.org).
pub fn want_colour() -> bool {
    use std::io::IsTerminal as _;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}

#[cfg(test)]
#[path = "status_fmt_tests.rs"]
mod tests;
