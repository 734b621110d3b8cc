//! A small JSON position scanner.
//!
//! serde_json tells us *where* a syntax error is, but once a document parsed
//! we want positions for semantic errors too (`slots[2].log.keep` at 14:20),
//! and we want to re-parse each slot from its own text span so that one bad
//! slot does not hide the errors of the next. This scanner runs only on text
//! serde_json already accepted, so it can stay simple: it records the byte
//! span of every value and of every object key, keyed by field path.

use std::borrow::Cow;
use std::collections::HashMap;

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
/// The values form a tree of nodes (no field path is built for a value
/// unless asked for), and every lookup walks down it, by index in an
/// array, by key in an object (hashed past [`INDEXED`] members), by a
/// binary search on offsets for [`Spans::path_at`]: never a pass over the
/// whole document, so a config of 100,000 values has its errors found and
/// placed as fast as one of ten.
#[derive(Debug, Default)]
pub struct Spans {
    nodes: Vec<Node>,
    /// Every object's and array's members, one after the other: a node
    /// names its own by a range here, so a document's lists take one
    /// allocation, not one a value.
    kids: Vec<u32>,
    /// Every object key, decoded, one after the other: a node names its
    /// key by a range here, so a document's keys take one allocation.
    keys: String,
    /// (path of the repeated member, offset of its second key)
    pub duplicate_keys: Vec<(FieldPath, usize)>,
    line_starts: Vec<usize>,
}

mod scan;

/// Objects with more members than this get a hash index of their keys.
const INDEXED: usize = 16;

/// A node's offsets, indexes and ids are `u32`: a layer is at most 4 MiB
/// (the scanner gives up on a longer text), and a node per value of a big
/// config is a page fault every 4 KiB.
#[derive(Debug)]
struct Node {
    start: u32,
    end: u32,
    /// Where its key starts, [`NO_KEY`] when it is not an object member.
    key_start: u32,
    /// How its parent reaches it (the root's is never read).
    seg: At,
    parent: u32,
    /// Its members, `Spans::kids[kids_at..kids_at + kids_len]`, in
    /// document order (a key given twice: once, at its first place,
    /// holding the last value, as serde_json keeps it).
    kids_at: u32,
    kids_len: u32,
    /// Key hash -> positions in `kids`, for a large object. Boxed: few
    /// nodes have one, and every node is one pointer wide for it, not six.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<u64, Vec<usize>>>>,
}

const NO_KEY: u32 = u32::MAX;

impl Node {
    fn span(&self) -> Span {
        Span {
            start: self.start as usize,
            end: self.end as usize,
            key_start: (self.key_start != NO_KEY).then_some(self.key_start as usize),
        }
    }
}

/// A node's [`Seg`], its key held in [`Spans::keys`].
#[derive(Debug, Clone, Copy)]
enum At {
    Key { start: u32, end: u32 },
    Index(u32),
}

