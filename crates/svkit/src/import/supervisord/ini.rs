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
use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::rc::Rc;

/// A key or value as written: a slice of its file's text, shared, or
/// text of its own where reading changed it (a lowercased key, a value
/// joined from several lines). A config holds thousands: a copy of each
/// cost more than reading them.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Slice(Rc<String>, u32, u32),
    Own(String),
}

impl Text {
    /// `text[start..end]`, shared.
    fn slice(text: &Rc<String>, start: usize, end: usize) -> Text {
        match (u32::try_from(start), u32::try_from(end)) {
            (Ok(s), Ok(e)) => Text(Repr::Slice(text.clone(), s, e)),
            _ => Text(Repr::Own(text[start..end].to_owned())),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Slice(t, s, e) => t.get(*s as usize..*e as usize).unwrap_or_default(),
            Repr::Own(s) => s,
        }
    }

    /// `more` after the text (which becomes text of its own).
    fn push(&mut self, more: &str) {
        match &mut self.0 {
            Repr::Own(s) => s.push_str(more),
            Repr::Slice(..) => self.0 = Repr::Own([self.as_str(), more].concat()),
        }
    }

    /// Drops trailing whitespace.
    fn trim_end(&mut self) {
        let keep = self.as_str().trim_end().len();
        match &mut self.0 {
            Repr::Slice(_, s, e) => *e = *s + keep as u32,
            Repr::Own(t) => t.truncate(keep),
        }
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Repr::Own(s.to_owned()))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

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
    /// Lines of earlier values of the same key in the same section, which
    /// this one replaced (as supervisord does: the last one wins).
    pub replaced: Vec<(Rc<Path>, u32)>,
}

/// One `[section]`, its keys in the order first written.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub file: Rc<Path>,
    pub line: u32,
    pub keys: Vec<(Key, Value)>,
}

impl Section {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.keys.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
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
#[derive(Debug, Default)]
pub struct Ini {
    pub sections: Vec<Section>,
    /// `[DEFAULT]`: every section's fallback.
    pub defaults: Vec<(Key, Value)>,
    /// Where each section is in `sections`.
    index: std::collections::HashMap<String, usize>,
}

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
        for (i, raw) in text.split('\n').enumerate() {
            let lineno = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let cut = comment_start(line);
            let value = line[..cut.unwrap_or(line.len())].trim();
            if value.is_empty() {
                // A blank line inside a value is kept (trimmed at its end
                // later), unless the line held a comment.
                if cut.is_none() && opt.is_some() {
                    blank += 1;
                }
                continue;
            }
            let cur_indent = line.len() - line.trim_start().len();
            if opt.is_some() && !matches!(cur, Cursor::None) && cur_indent > indent_level {
                if let Some(k) = opt {
                    let v = &mut self.list(&cur)[k].1.text;
                    (0..=blank).for_each(|_| v.push("\n"));
                    v.push(value);
                }
                blank = 0;
                continue;
            }
            self.finish(&cur, opt);
            blank = 0;
            indent_level = cur_indent;
            if let Some(header) = section_header(value) {
                cur = if header == "DEFAULT" {
                    Cursor::Defaults
                } else if let Some(&ix) = self.index.get(header) {
                    Cursor::Section(ix)
                } else {
                    self.index.insert(header.to_owned(), self.sections.len());
                    self.sections.push(Section {
                        name: header.to_owned(),
                        file: file.clone(),
                        line: lineno,
                        // Room for the keys a program usually has.
                        keys: Vec::with_capacity(16),
                    });
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
            let Some(sep) = value.bytes().position(|b| b == b'=' || b == b':') else {
                return Err(IniError {
                    line: lineno,
                    what: format!(
                        "`{value}` is neither a [section] header nor `key = value` (supervisord refuses the file)"
                    ),
                });
            };
            let key = value[..sep].trim_end();
            if key.is_empty() {
                return Err(IniError {
                    line: lineno,
                    what: "a value without a key (supervisord refuses the file)".into(),
                });
            }
            let key = match super::keys::interned(key) {
                Some(k) => Key::Borrowed(k),
                None => Key::Owned(key.to_lowercase()),
            };
            let v = value[sep + 1..].trim();
            let list = self.list(&cur);
            let fresh = Value {
                text: Text::slice(text, at(v), at(v) + v.len()),
                file: file.clone(),
                line: lineno,
                replaced: Vec::new(),
            };
            if let Some(k) = list.iter().position(|(n, _)| *n == key) {
                let old = std::mem::replace(&mut list[k].1, fresh);
                let mut replaced = old.replaced;
                replaced.push((old.file, old.line));
                list[k].1.replaced = replaced;
                opt = Some(k);
            } else {
                list.push((key, fresh));
                opt = Some(list.len() - 1);
            }
        }
        self.finish(&cur, opt);
        Ok(())
    }

    fn list(&mut self, cur: &Cursor) -> &mut Vec<(Key, Value)> {
        match cur {
            Cursor::Section(ix) => &mut self.sections[*ix].keys,
            // Only called with a cursor set: a key needs a section.
            Cursor::Defaults | Cursor::None => &mut self.defaults,
        }
    }

    /// A value is complete: drop the blank lines it gathered at its end.
    fn finish(&mut self, cur: &Cursor, opt: Option<usize>) {
        if let (Some(k), false) = (opt, matches!(cur, Cursor::None)) {
            self.list(cur)[k].1.text.trim_end();
        }
    }
}

/// Where a comment starts on `line`, if anywhere: a whole-line comment at
/// 0, else the first `;` or `#` at the line's start or after whitespace.
fn comment_start(line: &str) -> Option<usize> {
    let t = line.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return Some(0);
    }
    let b = line.as_bytes();
    (0..b.len())
        .find(|&i| (b[i] == b';' || b[i] == b'#') && (i == 0 || b[i - 1].is_ascii_whitespace()))
}

/// `[name]` (greedy up to the last `]`, text after it ignored, as
/// Python's `\[(?P<header>.+)\]` matches).
fn section_header(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('[')?;
    let end = rest.rfind(']')?;
    (end > 0).then(|| &rest[..end])
}
