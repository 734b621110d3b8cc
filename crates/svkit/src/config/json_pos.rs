//! A small JSON position scanner.
//!
//! serde_json tells us *where* a syntax error is, but once a document parsed
//! we want positions for semantic errors too (`slots[2].log.keep` at 14:20),
//! and we want to re-parse each slot from its own text span so that one bad
//! slot does not hide the errors of the next. This scanner runs only on text
//! serde_json already accepted, so it can stay simple: it records the byte
//! span of every value and of every object key, keyed by field path.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// One step of a field path. Keys svkit itself names are borrowed: a path
/// is built for every field of every slot, and used only on an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(Cow<'static, str>),
    Index(usize),
}

/// A field path such as `slots[1].log.keep`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }
    pub fn key(&self, k: impl Into<Cow<'static, str>>) -> Self {
        let mut v = Vec::with_capacity(self.0.len() + 1);
        v.extend_from_slice(&self.0);
        v.push(Seg::Key(k.into()));
        FieldPath(v)
    }
    pub fn index(&self, i: usize) -> Self {
        let mut v = Vec::with_capacity(self.0.len() + 1);
        v.extend_from_slice(&self.0);
        v.push(Seg::Index(i));
        FieldPath(v)
    }
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}]")?,
                Seg::Key(k) => {
                    let plain = !k.is_empty()
                        && k.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                    if plain {
                        if i > 0 {
                            f.write_str(".")?;
                        }
                        f.write_str(k)?;
                    } else {
                        // Keys with odd characters are shown JSON-quoted so the
                        // path stays unambiguous.
                        let q = serde_json::to_string(k).unwrap_or_else(|_| format!("{k:?}"));
                        write!(f, "[{q}]")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Byte spans of one value (and of its key when it is an object member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub key_start: Option<usize>,
}

/// A 1-based line and byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Every value's span in one document, plus keys seen twice in one object.
/// Every lookup is by hash or by a walk down from the root, never a pass
/// over the whole document: a config of 100,000 values has errors found
/// and placed as fast as one of ten.
#[derive(Debug, Default)]
pub struct Spans {
    map: HashMap<FieldPath, Span>,
    /// Each object's or array's members, in document order (a key given
    /// twice: once).
    children: HashMap<FieldPath, Vec<FieldPath>>,
    /// (path of the repeated member, offset of its second key)
    pub duplicate_keys: Vec<(FieldPath, usize)>,
    line_starts: Vec<usize>,
}

impl Spans {
    /// Scan `text`, which must already be valid JSON (serde_json said so).
    pub fn scan(text: &str) -> Spans {
        let mut s = Scanner {
            b: text.as_bytes(),
            i: 0,
            out: Spans::default(),
        };
        s.out.line_starts.push(0);
        for (i, c) in text.bytes().enumerate() {
            if c == b'\n' {
                s.out.line_starts.push(i + 1);
            }
        }
        s.ws();
        s.value(FieldPath::root(), None);
        s.out
    }

    pub fn get(&self, path: &FieldPath) -> Option<Span> {
        self.map.get(path).copied()
    }

    /// Position of a value (or of its key, which is where a reader looks
    /// for an unknown or misplaced member).
    pub fn pos_of(&self, path: &FieldPath) -> Option<Pos> {
        self.get(path)
            .map(|s| self.pos(s.key_start.unwrap_or(s.start)))
    }

    pub fn pos(&self, offset: usize) -> Pos {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        Pos {
            line: line + 1,
            col: offset - start + 1,
        }
    }

    pub fn offset_of(&self, pos: Pos) -> usize {
        let start = self
            .line_starts
            .get(pos.line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        start + pos.col.saturating_sub(1)
    }

    /// The members of the object at `path`, in document order.
    pub fn members(&self, path: &FieldPath) -> Vec<(FieldPath, Span)> {
        (self.children.get(path).into_iter().flatten())
            .filter(|p| matches!(p.0.last(), Some(Seg::Key(_))))
            .filter_map(|p| self.get(p).map(|s| (p.clone(), s)))
            .collect()
    }

    /// The deepest value whose span contains `offset`: down from the root,
    /// each step a binary search among the members, which are in document
    /// order.
    pub fn path_at(&self, offset: usize) -> FieldPath {
        let contains = |s: Span| s.start <= offset && offset < s.end.max(s.start + 1);
        let mut at = FieldPath::root();
        while let Some(kids) = self.children.get(&at) {
            let n = kids.partition_point(|p| self.get(p).is_some_and(|s| s.start <= offset));
            match n.checked_sub(1).and_then(|i| kids.get(i)) {
                Some(p) if self.get(p).is_some_and(contains) => at = p.clone(),
                _ => break,
            }
        }
        at
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    out: Spans,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn record(&mut self, path: FieldPath, span: Span) {
        self.out.map.insert(path, span);
    }

    fn value(&mut self, path: FieldPath, key_start: Option<usize>) {
        let start = self.i;
        match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut seen: HashSet<String> = HashSet::new();
                let mut kids = Vec::new();
                loop {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            self.i += 1;
                            continue;
                        }
                        Some(b'"') => {
                            let ks = self.i;
                            let key = self.string();
                            self.ws();
                            if self.b.get(self.i) == Some(&b':') {
                                self.i += 1;
                            }
                            self.ws();
                            let child = path.key(key.clone());
                            if seen.contains(&key) {
                                self.out.duplicate_keys.push((child.clone(), ks));
                            } else {
                                seen.insert(key);
                                kids.push(child.clone());
                            }
                            self.value(child, Some(ks));
                        }
                        // Not reachable for valid JSON; stop instead of looping.
                        _ => break,
                    }
                }
                self.out.children.insert(path.clone(), kids);
            }
            Some(b'[') => {
                self.i += 1;
                let mut kids = Vec::new();
                loop {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            self.i += 1;
                        }
                        Some(_) => {
                            let child = path.index(kids.len());
                            kids.push(child.clone());
                            self.value(child, None);
                        }
                        None => break,
                    }
                }
                self.out.children.insert(path.clone(), kids);
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
            }
            None => {}
        }
        let span = Span {
            start,
            end: self.i,
            key_start,
        };
        self.record(path, span);
    }

    /// Consume a string literal and return its decoded value.
    fn string(&mut self) -> String {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        let end = self.i.min(self.b.len());
        let raw = std::str::from_utf8(&self.b[start..end]).unwrap_or("\"\"");
        serde_json::from_str::<String>(raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_paths() {
        let text = "{\n  \"slots\": [\n    {\"name\": \"a\", \"log\": {\"keep\": 3}}\n  ]\n}\n";
        let s = Spans::scan(text);
        let p = FieldPath::root()
            .key("slots")
            .index(0)
            .key("log")
            .key("keep");
        assert_eq!(p.to_string(), "slots[0].log.keep");
        let span = s.get(&p).unwrap();
        assert_eq!(&text[span.start..span.end], "3");
        assert_eq!(s.pos(span.start), Pos { line: 3, col: 35 });
        assert_eq!(s.path_at(span.start), p);
        assert_eq!(s.pos_of(&p), Some(Pos { line: 3, col: 27 }));
    }

    #[test]
    fn duplicate_keys_are_found() {
        let s = Spans::scan(r#"{"a": 1, "b": {"x": 1, "x": 2}, "a": 3}"#);
        let d: Vec<String> = s
            .duplicate_keys
            .iter()
            .map(|(p, _)| p.to_string())
            .collect();
        assert_eq!(d, vec!["b.x", "a"]);
    }

    #[test]
    fn odd_keys_are_quoted() {
        let p = FieldPath::root().key("env").key("A B");
        assert_eq!(p.to_string(), "env[\"A B\"]");
    }
}
