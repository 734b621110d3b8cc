use super::*;

fn berlin() -> TimeZone {
    zone(Path::new("/"), Some("Europe/Berlin")).expect("the host has Europe/Berlin")
}

fn ts(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

/// The next `n` ticks of `cron` after `from`, as UTC text.
fn ticks(cron: &str, tz: &TimeZone, from: &str, n: usize) -> Vec<String> {
    let c = Cron::parse(cron).expect("valid cron");
    let mut t = ts(from);
    let mut out = Vec::new();
    for _ in 0..n {
        t = c.next(t, tz).expect("a next tick");
        out.push(t.to_string());
    }
    out
}

#[test]
fn steps_lists_and_ranges() {
    let utc = TimeZone::UTC;
    assert_eq!(
        ticks("*/20 * * * *", &utc, "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-01T00:20:00Z",
            "2026-01-01T00:40:00Z",
            "2026-01-01T01:00:00Z"
        ]
    );
    assert_eq!(
        ticks("5,35 9-10 * * *", &utc, "2026-01-01T09:06:00Z", 4),
        [
            "2026-01-01T09:35:00Z",
            "2026-01-01T10:05:00Z",
            "2026-01-01T10:35:00Z",
            "2026-01-02T09:05:00Z"
        ]
    );
    // A step over a range; a start with a step runs to the end.
    assert_eq!(
        ticks("0 8-18/5 * * *", &utc, "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-01T08:00:00Z",
            "2026-01-01T13:00:00Z",
            "2026-01-01T18:00:00Z"
        ]
    );
    assert_eq!(
        ticks("50/5 0 * * *", &utc, "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-01T00:50:00Z",
            "2026-01-01T00:55:00Z",
            "2026-01-02T00:50:00Z"
        ]
    );
    // Strictly after: a tick at `after` itself is not the next one.
    assert_eq!(
        ticks("0 * * * *", &utc, "2026-01-01T01:00:00Z", 1),
        ["2026-01-01T02:00:00Z"]
    );
}

#[test]
fn names_and_at_forms() {
    let utc = TimeZone::UTC;
    // 2026-01-01 is a Thursday.
    assert_eq!(
        ticks("30 6 * jan,Mar mon-wed", &utc, "2026-01-01T00:00:00Z", 2),
        ["2026-01-05T06:30:00Z", "2026-01-06T06:30:00Z"]
    );
    // Sunday is 0 and 7.
    assert_eq!(
        ticks("0 0 * * 7", &utc, "2026-01-01T00:00:00Z", 1),
        ticks("0 0 * * sun", &utc, "2026-01-01T00:00:00Z", 1)
    );
    assert_eq!(
        ticks("@daily", &utc, "2026-01-01T12:00:00Z", 1),
        ["2026-01-02T00:00:00Z"]
    );
    assert_eq!(
        ticks("@hourly", &utc, "2026-01-01T12:00:00Z", 1),
        ["2026-01-01T13:00:00Z"]
    );
    assert_eq!(
        ticks("@weekly", &utc, "2026-01-01T12:00:00Z", 1),
        ["2026-01-04T00:00:00Z"]
    );
    assert_eq!(
        ticks("@monthly", &utc, "2026-01-15T12:00:00Z", 1),
        ["2026-02-01T00:00:00Z"]
    );
    assert_eq!(
        ticks("@yearly", &utc, "2026-01-15T12:00:00Z", 1),
        ["2027-01-01T00:00:00Z"]
    );
}

#[test]
fn day_of_month_or_day_of_week() {
    let utc = TimeZone::UTC;
    // Both restricted: either matches (the 13th, or a Friday).
    assert_eq!(
        ticks("0 0 13 * fri", &utc, "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-02T00:00:00Z",
            "2026-01-09T00:00:00Z",
            "2026-01-13T00:00:00Z"
        ]
    );
    // One of them `*`: the other alone.
    assert_eq!(
        ticks("0 0 */10 * *", &utc, "2026-01-01T00:00:00Z", 3),
        [
            "2026-01-11T00:00:00Z",
            "2026-01-21T00:00:00Z",
            "2026-01-31T00:00:00Z"
        ]
    );
}

#[test]
fn month_ends_and_leap_years() {
    let utc = TimeZone::UTC;
    // The 31st skips the months without one.
    assert_eq!(
        ticks("0 0 31 * *", &utc, "2026-01-31T00:00:00Z", 3),
        [
            "2026-03-31T00:00:00Z",
            "2026-05-31T00:00:00Z",
            "2026-07-31T00:00:00Z"
        ]
    );
    // 29 February: leap years only (2100 is none).
    assert_eq!(
        ticks("0 0 29 2 *", &utc, "2026-01-01T00:00:00Z", 2),
        ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"]
    );
    assert_eq!(
        ticks("0 0 29 2 *", &utc, "2096-03-01T00:00:00Z", 1),
        ["2104-02-29T00:00:00Z"]
    );
    assert_eq!(
        ticks("59 23 28-31 2 *", &utc, "2028-02-28T23:59:00Z", 1),
        ["2028-02-29T23:59:00Z"]
    );
}

#[test]
fn spring_forward_runs_once_at_the_first_time_after_the_gap() {
    // Europe/Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
    let tz = berlin();
    assert_eq!(
        ticks("30 2 * * *", &tz, "2026-03-28T12:00:00Z", 3),
        [
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:30:00Z",
            "2026-03-31T00:30:00Z"
        ]
    );
    // Every minute of the missing hour: one run at 03:00, then on.
    assert_eq!(
        ticks("* 1-3 29 3 *", &tz, "2026-03-29T00:58:00Z", 3),
        [
            "2026-03-29T00:59:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T01:01:00Z"
        ]
    );
}

#[test]
fn fall_back_runs_once() {
    // Europe/Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC),
    // so 02:30 comes at 00:30 and again at 01:30 UTC.
    let tz = berlin();
    assert_eq!(
        ticks("30 2 * * *", &tz, "2026-10-24T12:00:00Z", 2),
        ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]
    );
    assert_eq!(
        ticks("0 * 25 10 *", &tz, "2026-10-24T23:30:00Z", 3),
        [
            "2026-10-25T00:00:00Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T03:00:00Z"
        ]
    );
    // Started in the repeated hour: the first of the two is past.
    assert_eq!(
        ticks("45 2 * * *", &tz, "2026-10-25T01:10:00Z", 1),
        ["2026-10-25T01:45:00Z"]
    );
}

