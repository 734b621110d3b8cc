//! What `s6-svstat -o` prints, recomputed from a decoded status so that the
//! differential tests can compare field by field, and the bytes s6 writes.
// Each test file uses its own part of it.
#![allow(dead_code)]

use std::time::SystemTime;

use svkit::s6::status::{sig_name, LastExit, RawStatus, Status};
use svkit::s6::tai64::Tai64N;

// s6's status flags (s6-svstatus.h).
pub const FLAG_PAUSED: u8 = 1;
pub const FLAG_FINISHING: u8 = 2;
pub const FLAG_WANTUP: u8 = 4;
pub const FLAG_READY: u8 = 8;

/// The bytes s6 would write for `raw` (43 when `pgid` is set).
pub fn encode(raw: &RawStatus) -> Vec<u8> {
    let mut out = Vec::with_capacity(43);
    out.extend_from_slice(&raw.stamp.to_bytes());
    out.extend_from_slice(&raw.ready_stamp.to_bytes());
    out.extend_from_slice(&u64::from(raw.pid).to_be_bytes());
    if let Some(g) = raw.pgid {
        out.extend_from_slice(&u64::from(g).to_be_bytes());
    }
    out.extend_from_slice(&raw.wstat.to_be_bytes());
    out.push(
        [
            (raw.paused, FLAG_PAUSED),
            (raw.finishing, FLAG_FINISHING),
            (raw.want_up, FLAG_WANTUP),
            (raw.ready, FLAG_READY),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit),
    );
    out
}

/// Which s6-svstat to imitate: 2.13.2 started printing "not started yet"
/// (exitcode -1) and `paused` only for a live process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvstatFlavor {
    /// s6 2.11.0 through 2.13.1.
    Before2_13_2,
    /// s6 2.13.2 and later.
    Since2_13_2,
}

/// Field names in the order `svstat_fields` returns them, ready for
/// `s6-svstat -o` (joined with commas).
pub const SVSTAT_FIELDS: [&str; 13] = [
    "up",
    "wantedup",
    "normallyup",
    "ready",
    "paused",
    "pid",
    "exitcode",
    "signal",
    "signum",
    "updownsince",
    "readysince",
    "updownfor",
    "readyfor",
];

/// What `s6-svstat -o <SVSTAT_FIELDS>` prints for this state when its clock
/// reads `now`, field by field, reproducing s6-svstat.c's own rules (which
/// look at the raw flags, not at the derived fields of `Status`).
pub fn svstat_fields(
    st: &Status,
    now: SystemTime,
    flavor: SvstatFlavor,
) -> Vec<(&'static str, String)> {
    let raw = &st.raw;
    let modern = flavor == SvstatFlavor::Since2_13_2;
    // s6's notstartedyet macro exists only from 2.13.2, without the
    // stamp heuristic of RawStatus::never_started.
    let not_started = modern && raw.pid == 0 && !raw.finishing && raw.paused;
    let no_exit = raw.is_up() || not_started;
    let ws = LastExit::from_wstat(raw.wstat);
    let signum = match ws {
        LastExit::Signaled(s) if !no_exit => Some(s),
        _ => None,
    };
    let exitcode = match ws {
        LastExit::Exited(c) if !no_exit => i32::from(c),
        _ => -1,
    };
    let b = |v: bool| if v { "true" } else { "false" }.to_owned();
    let now_tai = Tai64N::from_wallclock(now);
    // s6-svstat replaces a future stamp by now, but not a future readystamp,
    // whose difference then wraps.
    let updownfor = st.secs_since(now);
    let readyfor = now_tai.map_or(0, |n| n.wrapping_sub(&raw.ready_stamp).0);
    let updownsince = match now_tai {
        Some(n) if n < raw.stamp => n,
        _ => raw.stamp,
    };
    vec![
        ("up", b(raw.is_up())),
        ("wantedup", b(raw.want_up)),
        ("normallyup", b(st.normally_up)),
        ("ready", b(raw.pid != 0 && raw.ready)),
        ("paused", b(raw.paused && (!modern || raw.pid != 0))),
        (
            "pid",
            if raw.is_up() {
                raw.pid.to_string()
            } else {
                "-1".to_owned()
            },
        ),
        ("exitcode", exitcode.to_string()),
        (
            "signal",
            signum.map_or_else(|| "NA".to_owned(), |s| format!("SIG{}", sig_name(s))),
        ),
        ("signum", signum.map_or(-1, i32::from).to_string()),
        ("updownsince", updownsince.to_string()),
        ("readysince", raw.ready_stamp.to_string()),
        ("updownfor", updownfor.to_string()),
        ("readyfor", readyfor.to_string()),
    ]
}
