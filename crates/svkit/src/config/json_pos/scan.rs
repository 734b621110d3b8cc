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
        pending: Vec::new(),
    };
    // Sized up front, from what pretty JSON holds per value: regrowing
    // these copies them over and over.
    s.out.nodes.reserve(text.len() / 24);
    s.out.keys.reserve(text.len() / 4);
    s.out.kids.reserve(text.len() / 24);
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
    /// The members of every object and array still open, innermost last:
    /// moved to `Spans::kids` when it closes, so each one's lie together.
    pending: Vec<u32>,
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
            kids_at: 0,
            kids_len: 0,
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
                let base = self.pending.len();
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
                            self.member(id, key, ks, base);
                        }
                        // Not reachable for valid JSON; stop instead of looping.
                        _ => {
                            self.fail();
                            break;
                        }
                    }
                }
                self.close(id, base);
            }
            Some(b'[') => {
                self.i += 1;
                let base = self.pending.len();
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
                            self.pending.push(kid as u32);
                            n += 1;
                        }
                        None => {
                            self.fail();
                            break;
                        }
                    }
                }
                self.close(id, base);
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

    /// The object or array `id` is closed: its members, `pending[base..]`,
    /// become its own.
    fn close(&mut self, id: usize, base: usize) {
        let kids = self.pending.get(base..).unwrap_or_default();
        let node = &mut self.out.nodes[id];
        node.kids_at = self.out.kids.len() as u32;
        node.kids_len = kids.len() as u32;
        self.out.kids.extend_from_slice(kids);
        self.pending.truncate(base);
    }

    /// One member of the object `obj`, whose members so far are
    /// `pending[base..]`: scanned, then placed (a repeated key: recorded,
    /// its value taking the first one's place).
    fn member(&mut self, obj: usize, key: At, ks: usize, base: usize) {
        let At::Key { start, end } = key else { return };
        let name = (self.out.keys)
            .get(start as usize..end as usize)
            .unwrap_or_default();
        let hash = key_hash(name);
        let index = self.out.nodes[obj].index.as_deref();
        let kids = self.pending.get(base..).unwrap_or_default();
        let before = self.out.find_key(kids, index, name);
        let kid = self.value(obj, key, Some(ks)) as u32;
        if let Some(old) = before {
            let kids = self.pending.get_mut(base..).unwrap_or_default();
            if let Some(k) = kids.iter_mut().find(|k| **k as usize == old) {
                *k = kid;
            }
            let path = self.out.path_of(kid as usize);
            self.out.duplicate_keys.push((path, ks));
            return;
        }
        self.pending.push(kid);
        let n = self.pending.len() - base;
        if let Some(ix) = &mut self.out.nodes[obj].index {
            ix.entry(hash).or_default().push(n - 1);
        } else if n > INDEXED {
            let mut ix: HashMap<u64, Vec<usize>> = HashMap::new();
            for (p, &k) in self.pending[base..].iter().enumerate() {
                if let Some(x) = self.out.key_of(k as usize) {
                    ix.entry(key_hash(x)).or_default().push(p);
                }
            }
            self.out.nodes[obj].index = Some(Box::new(ix));
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
