//! The liveness watcher's record in the slot dir ([`STATE_FILE`]): what it
//! last saw, `ok 0/3` or `failing 2/3: WHY`, one line. The watcher
//! (`crate::liveness`) writes it; status, metrics and health read it.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use super::end;

/// In the slot dir: `ok 0/3` or `failing 2/3: WHY`, one line.
pub use end::LIVENESS_FILE as STATE_FILE;

/// What [`STATE_FILE`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveState {
    pub failing: u32,
    pub of: u32,
    pub last_error: Option<String>,
}

/// Reads [`STATE_FILE`] of `slot` (None: no watcher wrote one).
pub fn read(slot: &Path) -> Option<LiveState> {
    let text = fs::read_to_string(slot.join(STATE_FILE)).ok()?;
    let line = text.lines().next()?;
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
pub fn write(slot: &Path, failing: u32, of: u32, why: Option<&str>) {
    let line = match why {
        None => format!("ok {failing}/{of}\n"),
        Some(w) => format!("failing {failing}/{of}: {}\n", w.replace('\n', " ")),
    };
    let tmp = slot.join(end::LIVENESS_TMP);
    let write = || -> io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(line.as_bytes())?;
        fs::rename(&tmp, slot.join(STATE_FILE))
    };
    let _ = write();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_reads_back() {
        let t = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(t.path()), None);
        write(t.path(), 0, 3, None);
        assert_eq!(
            read(t.path()),
            Some(LiveState {
                failing: 0,
                of: 3,
                last_error: None
            })
        );
        write(t.path(), 2, 3, Some("connection refused\nx"));
        let s = read(t.path()).expect("seen");
        assert_eq!((s.failing, s.of), (2, 3));
        assert_eq!(s.last_error.as_deref(), Some("connection refused x"));
    }
}
