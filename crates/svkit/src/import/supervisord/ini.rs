//! The INI dialect supervisord reads: Python's `RawConfigParser` as
//! supervisord configures it (`inline_comment_prefixes=(';', '#')`,
//! `strict=False`). Kept line for line so that every value can be located.
//!
//! - `;` and `#` start a comment line (after leading whitespace), and an
//!   inline comment when preceded by whitespace (or at the line's start);
//! - `key = value` or `key: value`, split at the first `=` or `:`; keys are
//!   lowercased, values stripped;
//! - a line indented deeper than its key's line continues the value (joined
//!   with `\n`); blank lines inside a value are kept, trailing ones dropped;
//! - a section or key seen again is merged: the later value wins;
//! - CRLF and a missing final newline read as LF and a final newline.

use std::borrow::Cow;
use std::path::Path;
use std::rc::Rc;

use super::keys;
pub use super::text::Text;
use super::text::{trim_end, trim_start};
use crate::import::hash::Map;

/// A key, lowercased: the name the importer knows it by (most keys), or
/// its own copy.
pub type Key = Cow<'static, str>;

/// One `key = value`, where it was written.
#[derive(Clone, Debug)]
pub struct Value {
    pub text: Text,
    /// Shared by every value and section of one file.
    pub file: Rc<Path>,
    pub line: u32,
}

/// In [`Section::at`]: a known key whose place is past what a `u8` holds
/// (after hundreds of others), found by name instead.
const FAR: u8 = u8::MAX;

/// One `[section]`, its keys in the order first written.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub file: Rc<Path>,
    pub line: u32,
    pub keys: Vec<(Key, Value)>,
    /// Values that a later value of the same key replaced (as supervisord
    /// does: the last one wins), in the order replaced: the key's place in
    /// `keys`, and where the earlier value was written.
    pub replaced: Vec<(usize, Rc<Path>, u32)>,
    /// For each key the importer knows ([`keys::id`]), its place in `keys`
    /// plus one (0: not written): every program looks up each of them,
    /// and a search by name cost more than all the rest of a lookup.
    at: [u8; keys::COUNT],
}

impl Section {
    fn new(name: String, file: Rc<Path>, line: u32) -> Section {
        Section {
            name,
            file,
            line,
            // Room for the keys a program usually has (trimmed to what
            // the section holds when it ends).
            keys: Vec::with_capacity(16),
            replaced: Vec::new(),
            at: [0; keys::COUNT],
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.lookup(key, keys::id(key))
    }

    /// [`Self::get`] for a key whose [`keys::id`] the caller has.
    #[inline]
    pub fn lookup(&self, key: &str, id: Option<usize>) -> Option<&Value> {
        self.place(key, id).map(|k| &self.keys[k].1)
    }

    #[inline]
    fn place(&self, key: &str, id: Option<usize>) -> Option<usize> {
        match id.map(|i| self.at[i]) {
            Some(0) => None,
            Some(FAR) | None => self.keys.iter().position(|(k, _)| *k == key),
            Some(p) => Some(usize::from(p) - 1),
        }
    }

    /// Writes `key` (whose [`keys::id`] is `id`): a new key, or a new value
    /// of one written before. Its place in `keys`.
    fn set(&mut self, key: Key, id: Option<usize>, value: Value) -> usize {
        if let Some(k) = self.place(&key, id) {
            let old = std::mem::replace(&mut self.keys[k].1, value);
            self.replaced.push((k, old.file, old.line));
            return k;
        }
        let k = self.keys.len();
        if let Some(i) = id {
            self.at[i] = u8::try_from(k + 1).unwrap_or(FAR);
        }
        self.keys.push((key, value));
        k
    }
}

/// A parse error, located.
#[derive(Debug)]
pub struct IniError {
    pub line: u32,
    pub what: String,
}

/// Sections in the order first seen; merged across calls (an included
/// file adds to or overrides the sections read before it).
#[derive(Debug)]
pub struct Ini {
    pub sections: Vec<Section>,
    /// `[DEFAULT]`: every section's fallback.
    pub defaults: Section,
    /// Where each section is in `sections`.
    index: Map<String, usize>,
}

impl Default for Ini {
    fn default() -> Ini {
        Ini {
            sections: Vec::new(),
            defaults: Section::new("DEFAULT".into(), Rc::from(Path::new("")), 0),
            index: Map::default(),
        }
    }
}

#[derive(Clone, Copy)]
enum Cursor {
    None,
    Section(usize),
    Defaults,
}

impl Ini {
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.index.get(name).map(|&i| &self.sections[i])
    }

