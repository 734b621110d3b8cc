//! Where each value of a config file is written.
//!
//! serde_json judges a file's syntax and says where it is wrong; once it
//! has accepted the text, we also want positions for semantic errors
//! (`slots[2].log.keep` at 14:20), and each slot's own text span, so that
//! it is deserialized alone and one bad slot does not hide the errors of
//! the next. [`Spans::scan`] has serde_json read the text, then walks it
//! once more: a small lenient scanner (it trusts serde_json about the
//! syntax) that records the byte span of every value and of its key, as a
//! tree a [`FieldPath`] walks down, plus the keys given twice in one
//! object.

use std::collections::HashMap;
use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A field path such as `slots[1].log.keep`: where a value sits in its
/// file. Diagnostics and sites name their value by one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    pub fn key(&self, k: impl Into<String>) -> Self {
        self.then(Seg::Key(k.into()))
    }

    pub fn index(&self, i: usize) -> Self {
        self.then(Seg::Index(i))
    }

    fn then(&self, seg: Seg) -> Self {
        let mut v = self.0.clone();
        v.push(seg);
        FieldPath(v)
    }

    /// `N` when the path is in `slots[N]`.
    pub fn slot(&self) -> Option<usize> {
        match self.0.as_slice() {
            [Seg::Key(k), Seg::Index(n), ..] if k == "slots" => Some(*n),
            _ => None,
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

/// One value: its span and its members, in document order (a key given
/// twice: once, at its first place, holding the last value, as
/// serde_json keeps it).
#[derive(Debug, Default)]
struct Node {
    span: Span,
    kids: Vec<(Seg, Node)>,
}

impl Node {
    fn kid(&self, seg: &Seg) -> Option<&Node> {
        let found = match seg {
            Seg::Index(i) => self.kids.get(*i).filter(|(s, _)| s == seg),
            Seg::Key(_) => self.kids.iter().find(|(s, _)| s == seg),
        };
        found.map(|(_, n)| n)
    }

    /// Its member whose span contains `offset`, if any: the last one
    /// starting at or before it.
    fn kid_at(&self, offset: usize) -> Option<&(Seg, Node)> {
        let n = (self.kids).partition_point(|(_, k)| k.span.start <= offset);
        let kid = self.kids.get(n.checked_sub(1)?)?;
        let s = kid.1.span;
        (offset < s.end.max(s.start + 1)).then_some(kid)
    }
}

/// Every value's span in one document accepted by serde_json, plus the
/// keys given twice in one object.
#[derive(Debug, Default)]
pub struct Spans {
    root: Node,
    /// (path of the repeated member, offset of its second key)
    pub duplicate_keys: Vec<(FieldPath, usize)>,
    line_starts: Vec<usize>,
}

impl Spans {
    /// Scan `text`; serde_json's error when it is not JSON.
    pub fn scan(text: &str) -> Result<Spans, serde_json::Error> {
        // Read as a `Value`: the syntax errors, and the nesting limit the
        // scanner relies on, are those of every other read.
        serde_json::from_str::<serde_json::Value>(text)?;
        let mut s = Scanner {
            text,
            b: text.as_bytes(),
            i: 0,
            path: Vec::new(),
            duplicate_keys: Vec::new(),
        };
        s.ws();
        let root = s.value(None);
        let newlines = text.bytes().enumerate().filter(|&(_, c)| c == b'\n');
        Ok(Spans {
            root,
            duplicate_keys: s.duplicate_keys,
            line_starts: std::iter::once(0)
                .chain(newlines.map(|(i, _)| i + 1))
                .collect(),
        })
    }

    fn find(&self, path: &FieldPath) -> Option<&Node> {
        (path.0.iter()).try_fold(&self.root, |node, seg| node.kid(seg))
    }

    pub fn get(&self, path: &FieldPath) -> Option<Span> {
        self.find(path).map(|n| n.span)
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

    /// The members of the object or array at `path`, in document order.
    pub fn members(&self, path: &FieldPath) -> Vec<(FieldPath, Span)> {
        let kids = self.find(path).map(|n| n.kids.as_slice()).unwrap_or(&[]);
        (kids.iter())
            .map(|(seg, n)| (path.then(seg.clone()), n.span))
            .collect()
    }

    /// Where an error at `offset` is: the path of the deepest value whose
    /// span contains it, and where what the error is about begins: the
    /// key, when `offset` lies in a member's key (an unknown or repeated
    /// key), else that value (a wrong type, a missing field). A reader's
    /// eye goes to the start of the thing named, not to where a parser
    /// noticed.
    pub fn place_at(&self, offset: usize) -> (FieldPath, usize) {
        let mut path = FieldPath::root();
        let mut node = &self.root;
        while let Some((seg, kid)) = node.kid_at(offset) {
            path.0.push(seg.clone());
            node = kid;
        }
        let n =
            (node.kids).partition_point(|(_, k)| k.span.key_start.is_some_and(|ks| ks <= offset));
        if let Some((_, k)) = n.checked_sub(1).and_then(|i| node.kids.get(i)) {
            if let Some(ks) = k.span.key_start.filter(|_| offset < k.span.start) {
                return (path, ks);
            }
        }
        if path.0.is_empty() && offset >= node.span.end {
            return (path, offset);
        }
        (path, node.span.start)
    }
}

/// The walk behind [`Spans::scan`], over text serde_json accepted.
struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    /// The path of the value being scanned.
    path: Vec<Seg>,
    duplicate_keys: Vec<(FieldPath, usize)>,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// Scans the value at `i`, the member of an object whose key starts
    /// at `key_start`, or else an element or the root.
    fn value(&mut self, key_start: Option<usize>) -> Node {
        let start = self.i;
        let mut kids = Vec::new();
        match self.b.get(self.i) {
            Some(&open @ (b'{' | b'[')) => {
                self.i += 1;
                // Each key's place among `kids`, to find one given twice.
                let mut keys: HashMap<String, usize> = HashMap::new();
                loop {
                    self.ws();
                    match (open, self.b.get(self.i)) {
                        (_, Some(b',')) => self.i += 1,
                        (b'{', Some(b'"')) => {
                            let ks = self.i;
                            self.skip_string();
                            let raw = self.text.get(ks..self.i).unwrap_or_default();
                            let key: String = serde_json::from_str(raw).unwrap_or_default();
                            self.ws();
                            self.i += 1; // the colon
                            self.ws();
                            self.path.push(Seg::Key(key.clone()));
                            let node = self.value(Some(ks));
                            match keys.get(&key) {
                                Some(&at) => {
                                    let path = FieldPath(self.path.clone());
                                    self.duplicate_keys.push((path, ks));
                                    if let Some(kid) = kids.get_mut(at) {
                                        *kid = (Seg::Key(key), node);
                                    }
                                }
                                None => {
                                    keys.insert(key.clone(), kids.len());
                                    kids.push((Seg::Key(key), node));
                                }
                            }
                            self.path.pop();
                        }
                        (b'[', Some(c)) if *c != b']' => {
                            self.path.push(Seg::Index(kids.len()));
                            let node = self.value(None);
                            if let Some(seg) = self.path.pop() {
                                kids.push((seg, node));
                            }
                        }
                        // The closing `}` or `]`.
                        _ => {
                            self.i += 1;
                            break;
                        }
                    }
                }
            }
            Some(b'"') => self.skip_string(),
            // A number, `true`, `false` or `null`.
            _ => {
                while !matches!(
                    self.b.get(self.i),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.i += 1;
                }
            }
        }
        let span = Span {
            start,
            end: self.i,
            key_start,
        };
        Node { span, kids }
    }

    fn skip_string(&mut self) {
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            self.i += if c == b'\\' { 2 } else { 1 };
            if c == b'"' {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_paths() {
        let text = "{\n  \"slots\": [\n    {\"name\": \"a\", \"log\": {\"keep\": 3}}\n  ]\n}\n";
        let s = Spans::scan(text).unwrap();
        let p = FieldPath::root()
            .key("slots")
            .index(0)
            .key("log")
            .key("keep");
        assert_eq!(p.to_string(), "slots[0].log.keep");
        let span = s.get(&p).unwrap();
        assert_eq!(&text[span.start..span.end], "3");
        assert_eq!(s.pos(span.start), Pos { line: 3, col: 35 });
        assert_eq!(s.place_at(span.start).0, p);
        assert_eq!(s.pos_of(&p), Some(Pos { line: 3, col: 27 }));
    }

    #[test]
    fn duplicate_keys_are_found() {
        let s = Spans::scan(r#"{"a": 1, "b": {"x": 1, "x": 2}, "a": 3}"#).unwrap();
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

    const MANY: usize = 20;

    #[test]
    fn a_repeated_key_holds_its_last_value_at_its_first_place() {
        // A small object and a larger one.
        let many: String = (0..MANY).map(|i| format!("\"k{i}\": {i}, ")).collect();
        for lead in ["", many.as_str()] {
            let text = format!(r#"{{{lead}"a": 1, "b": {{"x": 1}}, "a": [3]}}"#);
            let s = Spans::scan(&text).unwrap();
            let a = s.get(&FieldPath::root().key("a")).unwrap();
            assert_eq!(&text[a.start..a.end], "[3]", "{text}");
            let keys: Vec<String> = (s.members(&FieldPath::root()).into_iter())
                .map(|(p, _)| p.to_string())
                .filter(|k| !k.starts_with('k'))
                .collect();
            assert_eq!(keys, ["a", "b"], "{text}");
            let leading = if lead.is_empty() { 0 } else { MANY };
            assert_eq!(s.members(&FieldPath::root()).len(), leading + 2, "{text}");
        }
    }
}
