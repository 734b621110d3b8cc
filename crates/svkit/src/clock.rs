//! Wall-clock times as text, one way for every line svkit prints with a
//! time on it (`svctl events`, the JSON log copy); and the one bounded
//! poll of what no event announces.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `2026-12-01T09:30:05.123456Z`: RFC 3339, UTC, microseconds. Times
/// before 1970 (a clock set to nonsense) print as the epoch.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let t = jiff::Timestamp::try_from(t.max(UNIX_EPOCH)).unwrap_or_default();
    format!("{t:.6}")
}

/// Polls `done` with a doubling pause (1 ms up to 50 ms) until it holds
/// or `limit` passes: whether it held.
pub fn poll_until(limit: Duration, done: impl FnMut() -> bool) -> bool {
    poll_by(Instant::now() + limit, Duration::from_millis(50), done)
}

/// Polls `done` until it holds or `deadline` passes, the pause doubling
/// from 1 ms up to `max_pause` (1 ms: a look every millisecond, where a
/// whole container waits on the answer): whether it held.
pub fn poll_by(deadline: Instant, max_pause: Duration, mut done: impl FnMut() -> bool) -> bool {
    let mut pause = Duration::from_millis(1).min(max_pause);
    loop {
        if done() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(max_pause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_match_the_calendar() {
        let at = |s: u64, us: u32| rfc3339_utc(UNIX_EPOCH + Duration::new(s, us * 1000));
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(at(1_709_251_199, 0), "2024-02-29T23:59:59.000000Z");
        assert_eq!(at(1_796_083_199, 999_999), "2026-11-30T23:59:59.999999Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000000Z"
        );
    }
}
