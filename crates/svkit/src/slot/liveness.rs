//! The liveness watcher's record in the slot dir ([`STATE_FILE`]): the pid
//! it watches and what it last saw, `PID ok 0/3` or `PID failing 2/3: WHY`,
//! one line. The pid ties the record to one run of the slot: a record left
//! by an earlier run (its watcher gone, or the check since removed from the
//! config) says nothing about the program running now. The watcher
//! (`crate::liveness`) writes it; status, metrics and health read it.

use std::fs;
use std::path::Path;

use super::end;

/// In the slot dir: `PID ok 0/3` or `PID failing 2/3: WHY`, one line.
pub use end::LIVENESS_FILE as STATE_FILE;

/// What [`STATE_FILE`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveState {
    pub failing: u32,
    pub of: u32,
    pub last_error: Option<String>,
}

/// Reads [`STATE_FILE`] of `slot` as the watcher of `pid` wrote it (None:
/// no watcher of that process wrote one).
pub fn read(slot: &Path, pid: u32) -> Option<LiveState> {
    let text = fs::read_to_string(slot.join(STATE_FILE)).ok()?;
    let (of_pid, line) = text.lines().next()?.split_once(' ')?;
    if of_pid.parse::<u32>().ok()? != pid {
        return None;
    }
    let (head, why) = match line.split_once(": ") {
        Some((h, w)) => (h, Some(w.to_string())),
        None => (line, None),
    };
    let count = head.split_whitespace().nth(1)?;
    let (n, of) = count.split_once('/')?;
    Some(LiveState {
        failing: n.parse().ok()?,
        of: of.parse().ok()?,
        last_error: why,
    })
}

/// Best effort: a state that cannot be written changes nothing about the
/// checks themselves.
pub fn write(slot: &Path, pid: u32, failing: u32, of: u32, why: Option<&str>) {
    let line = match why {
        None => format!("{pid} ok {failing}/{of}\n"),
        Some(w) => format!("{pid} failing {failing}/{of}: {}\n", w.replace('\n', " ")),
    };
    let tmp = slot.join(end::LIVENESS_TMP);
    let _ = fs::write(&tmp, line).and_then(|()| fs::rename(&tmp, slot.join(STATE_FILE)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_reads_back_for_its_own_process_only() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(t.path(), 42), None);
        write(t.path(), 42, 0, 3, None);
        assert_eq!(
            read(t.path(), 42),
            Some(LiveState {
                failing: 0,
                of: 3,
                last_error: None
            })
        );
        write(t.path(), 42, 2, 3, Some("connection refused\nx"));
        let s = read(t.path(), 42).expect("seen");
        assert_eq!((s.failing, s.of), (2, 3));
        assert_eq!(s.last_error.as_deref(), Some("connection refused x"));
        // Another run's record, and records that are not one.
        assert_eq!(read(t.path(), 43), None);
        for junk in [
            "",
            "ok 0/3",
            "x ok 0/3",
            "42",
            "42 ok",
            "42 ok 1",
            "42 ok a/3",
        ] {
            std::fs::write(t.path().join(STATE_FILE), junk).expect("write");
            assert_eq!(read(t.path(), 42), None, "{junk:?}");
        }
    }
}
