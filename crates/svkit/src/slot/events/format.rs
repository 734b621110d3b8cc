//! An event as one line: JSON (schema in docs/svctl.md) or text.

use serde_json::{json, Value};

use super::{Event, What};
use crate::clock::rfc3339_utc;
use crate::s6::status::LastExit;
use crate::slot::status_fmt::{last_exit, updown};

/// The event as one JSON object, without the newline.
pub fn json_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let v = json!({
        "time": rfc3339_utc(e.time),
        "slot": e.slot,
        "event": e.what.as_str(),
        "s6": e.s6.map(|b| char::from(b).to_string()),
        "s6_time": e.s6_time().map(rfc3339_utc),
        "up": st.map(|s| s.up),
        "want": st.map(|s| updown(s.want_up)),
        "pid": st.and_then(|s| s.pid),
        "last_exit": st.map_or(Value::Null, |s| LastExit::json(s.last_exit)),
        "deaths": e.deaths,
        "why": e.why,
    });
    v.to_string()
}

/// `TIME SLOT EVENT[ (detail)]`, e.g. `… gateway-a down (signal SIGKILL)`.
pub fn text_line(e: &Event) -> String {
    let st = e.status.as_ref();
    let detail = match e.what {
        What::Up | What::Added => st.and_then(|s| s.pid).map(|p| format!(" (pid {p})")),
        What::Down | What::Done | What::Restarting | What::Stopped => st
            .and_then(|s| last_exit(s.last_exit, true))
            .map(|e| format!(" ({e})")),
        What::Failed | What::LogFailing => e.why.as_ref().map(|w| format!(": {w}")),
        _ => None,
    };
    format!(
        "{} {} {}{}",
        rfc3339_utc(e.time),
        e.slot,
        e.what.as_str(),
        detail.unwrap_or_default()
    )
}
