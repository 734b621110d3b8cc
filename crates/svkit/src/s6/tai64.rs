//! TAI64N stamps as skalibs (and so s6) writes them: an 8-byte big-endian
//! TAI64 label followed by 4 big-endian bytes of nanoseconds.
//!
//! Offset between the label and unix time: skalibs converts the system clock
//! with `tai_from_utc`, i.e. `2^62 + unix + 10 + leap seconds so far`, unless
//! it was configured with `--enable-tai-clock` (then a flat `+ 10`). Neither
//! Debian's skalibs nor s6-overlay's build uses that option. Checked on this
//! machine (s6 2.11.3.2, libskarnet 2.13.1.1): a stamp written by s6-supervise
//! while `s6-svc -d` took effect fell inside the bracketing wall-clock reads
//! only with an offset of 37 s (10 + 27 leap seconds), not 10 or 36.
//!
//! skalibs' `sysclock_get` also adds 500 ns to every clock read (it rounds a
//! microsecond clock to its midpoint); `from_wallclock` mirrors that so that
//! durations computed here floor to the same seconds as s6-svstat's.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes in a packed TAI64N stamp.
pub const TAI64N_LEN: usize = 12;
/// TAI64 label of 1970-01-01 00:00:00 TAI.
pub const TAI64_BASE: u64 = 1 << 62;
/// TAI - UTC at the unix epoch, which skalibs adds on top of leap seconds.
pub const TAI_UTC_1970: u64 = 10;

const NANOS_PER_SEC: u32 = 1_000_000_000;

/// skalibs' leap second table (IERS list), as `label - 2^62 - 10` of each
/// inserted second: unix time of the following midnight plus the leaps
/// already inserted before it.
const LEAPS: [u64; 27] = [
    78796800, 94694401, 126230402, 157766403, 189302404, 220924805, 252460806, 283996807,
    315532808, 362793609, 394329610, 425865611, 489024012, 567993613, 631152014, 662688015,
    709948816, 741484817, 773020818, 820454419, 867715220, 915148821, 1136073622, 1230768023,
    1341100824, 1435708825, 1483228826,
];

/// A TAI64N stamp. Ordering is chronological.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tai64N {
    label: u64,
    nanos: u32,
}

/// Why bytes are not a TAI64N stamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tai64Error {
    /// Not exactly 12 bytes.
    #[error("bad TAI64N length {0} (expected 12)")]
    BadLength(usize),
    /// Nanoseconds field of 10^9 or more.
    #[error("bad TAI64N nanoseconds {0}")]
    BadNanos(u32),
}

impl Tai64N {
    /// `None` when `nanos` is not below 10^9.
    pub const fn new(label: u64, nanos: u32) -> Option<Tai64N> {
        if nanos < NANOS_PER_SEC {
            Some(Tai64N { label, nanos })
        } else {
            None
        }
    }

    /// The TAI64 label (seconds, with 2^62 at 1970-01-01 TAI).
    pub const fn label(&self) -> u64 {
        self.label
    }

    pub const fn nanos(&self) -> u32 {
        self.nanos
    }

    pub fn from_bytes(b: &[u8]) -> Result<Tai64N, Tai64Error> {
        let b: &[u8; TAI64N_LEN] = b.try_into().map_err(|_| Tai64Error::BadLength(b.len()))?;
        let label = u64::from_be_bytes(b[..8].try_into().unwrap_or_default());
        let nanos = u32::from_be_bytes(b[8..].try_into().unwrap_or_default());
        Tai64N::new(label, nanos).ok_or(Tai64Error::BadNanos(nanos))
    }

    pub fn to_bytes(&self) -> [u8; TAI64N_LEN] {
        let mut out = [0u8; TAI64N_LEN];
        out[..8].copy_from_slice(&self.label.to_be_bytes());
        out[8..].copy_from_slice(&self.nanos.to_be_bytes());
        out
    }

