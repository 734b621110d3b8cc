//! A key's or value's text as an INI file holds it: a slice of the
//! file's text, shared, or text of its own.

use std::fmt;
use std::ops::Deref;
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
    pub(super) fn slice(text: &Rc<String>, start: usize, end: usize) -> Text {
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
    pub(super) fn push(&mut self, more: &str) {
        match &mut self.0 {
            Repr::Own(s) => s.push_str(more),
            Repr::Slice(..) => self.0 = Repr::Own([self.as_str(), more].concat()),
        }
    }
}

/// `s.trim_start()` (Unicode whitespace), without decoding a character
/// where the first one left after ASCII whitespace is printable ASCII,
/// as it nearly always is.
pub(super) fn trim_start(s: &str) -> &str {
    let t = s.trim_ascii_start();
    match t.as_bytes().first() {
        Some(b'!'..=b'~') | None => t,
        Some(_) => t.trim_start(),
    }
}

/// `s.trim_end()`, as [`trim_start`].
pub(super) fn trim_end(s: &str) -> &str {
    let t = s.trim_ascii_end();
    match t.as_bytes().last() {
        Some(b'!'..=b'~') | None => t,
        Some(_) => t.trim_end(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_as_str_trims() {
        for s in [
            "",
            " ",
            "a",
            " a b ",
            "\t\x0b a \x0b\t",
            "\u{3000}a\u{a0}",
            " \r\n\x0c",
            "\x01a\x01",
            "é ",
            " ~",
            "\u{85}x\u{2029}",
        ] {
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
        }
    }
}