    /// Reads one file's text into the sections (which share it).
    pub fn read(&mut self, file: &Path, text: &Rc<String>) -> Result<(), IniError> {
        let file: Rc<Path> = Rc::from(file);
        let mut cur = Cursor::None;
        // The key being written (its index in its list), its indent, and
        // the blank lines after it, which are part of its value only if
        // another line of it follows.
        let mut opt: Option<usize> = None;
        let mut indent_level = usize::MAX;
        let mut blank = 0;
        // Where a slice of `text` starts in it.
        let base = text.as_ptr() as usize;
        let at = |s: &str| s.as_ptr() as usize - base;
        let bytes = text.as_bytes();
        let mut next = 0;
        let mut lineno: u32 = 0;
        while next <= bytes.len() {
            let start = next;
            let (end, sep, cut) = line_at(text, start);
            next = end + 1;
            lineno = lineno.saturating_add(1);
            let end = match bytes.get(end.wrapping_sub(1)) {
                Some(b'\r') if end > start => end - 1,
                _ => end,
            };
            let line = &text[start..end];
            let body = trim_start(line);
            let Some(&first) = body.as_bytes().first() else {
                // A blank line inside a value is kept (if another line of
                // the value follows).
                if opt.is_some() {
                    blank += 1;
                }
                continue;
            };
            if first == b';' || first == b'#' {
                continue;
            }
            // Not empty: `body` starts with a character that is not blank
            // (and a comment starts after it).
            let body_at = end - body.len();
            let value = trim_end(&text[body_at..cut.unwrap_or(end)]);
            let sep = sep.and_then(|s| s.checked_sub(body_at));
            let cur_indent = line.len() - body.len();
            if opt.is_some() && !matches!(cur, Cursor::None) && cur_indent > indent_level {
                if let Some(k) = opt {
                    let v = &mut self.sec(cur).keys[k].1.text;
                    (0..=blank).for_each(|_| v.push("\n"));
                    v.push(value);
                }
                blank = 0;
                continue;
            }
            blank = 0;
            indent_level = cur_indent;
            if let Some(header) = section_header(value) {
                self.close(cur);
                cur = if header == "DEFAULT" {
                    Cursor::Defaults
                } else if let Some(&ix) = self.index.get(header) {
                    Cursor::Section(ix)
                } else {
                    self.index.insert(header.to_owned(), self.sections.len());
                    self.sections
                        .push(Section::new(header.to_owned(), file.clone(), lineno));
                    Cursor::Section(self.sections.len() - 1)
                };
                opt = None;
                continue;
            }
            if matches!(cur, Cursor::None) {
                return Err(IniError {
                    line: lineno,
                    what: "a key before any [section] header (supervisord refuses the file)".into(),
                });
            }
            let Some(sep) = sep.filter(|&s| s < value.len()) else {
                return Err(IniError {
                    line: lineno,
                    what: format!(
                        "`{value}` is neither a [section] header nor `key = value` (supervisord refuses the file)"
                    ),
                });
            };
            let key = trim_end(&value[..sep]);
            if key.is_empty() {
                return Err(IniError {
                    line: lineno,
                    what: "a value without a key (supervisord refuses the file)".into(),
                });
            }
            let (key, id) = match keys::id(key) {
                Some(i) => (Key::Borrowed(keys::NAMES[i]), Some(i)),
                None => {
                    let low = key.to_lowercase();
                    match keys::id(&low) {
                        Some(i) => (Key::Borrowed(keys::NAMES[i]), Some(i)),
                        None => (Key::Owned(low), None),
                    }
                }
            };
            let v = trim_start(trim_end(&value[sep + 1..]));
            let fresh = Value {
                text: Text::slice(text, at(v), at(v) + v.len()),
                file: file.clone(),
                line: lineno,
            };
            opt = Some(self.sec(cur).set(key, id, fresh));
        }
        self.close(cur);
        Ok(())
    }

    fn sec(&mut self, cur: Cursor) -> &mut Section {
        match cur {
            Cursor::Section(ix) => &mut self.sections[ix],
            // Only called with a cursor set: a key needs a section.
            Cursor::Defaults | Cursor::None => &mut self.defaults,
        }
    }