    /// UTC system time to TAI64N exactly as skalibs' `tai_from_utc` does it.
    /// `None` when the label would not fit in 64 bits.
    pub fn from_system_time(t: SystemTime) -> Option<Tai64N> {
        let (secs, nanos) = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (i128::from(d.as_secs()), d.subsec_nanos()),
            Err(e) => {
                let d = e.duration();
                // Floor towards the past so that nanos stay non-negative.
                match d.subsec_nanos() {
                    0 => (-i128::from(d.as_secs()), 0),
                    n => (-i128::from(d.as_secs()) - 1, NANOS_PER_SEC - n),
                }
            }
        };
        let mut u = u64::try_from(secs + i128::from(TAI64_BASE)).ok()?;
        // Labels below 2^62 predate every table entry, so they never match.
        for leap in LEAPS {
            if u < TAI64_BASE + leap {
                break;
            }
            u = u.checked_add(1)?;
        }
        Some(Tai64N {
            label: u.checked_add(TAI_UTC_1970)?,
            nanos,
        })
    }

    /// What skalibs' `tain_wallclock_read` stores when the clock reads `t`.
    pub fn from_wallclock(t: SystemTime) -> Option<Tai64N> {
        Tai64N::from_system_time(t)?.checked_add_nanos(500)
    }

    /// TAI64N to UTC system time as skalibs' `utc_from_tai` does it (an
    /// inserted leap second maps onto the following second). `None` when the
    /// label predates 1970-01-01 00:00:10 TAI by more than `SystemTime` holds.
    pub fn to_system_time(&self) -> Option<SystemTime> {
        let mut u = self.label.checked_sub(TAI_UTC_1970)?;
        let mut passed = 0u64;
        for leap in LEAPS {
            let leap = TAI64_BASE + leap;
            if u < leap {
                break;
            }
            if u != leap {
                passed += 1;
            }
        }
        u -= passed;
        let at = match u.checked_sub(TAI64_BASE) {
            Some(s) => UNIX_EPOCH.checked_add(Duration::from_secs(s)),
            None => UNIX_EPOCH.checked_sub(Duration::from_secs(TAI64_BASE - u)),
        };
        at?.checked_add(Duration::from_nanos(u64::from(self.nanos)))
    }

    pub fn checked_add_nanos(&self, n: u32) -> Option<Tai64N> {
        let total = u64::from(self.nanos) + u64::from(n);
        let carry = total / u64::from(NANOS_PER_SEC);
        Some(Tai64N {
            label: self.label.checked_add(carry)?,
            // Remainder of a division by 10^9 always fits.
            nanos: (total % u64::from(NANOS_PER_SEC)) as u32,
        })
    }

    /// skalibs' `tain_sub`: `self - earlier` with the seconds wrapping
    /// modulo 2^64, so a later `earlier` gives a huge value as s6 prints it.
    pub fn wrapping_sub(&self, earlier: &Tai64N) -> (u64, u32) {
        let mut secs = self.label.wrapping_sub(earlier.label);
        let nanos = if self.nanos >= earlier.nanos {
            self.nanos - earlier.nanos
        } else {
            secs = secs.wrapping_sub(1);
            NANOS_PER_SEC - (earlier.nanos - self.nanos)
        };
        (secs, nanos)
    }
}

/// skalibs' `timestamp_fmt`: `@` and 24 lowercase hex digits.
impl fmt::Display for Tai64N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{:016x}{:08x}", self.label, self.nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, nanos: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, nanos)
    }

    #[test]
    fn bytes_round_trip_and_errors() {
        let b = [
            0x40, 0, 0, 0, 0x6b, 0x0d, 0x08, 0x36, 0x31, 0xe5, 0x46, 0x27,
        ];
        let t = Tai64N::from_bytes(&b).unwrap();
        assert_eq!(t.label(), 0x4000_0000_6b0d_0836);
        assert_eq!(t.nanos(), 0x31e5_4627);
        assert_eq!(t.to_bytes(), b);
        assert_eq!(t.to_string(), "@400000006b0d083631e54627");
        assert_eq!(Tai64N::from_bytes(&b[..11]), Err(Tai64Error::BadLength(11)));
        let mut bad = b;
        bad[8..].copy_from_slice(&1_000_000_000u32.to_be_bytes());
        assert_eq!(
            Tai64N::from_bytes(&bad),
            Err(Tai64Error::BadNanos(1_000_000_000))
        );
    }

    #[test]
    fn offset_is_ten_plus_leap_seconds() {
        assert_eq!(
            Tai64N::from_system_time(UNIX_EPOCH).unwrap().label(),
            TAI64_BASE + 10
        );
        // Just before and at the first leap (1972-07-01).
        let before = Tai64N::from_system_time(at(78796799, 0)).unwrap();
        assert_eq!(before.label(), TAI64_BASE + 78796799 + 10);
        let after = Tai64N::from_system_time(at(78796800, 0)).unwrap();
        assert_eq!(after.label(), TAI64_BASE + 78796800 + 11);
        // The value seen from s6 2.11 on this machine in 2026: +37.
        let now = Tai64N::from_system_time(at(1_796_016_145, 837_108_787)).unwrap();
        assert_eq!(now.label(), 0x4000_0000_6b0d_0836);
        assert_eq!(now.checked_add_nanos(500).unwrap().nanos(), 0x31e5_4627);
    }

    #[test]
    fn system_time_round_trips() {
        for secs in [
            0,
            1,
            78796799,
            78796800,
            78796801,
            1483228799,
            1483228800,
            1_796_016_145,
        ] {
            for nanos in [0, 1, 999_999_999] {
                let t = at(secs, nanos);
                let tai = Tai64N::from_system_time(t).unwrap();
                assert_eq!(tai.to_system_time(), Some(t), "{secs}.{nanos}");
            }
        }
        let early = UNIX_EPOCH - Duration::new(5, 250);
        let tai = Tai64N::from_system_time(early).unwrap();
        assert_eq!(tai.label(), TAI64_BASE - 6 + 10);
        assert_eq!(tai.nanos(), 999_999_750);
        assert_eq!(tai.to_system_time(), Some(early));
    }

    #[test]
    fn inserted_leap_second_maps_to_next_second() {
        let leap = Tai64N::new(TAI64_BASE + 10 + 78796800, 0).unwrap();
        assert_eq!(leap.to_system_time(), Some(at(78796800, 0)));
        assert_eq!(Tai64N::new(3, 0).unwrap().to_system_time(), None);
    }

    #[test]
    fn wrapping_sub_matches_tain_sub() {
        let a = Tai64N::new(100, 100).unwrap();
        let b = Tai64N::new(90, 200).unwrap();
        assert_eq!(a.wrapping_sub(&b), (9, 999_999_900));
        assert_eq!(b.wrapping_sub(&a), (u64::MAX - 9, 100));
    }
}
