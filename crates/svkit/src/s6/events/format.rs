//! An event as one line: JSON (schema in docs/svctl.md) or text.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::{Event, What};
use crate::s6::status::{sig_name, LastExit};

/// `2026-12-01T09:30:05.123456Z`: UTC, microseconds. Times before 1970
/// (a clock set to nonsense) print as the epoch.
pub fn utc_rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, dd) = civil(days);
    format!(
        "{y:04}-{m:02}-{dd:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Year, month, day of `days` since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days >= 0).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn last_exit_json(l: LastExit) -> Value {
    match l {
        LastExit::None => Value::Null,
        LastExit::Exited(c) => json!({ "code": c }),
        LastExit::Signaled(s) => json!({ "signal": format!("SIG{}", sig_name(s)), "signum": s }),
        LastExit::Other(w) => json!({ "wstat": w }),
    }
}

fn updown(b: bool) -> &'static str {
    if b {
        "up"
    } else {
        "down"
    }
}

/// The event as one JSON object, without the newline.
pub fn json_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let v = json!({
        "time": utc_rfc3339(e.time),
        "slot": e.slot,
        "event": e.what.as_str(),
        "s6": e.s6.map(|b| char::from(b).to_string()),
        "s6_time": e.s6_time().map(utc_rfc3339),
        "up": st.map(|s| s.up),
        "want": st.map(|s| updown(s.want_up)),
        "pid": st.and_then(|s| s.pid),
        "last_exit": st.map_or(Value::Null, |s| last_exit_json(s.last_exit)),
        "deaths": st.map(|s| s.deaths),
        "why": e.why,
    });
    v.to_string()
}

/// `TIME SLOT EVENT[ (detail)]`, e.g. `… gateway-a down (signal SIGKILL)`.
pub fn text_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let detail = match e.what {
        What::Up | What::Added => st.and_then(|s| s.pid).map(|p| format!(" (pid {p})")),
        What::Down | What::Done | What::Restarting | What::Stopped => {
            st.and_then(|s| match s.last_exit {
                LastExit::Exited(c) => Some(format!(" (exit {c})")),
                LastExit::Signaled(n) => Some(format!(" (signal SIG{})", sig_name(n))),
                LastExit::Other(w) => Some(format!(" (wait status {w})")),
                LastExit::None => None,
            })
        }
        What::Failed => e.why.as_ref().map(|w| format!(": {w}")),
        _ => None,
    };
    format!(
        "{} {} {}{}",
        utc_rfc3339(e.time),
        e.slot,
        e.what.as_str(),
        detail.unwrap_or_default()
    )
}