#[test]
fn every_counts_from_its_anchor_and_a_clock_set_back_waits() {
    let w = When::Every(300);
    let anchor = ts("2026-01-01T00:00:00Z");
    let next = |after: &str| {
        w.next(ts(after), anchor, &TimeZone::UTC)
            .map(|t| t.to_string())
    };
    // A run's own length never shifts the ticks.
    assert_eq!(
        next("2026-01-01T00:00:00Z").as_deref(),
        Some("2026-01-01T00:05:00Z")
    );
    assert_eq!(
        next("2026-01-01T00:07:13Z").as_deref(),
        Some("2026-01-01T00:10:00Z")
    );
    // A clock set back before the anchor: the first tick after it.
    assert_eq!(
        next("2025-12-31T00:00:00Z").as_deref(),
        Some("2026-01-01T00:05:00Z")
    );
    // Cron: the caller asks after the last tick run, never before it, so a
    // clock set back runs nothing twice.
    let c = When::Cron(Cron::parse("0 3 * * *").expect("cron"));
    let last = ts("2026-01-02T03:00:00Z");
    let now = ts("2026-01-02T01:00:00Z");
    let after = now.max(last);
    assert_eq!(
        c.next(after, anchor, &TimeZone::UTC)
            .map(|t| t.to_string())
            .as_deref(),
        Some("2026-01-03T03:00:00Z")
    );
}

#[test]
fn bad_expressions_say_what_is_allowed() {
    let err = |s: &str| Cron::parse(s).expect_err(s);
    assert_eq!(
        err("0 0 30 2 *"),
        "`0 0 30 2 *` never fires: no chosen month has that day"
    );
    assert_eq!(
        err("0 0 31 4,6,9 *"),
        "`0 0 31 4,6,9 *` never fires: no chosen month has that day"
    );
    assert_eq!(err("60 * * * *"), "minute `60`: 60 is outside 0..59");
    assert_eq!(err("0 24 * * *"), "hour `24`: 24 is outside 0..23");
    assert_eq!(err("0 0 0 * *"), "day of month `0`: 0 is outside 1..31");
    assert_eq!(err("0 0 * 13 *"), "month `13`: 13 is outside 1..12");
    assert_eq!(err("0 0 * * 8"), "day of week `8`: 8 is outside 0..7");
    assert_eq!(
        err("0 0 * * * *"),
        "6 fields: expected 5 (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly"
    );
    assert_eq!(
        err("@reboot"),
        "`@reboot`: expected @hourly, @daily, @weekly, @monthly or @yearly"
    );
    assert_eq!(err("*/0 * * * *"), "minute `*/0`: step `0`: expected 1..59");
    assert_eq!(err("5-1 * * * *"), "minute `5-1`: range 5-1 runs backwards");
    assert_eq!(
        err("x * * * *"),
        "minute `x`: allowed: *, 0-59, ranges a-b, lists a,b and steps */n or a-b/n"
    );
    assert_eq!(
        err("0 0 * foo *"),
        "month `foo`: allowed: *, 1-12 or names (jan-dec), ranges a-b, lists a,b and steps */n or a-b/n"
    );
    // 29 February comes in leap years; 30 February never.
    assert!(Cron::parse("0 0 29 2 *").is_ok());
    // With a day of week too, either day matches: it fires.
    assert!(Cron::parse("0 0 30 2 mon").is_ok());
}

#[test]
fn zones_come_from_the_image() {
    let root = Path::new("/nonexistent");
    let e = zone(root, Some("Europe/Berlin")).expect_err("no zoneinfo there");
    assert!(
        e.starts_with("`Europe/Berlin`: no such timezone in /nonexistent/usr/share/zoneinfo"),
        "{e}"
    );
    for bad in ["../etc/passwd", "/etc/localtime", "Europe//Berlin", ""] {
        assert!(zone(Path::new("/"), Some(bad)).is_err(), "{bad}");
    }
    assert!(zone(Path::new("/"), Some("Europe/Berlin")).is_ok());
}

#[test]
fn local_time_is_the_images_localtime_without_tz() {
    if std::env::var_os("TZ").is_some() {
        return; // TZ wins, as in cron: this host's, not under test here
    }
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(t.path().join("etc")).expect("mkdir");
    std::fs::copy(
        "/usr/share/zoneinfo/Europe/Berlin",
        t.path().join("etc/localtime"),
    )
    .expect("copy");
    let tz = zone(t.path(), None).expect("local");
    assert_eq!(
        ticks("0 12 * * *", &tz, "2026-07-01T00:00:00Z", 1),
        ["2026-07-01T10:00:00Z"]
    );
    // No localtime at all: UTC.
    let utc = zone(Path::new("/nonexistent"), None).expect("utc");
    assert_eq!(
        ticks("0 12 * * *", &utc, "2026-07-01T00:00:00Z", 1),
        ["2026-07-01T12:00:00Z"]
    );
}