fn key_hash(k: &str) -> u64 {
    // FNV-1a: keys are short and not chosen to collide (a collision only
    // costs a comparison).
    k.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Spans {
    /// Scan `text`, vouching that serde_json accepts it; `None` when the
    /// scanner cannot (the text is not JSON, or serde_json must judge it).
    pub fn scan(text: &str) -> Option<Spans> {
        scan::scan(text, true)
    }

    /// Scan `text`, which must already be valid JSON (serde_json said so).
    pub fn scan_valid(text: &str) -> Spans {
        scan::scan(text, false).unwrap_or_default()
    }

    /// The members of a node.
    fn kids_of(&self, node: &Node) -> &[u32] {
        let at = node.kids_at as usize;
        self.kids
            .get(at..at + node.kids_len as usize)
            .unwrap_or_default()
    }

    /// Its `i`th member's id.
    fn kid_at(&self, node: &Node, i: usize) -> Option<usize> {
        self.kids_of(node).get(i).map(|&k| k as usize)
    }

    /// Whether node `k` is an object member under `key`.
    fn has_key(&self, k: usize, key: &str) -> bool {
        // Lengths first: most members of an object differ in length.
        match self.nodes[k].seg {
            At::Key { start, end } => {
                (end - start) as usize == key.len()
                    && self.keys.get(start as usize..end as usize) == Some(key)
            }
            At::Index(_) => false,
        }
    }

    /// The member under `key` among `kids` (the members of an object with
    /// `index`, if it has one).
    fn find_key(
        &self,
        kids: &[u32],
        index: Option<&HashMap<u64, Vec<usize>>>,
        key: &str,
    ) -> Option<usize> {
        let at = |p: usize| kids.get(p).map(|&k| k as usize);
        match index {
            Some(ix) => (ix.get(&key_hash(key))?.iter())
                .filter_map(|&p| at(p))
                .find(|&k| self.has_key(k, key)),
            None => (kids.iter().map(|&k| k as usize)).find(|&k| self.has_key(k, key)),
        }
    }

    /// The node a path leads to.
    fn find(&self, path: &FieldPath) -> Option<usize> {
        let mut at = 0;
        self.nodes.first()?;
        for seg in &path.0 {
            at = self.kid(at, seg)?;
        }
        Some(at)
    }

    fn kid(&self, at: usize, seg: &Seg) -> Option<usize> {
        match seg {
            Seg::Index(i) => {
                let k = self.kid_at(self.nodes.get(at)?, *i)?;
                matches!(self.nodes[k].seg, At::Index(_)).then_some(k)
            }
            Seg::Key(key) => self.kid_key(at, key),
        }
    }

    fn kid_key(&self, at: usize, key: &str) -> Option<usize> {
        let node = self.nodes.get(at)?;
        self.find_key(self.kids_of(node), node.index.as_deref(), key)
    }

    /// The key of an object member's node.
    fn key_of(&self, k: usize) -> Option<&str> {
        match self.nodes.get(k)?.seg {
            At::Key { start, end } => self.keys.get(start as usize..end as usize),
            At::Index(_) => None,
        }
    }

    fn seg_of(&self, k: usize) -> Seg {
        match self.nodes[k].seg {
            At::Index(i) => Seg::Index(i as usize),
            At::Key { .. } => Seg::Key(Cow::Owned(self.key_of(k).unwrap_or_default().to_owned())),
        }
    }

    /// The field path of a node, from the root down.
    fn path_of(&self, mut at: usize) -> FieldPath {
        let mut segs = Vec::new();
        while at != 0 && at < self.nodes.len() {
            segs.push(self.seg_of(at));
            at = self.nodes[at].parent as usize;
        }
        segs.reverse();
        FieldPath(segs)
    }

    pub fn get(&self, path: &FieldPath) -> Option<Span> {
        self.find(path).map(|n| self.nodes[n].span())
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

    /// How many members the object or array at `path` has.
    pub fn len(&self, path: &FieldPath) -> usize {
        self.find(path)
            .map_or(0, |n| self.nodes[n].kids_len as usize)
    }

    /// The members of the object at `path`, in document order.
    pub fn members(&self, path: &FieldPath) -> Vec<(FieldPath, Span)> {
        let Some(n) = self.find(path) else {
            return Vec::new();
        };
        (self.kids_of(&self.nodes[n]).iter())
            .filter_map(|&k| {
                let k = k as usize;
                let key = self.key_of(k)?.to_owned();
                Some((path.key(key), self.nodes[k].span()))
            })
            .collect()
    }

    /// The deepest value whose span contains `offset`: down from the root,
    /// each step a binary search among the members, which are in document
    /// order.
    pub fn path_at(&self, offset: usize) -> FieldPath {
        self.path_of(self.node_at(offset))
    }

    fn node_at(&self, offset: usize) -> usize {
        let contains = |s: Span| s.start <= offset && offset < s.end.max(s.start + 1);
        let mut at = 0;
        while let Some(node) = self.nodes.get(at) {
            let kids = self.kids_of(node);
            let n = kids.partition_point(|&k| self.nodes[k as usize].span().start <= offset);
            match n.checked_sub(1).and_then(|i| self.kid_at(node, i)) {
                Some(k) if contains(self.nodes[k].span()) => at = k,
                _ => break,
            }
        }
        at
    }

    /// Where what an error at `offset` is about begins: the key, when
    /// `offset` lies in a member's key (an unknown or repeated key), else
    /// the value of [`Spans::path_at`] (a wrong type, a missing field): a
    /// reader's eye goes to the start of the thing named, not to where a
    /// parser noticed.
    pub fn start_at(&self, offset: usize) -> usize {
        let at = self.node_at(offset);
        let Some(node) = self.nodes.get(at) else {
            return offset;
        };
        let kids = self.kids_of(node);
        let n = kids.partition_point(|&k| {
            (self.nodes[k as usize].span().key_start).is_some_and(|ks| ks <= offset)
        });
        if let Some(k) = n.checked_sub(1).and_then(|i| self.kid_at(node, i)) {
            let s = self.nodes[k].span();
            if let Some(ks) = s.key_start.filter(|_| offset < s.start) {
                return ks;
            }
        }
        if at == 0 && offset >= node.end as usize {
            return offset;
        }
        node.start as usize
    }
}

#[cfg(test)]
mod tests;
