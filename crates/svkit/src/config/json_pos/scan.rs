//! The scanner behind [`Spans::scan`]: one pass, one node per value,
//! keys decoded only when escaped.
//!
//! Strict, it also vouches that the text is JSON as serde_json reads it,
//! for the plain JSON a config is written in; it gives up (and serde_json
//! judges, and says where the text is wrong) at the first thing that is
//! not, or that only serde_json can judge: a `\u` escape, an exponent, a
//! long number, deep nesting. Every check errs on the side of giving up:
//! what it vouches for, serde_json accepts. Lenient, it scans text that
//! serde_json accepted.

use std::collections::HashMap;

use super::{key_hash, At, Node, Spans, INDEXED, NO_KEY};

/// Nesting past this is left to serde_json (whose limit is 128).
const MAX_DEPTH: usize = 100;

/// Longest number vouched for: serde_json refuses some longer ones (out
/// of an f64's range).
const MAX_NUMBER: usize = 18;

/// `None` when `strict` and the text is not vouched for.
pub(super) fn scan(text: &str, strict: bool) -> Option<Spans> {
    // Offsets are u32 (a layer is at most 4 MiB).
    if u32::try_from(text.len()).map_or(true, |n| n == NO_KEY) {
        return None;
    }
    let mut s = Scanner {
        text,
        b: text.as_bytes(),
        i: 0,
        out: Spans::default(),
        strict,
        bad: false,
        depth: 0,
    };
    // Sized up front, from what pretty JSON holds per value: regrowing
    // these copies them over and over.
    s.out.nodes.reserve(text.len() / 24);
    s.out.keys.reserve(text.len() / 4);
    s.out.line_starts.push(0);
    s.out
        .line_starts
        .extend(newlines(text.as_bytes()).map(|i| i + 1));
    s.ws();
    s.value(NO_KEY as usize, At::Index(0), None);
    s.ws();
    if s.i != s.b.len() {
        s.fail();
    }
    (!s.bad).then_some(s.out)
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    out: Spans,
    strict: bool,
    /// Strict, and given up: every loop stops.
    bad: bool,
    depth: usize,
}

