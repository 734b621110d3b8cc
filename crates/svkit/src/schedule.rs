//! When a job runs: the five cron fields (`@daily` and friends too) or a
//! period (`every_s`), and the next tick after an instant, in a timezone
//! read from the image's own zoneinfo. Pure but for reading a zone file.
//!
//! Cron in local time, as cron users expect: a matching local time that
//! does not exist (spring forward) runs once, at the first time after the
//! gap; one that exists twice (fall back) runs once, at the first of them.
//! Day of month and day of week restrict together when one of them is
//! `*`, else either matches (as every cron does).

use std::path::Path;

use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

/// Where an image keeps its zone files.
pub const ZONEINFO: &str = "usr/share/zoneinfo";

/// A schedule's ticks: cron fields or a fixed period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum When {
    Cron(Cron),
    /// Seconds between ticks, counted from the schedule's start.
    Every(u32),
}

/// The five fields as sets of values (a bit each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    /// Minute, hour, day of month, month, day of week (0 = Sunday).
    bits: [u64; 5],
    /// Day of month or day of week written as `*...`: the days are then
    /// the other field's alone.
    dom_any: bool,
    dow_any: bool,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

impl Cron {
    /// Parses `m h dom mon dow` or an `@` name; the error says what is
    /// allowed. An expression no date can match (`0 0 30 2 *`) is refused.
    pub fn parse(s: &str) -> Result<Cron, String> {
        let s = match s.trim() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            t if t.starts_with('@') => {
                return Err(format!(
                    "`{t}`: expected @hourly, @daily, @weekly, @monthly or @yearly"
                ))
            }
            t => t,
        };
        let f: Vec<&str> = s.split_whitespace().collect();
        if f.len() != 5 {
            return Err(format!(
                "{} fields: expected 5 (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly",
                f.len()
            ));
        }
        let mut bits = [0u64; 5];
        for (i, ((name, lo, hi), text)) in FIELDS.iter().zip(&f).enumerate() {
            let names: &[&str] = match i {
                3 => &MONTHS,
                4 => &DAYS,
                _ => &[],
            };
            bits[i] = field(text, *lo, *hi, names).map_err(|e| format!("{name} `{text}`: {e}"))?;
        }
        // Sunday is 0 or 7.
        bits[4] = (bits[4] | bits[4] >> 7) & 0x7f;
        let c = Cron {
            bits,
            dom_any: f[2].starts_with('*'),
            dow_any: f[4].starts_with('*'),
        };
        // Only a day of month no chosen month has can never come (a leap
        // year has 29 February).
        let fits = (1..=12u8).any(|m| bits[3] >> m & 1 == 1 && bits[2].trailing_zeros() <= days(m));
        if c.dom_any || !c.dow_any || fits {
            Ok(c)
        } else {
            Err(format!("`{s}` never fires: no chosen month has that day"))
        }
    }

    fn day_matches(&self, d: Date) -> bool {
        let dom = self.bits[2] >> d.day() & 1 == 1;
        let dow = self.bits[4] >> d.weekday().to_sunday_zero_offset() & 1 == 1;
        match (self.dom_any, self.dow_any) {
            (false, false) => dom || dow,
            _ => dom && dow,
        }
    }

    /// The first tick after `after`, in `tz`; None only past year 9999.
    pub fn next(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        let start = tz.to_datetime(after);
        let mut dt = minute(start.date(), start.hour(), start.minute())?;
        dt = later(dt, 1)?;
        loop {
            let d = dt.date();
            if self.bits[3] >> d.month() & 1 == 0 {
                dt = d
                    .first_of_month()
                    .last_of_month()
                    .tomorrow()
                    .ok()?
                    .at(0, 0, 0, 0);
            } else if !self.day_matches(d) {
                dt = d.tomorrow().ok()?.at(0, 0, 0, 0);
            } else if self.bits[1] >> dt.hour() & 1 == 0 {
                dt = later(minute(d, dt.hour(), 0)?, 60)?;
            } else if self.bits[0] >> dt.minute() & 1 == 0 {
                dt = later(dt, 1)?;
            } else {
                match resolve(dt, tz, after) {
                    Some(t) => return Some(t),
                    None => dt = later(dt, 1)?,
                }
            }
        }
    }
}

