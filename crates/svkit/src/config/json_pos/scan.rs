//! The scanner behind [`Spans::scan`]: one pass over text serde_json
//! already accepted, one node per value, keys decoded only when escaped.

use std::collections::HashMap;

use super::{key_hash, At, Node, Span, Spans, INDEXED};

pub(super) fn scan(text: &str) -> Spans {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
        out: Spans::default(),
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
    s.value(usize::MAX, At::Index(0), None);
    s.out
}

/// Offsets of every newline.
fn newlines(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    b.iter()
        .enumerate()
        .filter_map(|(i, &c)| (c == b'\n').then_some(i))
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

    /// Scans one value into a new node; its id.
    fn value(&mut self, parent: usize, seg: At, key_start: Option<usize>) -> usize {
        let id = self.out.nodes.len();
        let start = self.i;
        self.out.nodes.push(Node {
            span: Span {
                start,
                end: start,
                key_start,
            },
            seg,
            parent,
            kids: Vec::new(),
            index: None,
        });
        match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
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
                            let key = self.key();
                            self.ws();
                            if self.b.get(self.i) == Some(&b':') {
                                self.i += 1;
                            }
                            self.ws();
                            self.member(id, key, ks);
                        }
                        // Not reachable for valid JSON; stop instead of looping.
                        _ => break,
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut n = 0;
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
                            let kid = self.value(id, At::Index(n), None);
                            self.out.nodes[id].kids.push(kid);
                            n += 1;
                        }
                        None => break,
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
            }
            None => {}
        }
        self.out.nodes[id].span.end = self.i;
        id
    }

    /// One member of the object `obj`: scanned, then placed (a repeated
    /// key: recorded, its value taking the first one's place).
    fn member(&mut self, obj: usize, key: At, ks: usize) {
        let At::Key { start, end } = key else { return };
        let name = self.out.keys.get(start..end).unwrap_or_default();
        let hash = key_hash(name);
        let before = self.out.kid_key(obj, name);
        let kid = self.value(obj, key, Some(ks));
        let node = &mut self.out.nodes[obj];
        if let Some(old) = before {
            if let Some(p) = node.kids.iter().position(|&k| k == old) {
                node.kids[p] = kid;
            }
            let path = self.out.path_of(kid);
            self.out.duplicate_keys.push((path, ks));
            return;
        }
        node.kids.push(kid);
        let n = node.kids.len();
        if let Some(ix) = &mut node.index {
            ix.entry(hash).or_default().push(n - 1);
        } else if n > INDEXED {
            let kids = std::mem::take(&mut node.kids);
            let mut ix: HashMap<u64, Vec<usize>> = HashMap::new();
            for (p, &k) in kids.iter().enumerate() {
                if let Some(x) = self.out.key_of(k) {
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
        self.i = self.i.min(self.b.len());
    }

    /// Consume a key's string literal and store its decoded value.
    fn key(&mut self) -> At {
        let start = self.i;
        self.skip_string();
        let raw = &self.b[start..self.i];
        let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        let keys = &mut self.out.keys;
        let from = keys.len();
        match std::str::from_utf8(inner) {
            Ok(s) if !inner.contains(&b'\\') => keys.push_str(s),
            _ => {
                let raw = std::str::from_utf8(raw).unwrap_or("\"\"");
                keys.push_str(&serde_json::from_str::<String>(raw).unwrap_or_default());
            }
        }
        At::Key {
            start: from,
            end: keys.len(),
        }
    }
}