/// What a scalar token may be: `true`, `false`, `null`, or a number
/// without exponent, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, not too long.
fn plain_scalar(t: &[u8]) -> bool {
    if matches!(t, b"true" | b"false" | b"null") {
        return true;
    }
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    let int = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    let frac_ok = match &digits[int..] {
        [] => true,
        [b'.', frac @ ..] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    t.len() <= MAX_NUMBER && int > 0 && !(int > 1 && digits[0] == b'0') && frac_ok
}

/// Offsets of every newline.
fn newlines(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    b.iter()
        .enumerate()
        .filter_map(|(i, &c)| (c == b'\n').then_some(i))
}

/// How an object or array goes on from where its loop is.
#[derive(PartialEq)]
enum Next {
    /// Just opened: a member or the end.
    First,
    /// After a member: a comma or the end.
    Comma,
    /// After a comma: a member.
    Member,
}

impl Scanner<'_> {
    /// Strict: gives up.
    fn fail(&mut self) {
        if self.strict {
            self.bad = true;
        }
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// Scans one value into a new node; its id.
    fn value(&mut self, parent: usize, seg: At, key_start: Option<usize>) -> usize {
        let id = self.out.nodes.len();
        let start = self.i;
        self.out.nodes.push(Node {
            start: start as u32,
            end: start as u32,
            key_start: key_start.map_or(NO_KEY, |k| k as u32),
            seg,
            parent: parent as u32,
            kids: Vec::new(),
            index: None,
        });
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.fail();
        }
        match self.b.get(self.i) {
            _ if self.bad => {}
            Some(b'{') => {
                self.i += 1;
                let mut next = Next::First;
                while !self.bad {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b'}') => {
                            if next == Next::Member {
                                self.fail();
                            }
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            if next != Next::Comma {
                                self.fail();
                            }
                            next = Next::Member;
                            self.i += 1;
                        }
                        Some(b'"') => {
                            if next == Next::Comma {
                                self.fail();
                            }
                            next = Next::Comma;
                            let ks = self.i;
                            let key = self.key();
                            self.ws();
                            if self.b.get(self.i) == Some(&b':') {
                                self.i += 1;
                            } else {
                                self.fail();
                            }
                            self.ws();
                            self.member(id, key, ks);
                        }
                        // Not reachable for valid JSON; stop instead of looping.
                        _ => {
                            self.fail();
                            break;
                        }
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut n = 0;
                let mut next = Next::First;
                while !self.bad {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b']') => {
                            if next == Next::Member {
                                self.fail();
                            }
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            if next != Next::Comma {
                                self.fail();
                            }
                            next = Next::Member;
                            self.i += 1;
                        }
                        Some(_) => {
                            if next == Next::Comma {
                                self.fail();
                            }
                            next = Next::Comma;
                            let kid = self.value(id, At::Index(n), None);
                            let kids = &mut self.out.nodes[id].kids;
                            // Room for a usual argv at once, not 4, then 8.
                            if kids.capacity() == 0 {
                                kids.reserve_exact(8);
                            }
                            kids.push(kid as u32);
                            n += 1;
                        }
                        None => {
                            self.fail();
                            break;
                        }
                    }
                }
            }
            Some(b'"') => self.skip_string(),
            Some(_) => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                if self.strict && !plain_scalar(&self.b[start..self.i]) {
                    self.fail();
                }
            }
            None => self.fail(),
        }
        self.depth -= 1;
        self.out.nodes[id].end = self.i as u32;
        id
    }

    /// One member of the object `obj`: scanned, then placed (a repeated
    /// key: recorded, its value taking the first one's place).
    fn member(&mut self, obj: usize, key: At, ks: usize) {
        let At::Key { start, end } = key else { return };
        let name = (self.out.keys)
            .get(start as usize..end as usize)
            .unwrap_or_default();
        let hash = key_hash(name);
        let before = self.out.kid_key(obj, name);
        let kid = self.value(obj, key, Some(ks));
        let node = &mut self.out.nodes[obj];
        if let Some(old) = before {
            if let Some(p) = node.kids.iter().position(|&k| k as usize == old) {
                node.kids[p] = kid as u32;
            }
            let path = self.out.path_of(kid);
            self.out.duplicate_keys.push((path, ks));
            return;
        }
        // An object in an array (a slot) gets room for a usual slot's
        // members at once, not 4, then 8, then 16.
        let listed = node.parent != NO_KEY && matches!(node.seg, At::Index(_));
        if node.kids.capacity() == 0 && listed {
            node.kids.reserve_exact(16);
        }
        node.kids.push(kid as u32);
        let n = node.kids.len();
        if let Some(ix) = &mut node.index {
            ix.entry(hash).or_default().push(n - 1);
        } else if n > INDEXED {
            let kids = std::mem::take(&mut node.kids);
            let mut ix: HashMap<u64, Vec<usize>> = HashMap::new();
            for (p, &k) in kids.iter().enumerate() {
                if let Some(x) = self.out.key_of(k as usize) {
                    ix.entry(key_hash(x)).or_default().push(p);
                }
            }
            let node = &mut self.out.nodes[obj];
            node.kids = kids;
            node.index = Some(Box::new(ix));
        }
    }

    fn skip_string(&mut self) {
        self.i += 1;
        let mut closed = false;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => {
                    // `\u` is serde_json's to judge (surrogates).
                    if !matches!(
                        self.b.get(self.i + 1),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                    ) {
                        self.fail();
                    }
                    self.i += 2;
                }
                b'"' => {
                    self.i += 1;
                    closed = true;
                    break;
                }
                // A control character must be escaped.
                0..0x20 => {
                    self.fail();
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        if !closed {
            self.fail();
        }
        self.i = self.i.min(self.b.len());
    }

    /// Consume a key's string literal and store its decoded value.
    fn key(&mut self) -> At {
        let start = self.i;
        self.skip_string();
        let raw = &self.b[start..self.i];
        // A slice of the text, at character boundaries, is UTF-8 already:
        // not checked again.
        let inner = self
            .text
            .get(start + 1..self.i.saturating_sub(1).max(start + 1));
        let keys = &mut self.out.keys;
        let from = keys.len();
        match inner {
            Some(s) if !s.as_bytes().contains(&b'\\') => keys.push_str(s),
            _ => {
                let raw = std::str::from_utf8(raw).unwrap_or("\"\"");
                keys.push_str(&serde_json::from_str::<String>(raw).unwrap_or_default());
            }
        }
        At::Key {
            start: from as u32,
            end: keys.len() as u32,
        }
    }
}
