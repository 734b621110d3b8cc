//! The report's lines: one per distinct note. A note said the same way
//! about many programs of one file (a shared `startsecs`, a `priority`
//! each program has) is one line, at its first place, naming the other
//! lines: a thousand copies of one sentence hide the few that differ.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use super::Note;

/// Lines named in full after a grouped note's first; the rest are counted.
const NAMED: usize = 8;

/// The report lines of `notes`, in the order of each one's first note:
/// `FILE:LINE: KEY: why`, and for a note repeated at other lines of the
/// same file, ` (also at lines L2, L3, … and N more)` after it.
pub fn lines(notes: &[Note]) -> Vec<String> {
    // Each distinct note, with the other lines it was written at.
    let mut groups: Vec<(&Note, Vec<u32>)> = Vec::new();
    let mut at: HashMap<(&Path, &str, &str), usize, BuildHasherDefault<Mix>> =
        HashMap::with_capacity_and_hasher(notes.len(), BuildHasherDefault::default());
    for n in notes {
        let Some(line) = n.line else {
            groups.push((n, Vec::new()));
            continue;
        };
        match at.entry((n.file.as_path(), n.key.as_str(), n.why.as_str())) {
            std::collections::hash_map::Entry::Occupied(g) => groups[*g.get()].1.push(line),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(groups.len());
                groups.push((n, Vec::new()));
            }
        }
    }
    groups
        .into_iter()
        .map(|(n, more)| {
            let mut s = n.to_string();
            if more.is_empty() {
                return s;
            }
            let word = if more.len() == 1 { "line" } else { "lines" };
            let _ = write!(s, " (also at {word} ");
            for (i, l) in more.iter().take(NAMED).enumerate() {
                let sep = match i {
                    0 => "",
                    _ if i + 1 == more.len() => " and ",
                    _ => ", ",
                };
                let _ = write!(s, "{sep}{l}");
            }
            if more.len() > NAMED {
                let _ = write!(s, " and {} more", more.len() - NAMED);
            }
            s.push(')');
            s
        })
        .collect()
}

/// A multiply-rotate hash of 8 bytes at a time: a note is a few hundred
/// bytes, and std's SipHash of them cost more than all the rest of the
/// report. The notes are about the user's own files: there is no one to
/// resist a flood of colliding keys from.
#[derive(Default)]
struct Mix(u64);

impl Mix {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        for &b in words.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The table's place comes from the low bits, which a product
        // mixes least.
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn note(file: &str, line: Option<u32>, key: &str, why: &str) -> Note {
        Note {
            file: PathBuf::from(file),
            line,
            key: key.into(),
            why: why.into(),
        }
    }

    #[test]
    fn one_line_per_distinct_note() {
        let notes = [
            note("a.conf", Some(2), "nodaemon", "x"),
            note("a.conf", Some(9), "priority", "p"),
            note("a.conf", Some(12), "startsecs", "s 5"),
            note("a.conf", Some(20), "priority", "p"),
            note("b.conf", Some(3), "priority", "p"),
            note("a.conf", Some(25), "startsecs", "s 10"),
            note("a.conf", Some(30), "priority", "p"),
            note("a.conf", None, "x", "whole file"),
            note("a.conf", None, "x", "whole file"),
        ];
        assert_eq!(
            lines(&notes),
            [
                "a.conf:2: nodaemon: x",
                "a.conf:9: priority: p (also at lines 20 and 30)",
                "a.conf:12: startsecs: s 5",
                "b.conf:3: priority: p",
                "a.conf:25: startsecs: s 10",
                "a.conf: x: whole file",
                "a.conf: x: whole file",
            ]
        );
    }

    #[test]
    fn many_repeats_are_counted() {
        let notes: Vec<Note> = (1..=12)
            .map(|i| note("a.conf", Some(i * 10), "k", "w"))
            .collect();
        assert_eq!(
            lines(&notes),
            ["a.conf:10: k: w (also at lines 20, 30, 40, 50, 60, 70, 80, 90 and 3 more)"]
        );
        assert_eq!(lines(&notes[..2]), ["a.conf:10: k: w (also at line 20)"]);
    }
}
