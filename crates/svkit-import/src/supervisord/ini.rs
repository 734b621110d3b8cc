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

use std::path::Path;

use svkit::msg::At;

use crate::ImportError;

/// One `key = value`, where it was written.
#[derive(Clone, Debug)]
pub struct Value {
    pub text: String,
    pub at: At,
}

/// One `[section]`, its keys (lowercased) in the order first written.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub at: At,
    pub keys: Vec<(String, Value)>,
    /// Values that a later value of the same key replaced (as supervisord
    /// does: the last one wins), in the order replaced: the key's place in
    /// `keys`, and where the earlier value was written.
    pub replaced: Vec<(usize, At)>,
}

impl Section {
    fn new(name: &str, at: At) -> Section {
        let (name, keys, replaced) = (name.to_owned(), Vec::new(), Vec::new());
        Section {
            name,
            at,
            keys,
            replaced,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Writes `key`: a new key, or a new value of one written before. Its
    /// place in `keys`.
    fn set(&mut self, key: String, value: Value) -> usize {
        if let Some(k) = self.keys.iter().position(|(n, _)| *n == key) {
            let old = std::mem::replace(&mut self.keys[k].1, value);
            self.replaced.push((k, old.at));
            return k;
        }
        self.keys.push((key, value));
        self.keys.len() - 1
    }
}

/// Sections in the order first seen; merged across calls (an included
/// file adds to or overrides the sections read before it).
#[derive(Debug)]
pub struct Ini {
    pub sections: Vec<Section>,
    /// `[DEFAULT]`: every section's fallback.
    pub defaults: Section,
}

impl Default for Ini {
    fn default() -> Ini {
        let defaults = Section::new("DEFAULT", At::file(""));
        Ini {
            sections: Vec::new(),
            defaults,
        }
    }
}

impl Ini {
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The section a `[header]` opens (`None`: `[DEFAULT]`).
    fn open(&mut self, header: &str, at: At) -> Option<usize> {
        if header == "DEFAULT" {
            return None;
        }
        let found = self.sections.iter().position(|s| s.name == header);
        Some(found.unwrap_or_else(|| {
            self.sections.push(Section::new(header, at));
            self.sections.len() - 1
        }))
    }

    /// Reads one file's text into the sections.
    pub fn read(&mut self, file: &Path, text: &str) -> Result<(), ImportError> {
        // The section being written (`Some(None)`: `[DEFAULT]`), the key
        // being written (its index in its list), its indent, and the
        // blank lines after it, which are part of its value only if
        // another line of it follows.
        let mut cur: Option<Option<usize>> = None;
        let mut opt: Option<usize> = None;
        let mut indent_level = usize::MAX;
        let mut blank = 0;
        for (i, line) in text.split('\n').enumerate() {
            let lineno = i + 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            let body = line.trim_start();
            if body.is_empty() {
                // A blank line inside a value is kept (if another line of
                // the value follows).
                if opt.is_some() {
                    blank += 1;
                }
                continue;
            }
            if body.starts_with([';', '#']) {
                continue;
            }
            let value = body[..comment_at(body)].trim_end();
            let cur_indent = line.len() - body.len();
            if let (Some(c), Some(k)) = (cur, opt) {
                if cur_indent > indent_level {
                    let v = &mut self.sec(c).keys[k].1.text;
                    (0..=blank).for_each(|_| v.push('\n'));
                    v.push_str(value);
                    blank = 0;
                    continue;
                }
            }
            blank = 0;
            indent_level = cur_indent;
            if let Some(header) = section_header(value) {
                cur = Some(self.open(header, At::line(file, lineno)));
                opt = None;
                continue;
            }
            let err = |what: String| ImportError::new(At::line(file, lineno), what);
            let Some(c) = cur else {
                return Err(err(
                    "a key before any [section] header (supervisord refuses the file)".into(),
                ));
            };
            let Some(sep) = value.find(['=', ':']) else {
                return Err(err(format!(
                    "`{value}` is neither a [section] header nor `key = value` (supervisord refuses the file)"
                )));
            };
            let key = value[..sep].trim_end();
            if key.is_empty() {
                return Err(err(
                    "a value without a key (supervisord refuses the file)".into()
                ));
            }
            let fresh = Value {
                text: value[sep + 1..].trim().to_owned(),
                at: At::line(file, lineno),
            };
            opt = Some(self.sec(c).set(key.to_lowercase(), fresh));
        }
        Ok(())
    }

    fn sec(&mut self, cur: Option<usize>) -> &mut Section {
        match cur {
            Some(ix) => &mut self.sections[ix],
            None => &mut self.defaults,
        }
    }
}

/// Where an inline comment starts in a line's text (its end if none): the
/// first `;` or `#` after whitespace.
fn comment_at(body: &str) -> usize {
    let b = body.as_bytes();
    (1..b.len())
        .find(|&i| matches!(b[i], b';' | b'#') && b[i - 1].is_ascii_whitespace())
        .unwrap_or(b.len())
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

    fn read(text: &str) -> Result<Ini, ImportError> {
        let mut ini = Ini::default();
        ini.read(Path::new("t.conf"), text)?;
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
        let at = |s: &str, k: &str| ini.section(s).unwrap().get(k).unwrap().at.line.unwrap();
        assert_eq!((at("program:a", "url"), at("x", "k")), (11, 14));
        let e = read("[a]\nx ;= y\n").err().unwrap();
        assert_eq!(
            (e.at.line, e.what.starts_with("`x` is neither")),
            (Some(2), true)
        );
        assert_eq!(read("[a]\n = y\n").err().unwrap().at.line, Some(2));
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
        let replaced: Vec<_> = s
            .replaced
            .iter()
            .map(|(k, at)| (*k, at.line.unwrap()))
            .collect();
        assert_eq!(replaced, [(300, 302)]);
    }
}