/// Days in month `m` of a leap year.
fn days(m: u8) -> u32 {
    match m {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn minute(d: Date, h: i8, m: i8) -> Option<DateTime> {
    DateTime::new(d.year(), d.month(), d.day(), h, m, 0, 0).ok()
}

fn later(dt: DateTime, minutes: i64) -> Option<DateTime> {
    dt.checked_add(jiff::SignedDuration::from_mins(minutes))
        .ok()
}

/// The instant of local time `dt`, if after `after`: in a gap, the gap's
/// end; in a fold, the first of the two unless it is past.
fn resolve(dt: DateTime, tz: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    let at = |o: jiff::tz::Offset| o.to_timestamp(dt).ok();
    let t = match tz.to_ambiguous_timestamp(dt).offset() {
        AmbiguousOffset::Unambiguous { offset } => at(offset)?,
        AmbiguousOffset::Gap { after: o, .. } => {
            tz.following(at(o)?).next().map(|tr| tr.timestamp())?
        }
        AmbiguousOffset::Fold { before, after: o } => {
            Some(at(before)?).filter(|t| *t > after).or_else(|| at(o))?
        }
    };
    (t > after).then_some(t)
}

/// One comma-separated cron field as bits `lo..=hi`.
fn field(text: &str, lo: u32, hi: u32, names: &[&str]) -> Result<u64, String> {
    let allowed = || {
        let n = if names.is_empty() {
            String::new()
        } else {
            format!(" or names ({}-{})", names[0], names[names.len() - 1])
        };
        format!("allowed: *, {lo}-{hi}{n}, ranges a-b, lists a,b and steps */n or a-b/n")
    };
    let value = |s: &str| -> Result<u32, String> {
        let v = match names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            Some(i) => i as u32 + u32::from(names.len() == 12),
            None => s.parse::<u32>().map_err(|_| allowed())?,
        };
        if v < lo || v > hi {
            return Err(format!("{v} is outside {lo}..{hi}"));
        }
        Ok(v)
    };
    let mut bits = 0u64;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => match s.parse::<u32>() {
                Ok(s) if s >= 1 && s <= hi => (r, s),
                _ => return Err(format!("step `{s}`: expected 1..{hi}")),
            },
            None => (part, 1),
        };
        let (a, b) = match range.split_once('-') {
            _ if range == "*" => (lo, hi),
            Some((a, b)) => (value(a)?, value(b)?),
            // `a/n`: from a to the end.
            None if step > 1 => (value(range)?, hi),
            None => (value(range)?, value(range)?),
        };
        if a > b {
            return Err(format!("range {a}-{b} runs backwards"));
        }
        bits |= (a..=b).step_by(step as usize).fold(0u64, |m, v| m | 1 << v);
    }
    Ok(bits)
}

impl When {
    /// The first tick after `after`: cron in `tz`; a period counted from
    /// `anchor` (an earlier tick, or the schedule's start).
    pub fn next(&self, after: Timestamp, anchor: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        match self {
            When::Cron(c) => c.next(after, tz),
            When::Every(n) => {
                let n = i64::from(*n);
                let gone = (after.as_second() - anchor.as_second()).max(0);
                Timestamp::from_second(anchor.as_second() + (gone / n + 1) * n).ok()
            }
        }
    }
}

/// Spelled as a zone name: a relative path of plain components, no
/// spaces or controls (`Europe/Berlin`, `UTC`).
pub fn is_zone_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|c| c.is_ascii_graphic())
        && (name.split('/')).all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The container's local time, as cron and libc have it: `TZ` (a zone
/// name, `:NAME`, a zone file's path or a POSIX rule such as
/// `CET-1CEST,M3.5.0,M10.5.0/3`), else `/etc/localtime`, else UTC.
fn local(root: &Path) -> TimeZone {
    let file = |p: &Path| {
        std::fs::read(root.join(p))
            .ok()
            .and_then(|d| TimeZone::tzif("local", &d).ok())
    };
    if let Some(tz) = std::env::var("TZ").ok().filter(|t| !t.is_empty()) {
        let name = tz.trim_start_matches(':');
        let found = match name.strip_prefix('/') {
            Some(path) => file(Path::new(path)),
            None => zone(root, Some(name)).ok(),
        };
        if let Some(z) = found.or_else(|| TimeZone::posix(&tz).ok()) {
            return z;
        }
    }
    file(Path::new("etc/localtime")).unwrap_or(TimeZone::UTC)
}

/// The zone named `name` in the image whose root is `root` (its
/// `usr/share/zoneinfo`), or with no name the container's local time as
/// cron has it ([`local`]).
pub fn zone(root: &Path, name: Option<&str>) -> Result<TimeZone, String> {
    let Some(name) = name else {
        return Ok(local(root));
    };
    let path = root.join(ZONEINFO).join(name);
    let data = match std::fs::read(&path) {
        Ok(d) if is_zone_name(name) => d,
        _ => {
            return Err(format!(
                "`{name}`: no such timezone in {} (an IANA name such as Europe/Berlin; the image needs its zoneinfo, e.g. the tzdata package)",
                crate::msg::path(&root.join(ZONEINFO))
            ))
        }
    };
    TimeZone::tzif(name, &data).map_err(|e| format!("`{name}`: {e}"))
}

#[cfg(test)]
mod tests;