    /// A section's lines end (for now: a later file may add to it): its
    /// keys keep no spare room, which the next allocations take instead.
    fn close(&mut self, cur: Cursor) {
        if let Cursor::Section(ix) = cur {
            self.sections[ix].keys.shrink_to_fit();
        }
    }
}

/// The bytes [`line_at`] stops at.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'\n' as usize] = true;
    t[b';' as usize] = true;
    t[b'#' as usize] = true;
    t[b'=' as usize] = true;
    t[b':' as usize] = true;
    t
};

/// The line of `text` that starts at `start`, in one pass over its bytes:
/// where it ends (its `\n`, else the text's end), its first `=` or `:`
/// before a comment, and where a comment starts: the first `;` or `#` at
/// the line's start or after whitespace.
fn line_at(text: &str, start: usize) -> (usize, Option<usize>, Option<usize>) {
    let b = text.as_bytes();
    let mut sep = None;
    let mut i = start;
    loop {
        while i < b.len() && !SPECIAL[usize::from(b[i])] {
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            return (b.len(), sep, None);
        };
        match c {
            b'\n' => return (i, sep, None),
            b';' | b'#' if i == start || b[i - 1].is_ascii_whitespace() => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                return (end, sep, Some(i));
            }
            b'=' | b':' if sep.is_none() => sep = Some(i),
            _ => {}
        }
        i += 1;
    }
}

/// `[name]` (greedy up to the last `]`, text after it ignored, as
/// Python's `\[(?P<header>.+)\]` matches).
fn section_header(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('[')?;
    let end = rest.rfind(']')?;
    (end > 0).then(|| &rest[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn read(text: &str) -> Result<Ini, IniError> {
        let mut ini = Ini::default();
        ini.read(Path::new("t.conf"), &Rc::new(text.to_owned()))?;
        Ok(ini)
    }

    fn get<'a>(ini: &'a Ini, section: &str, key: &str) -> Option<&'a str> {
        ini.section(section)?.get(key).map(|v| v.text.as_str())
    }

    #[test]
    fn lines_as_supervisord_reads_them() {
        let ini = read(concat!(
            "; a comment\r\n",
            "[program:a]\r\n",
            "command = run -x;not-a-comment \t; a comment\r\n",
            "  # only a comment\n",
            "Directory: /srv ; a=b\n",
            "environment=A=1,\n",
            "\n",
            "   B=2 ; c\n",
            "\u{3000}C=3\n",
            "\n",
            "url = http://x:80/#frag\n",
            "#=x\n",
            "[x] after\n",
            "k=v",
        ))
        .unwrap();
        assert_eq!(
            get(&ini, "program:a", "command"),
            Some("run -x;not-a-comment")
        );
        assert_eq!(get(&ini, "program:a", "directory"), Some("/srv"));
        assert_eq!(
            get(&ini, "program:a", "environment"),
            Some("A=1,\n\nB=2\nC=3")
        );
        assert_eq!(get(&ini, "program:a", "url"), Some("http://x:80/#frag"));
        assert_eq!(get(&ini, "x", "k"), Some("v"));
        let at = |s: &str, k: &str| ini.section(s).unwrap().get(k).unwrap().line;
        assert_eq!((at("program:a", "url"), at("x", "k")), (11, 14));
        let e = read("[a]\nx ;= y\n").err().unwrap();
        assert_eq!((e.line, e.what.starts_with("`x` is neither")), (2, true));
        assert_eq!(read("[a]\n = y\n").err().unwrap().line, 2);
    }

    #[test]
    fn a_known_key_far_down_a_section_is_found_and_replaced() {
        let mut text = String::from("[program:a]\n");
        for i in 0..300 {
            text.push_str(&format!("k{i}=v\n"));
        }
        text.push_str("command=first\nCOMMAND = second\n");
        let ini = read(&text).unwrap();
        let s = ini.section("program:a").unwrap();
        assert_eq!(
            (s.keys.len(), get(&ini, "program:a", "command")),
            (301, Some("second"))
        );
        let replaced: Vec<_> = s.replaced.iter().map(|(k, _, l)| (*k, *l)).collect();
        assert_eq!(replaced, [(300, 302)]);
    }
}
