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
