//! The one duration syntax of every tool's argv: `500ms`, `3s`, `2m`
//! (fractions of a unit allowed down to whole milliseconds: `0.5s`). A bare number keeps the unit its option
//! always had, for the scripts written against it; `--help` names that
//! unit. At most a day: every wait is bounded, and a deadline past it
//! would only overflow the clock.

use std::time::Duration;

const DAY_MS: f64 = 86_400_000.0;

/// Parses `s` as a duration whose bare numbers are `bare_ms` ms each
/// (`bare` names that unit).
fn parse(s: &str, bare_ms: f64, bare: &str) -> Result<Duration, String> {
    let (num, unit_ms) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (s, bare_ms)
    };
    // Digits and one dot only: no sign, exponent, `inf` or spaces.
    let plain = !num.is_empty()
        && num.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && num.bytes().filter(|&b| b == b'.').count() <= 1
        && num != ".";
    match num.parse::<f64>() {
        // Whole milliseconds: the unit every wait counts in.
        Ok(v) if plain && v * unit_ms <= DAY_MS && (v * unit_ms - (v * unit_ms).round()).abs() < 1e-6 => {
            Ok(Duration::from_millis((v * unit_ms).round() as u64))
        }
        _ => Err(format!(
            "`{s}` is not a duration (500ms, 3s, 2m; a bare number is {bare}; whole milliseconds, at most a day)"
        )),
    }
}

/// clap's value parser for an option whose bare number is milliseconds.
pub fn millis(s: &str) -> Result<Duration, String> {
    parse(s, 1.0, "milliseconds")
}

/// clap's value parser for an option whose bare number is seconds.
pub fn secs(s: &str) -> Result<Duration, String> {
    parse(s, 1000.0, "seconds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_the_bare_ones() {
        let ms = Duration::from_millis;
        assert_eq!(millis("500"), Ok(ms(500)));
        assert_eq!(secs("3"), Ok(ms(3000)));
        assert_eq!(millis("500ms"), Ok(ms(500)));
        assert_eq!(secs("500ms"), Ok(ms(500)));
        assert_eq!(millis("3s"), Ok(ms(3000)));
        assert_eq!(millis("2m"), Ok(ms(120_000)));
        assert_eq!(secs("0.5"), Ok(ms(500)));
        assert_eq!(millis("1.5s"), Ok(ms(1500)));
        assert_eq!(millis("0"), Ok(ms(0)));
        assert_eq!(secs("0.29"), Ok(ms(290)));
        assert_eq!(millis("1.001s"), Ok(ms(1001)));
        assert_eq!(millis("24m").map(|d| d.as_secs()), Ok(1440));
    }

    #[test]
    fn anything_else_is_refused_with_the_bare_unit_named() {
        for bad in [
            "", "s", "ms", ".", "-1", "+1", "1e3", "inf", "NaN", " 1", "1 s", "1h", "1.2.3", "2mm",
            "25h", "1441m", "86400001", "1.5", "0.0001s",
        ] {
            let e = millis(bad).expect_err(bad);
            assert!(e.contains("a bare number is milliseconds"), "{bad}: {e}");
        }
        assert!(secs("86401").is_err());
        assert_eq!(secs("86400"), Ok(Duration::from_secs(86_400)));
        assert!(secs("x").unwrap_err().contains("a bare number is seconds"));
    }
}
