//! The report's lines: one per distinct note. A note said the same way
//! about many programs of one file (a shared `startsecs`, a `priority`
//! each program has) is one line, at its first place, naming the other
//! lines: a thousand copies of one sentence hide the few that differ.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::Note;

/// Lines named in full after a grouped note's first; the rest are counted.
const NAMED: usize = 8;

/// The report lines of `notes`, in the order of each one's first note:
/// `FILE:LINE: KEY: why`, and for a note repeated at other lines of the
/// same file, ` (also at lines L2, L3, … and N more)` after it.
pub fn lines(notes: &[Note]) -> Vec<String> {
    // Each distinct note, with the other lines it was written at.
    let mut groups: Vec<(&Note, Vec<usize>)> = Vec::new();
    let mut at: HashMap<(&Path, &str, &str), usize> = HashMap::new();
    for n in notes {
        let Some(line) = n.at.line else {
            groups.push((n, Vec::new()));
            continue;
        };
        let next = groups.len();
        let g = *(at.entry((n.at.file.as_path(), n.key.as_str(), n.why.as_str()))).or_insert(next);
        if g == next {
            groups.push((n, Vec::new()));
        } else {
            groups[g].1.push(line);
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

#[cfg(test)]
mod tests {
    use super::*;
    use svkit::msg::At;

    fn note(file: &str, line: Option<usize>, key: &str, why: &str) -> Note {
        let at = At {
            line,
            ..At::file(file)
        };
        Note::new(at, key, why)
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
