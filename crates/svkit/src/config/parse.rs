//! Parsing one layer (one `*.json` file) into raw types, collecting every
//! error with its file, line and column.
//!
//! [`Spans::scan`] has serde_json read the whole file (syntax errors stop
//! here, with serde_json's position) and finds where each value is
//! written. Each top-level key and each element of `slots`/`redirects` is
//! deserialized from its own text span, so a type error in one slot does
//! not hide the errors of the others, and every serde error keeps an
//! absolute line and column. Of a value serde rejects, every wrong member
//! is reported, not just serde's first (`every_error`).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::error::{Diagnostic, Site, Warning};
use super::json_pos::{FieldPath, Pos, Seg, Spans};
use super::raw::{RawRedirect, RawSlot, RawTop, TOP_KEYS};

/// Larger files are refused: a config is a few KB, and a runaway file must
/// not make boot slow or eat memory.
pub const MAX_FILE_BYTES: usize = 4 << 20;

/// One parsed layer. Elements that failed to deserialize are absent (their
/// errors are in the diagnostics), so validation still checks the rest.
#[derive(Debug)]
pub struct Layer {
    pub file: PathBuf,
    pub spans: Spans,
    pub top: RawTop,
    /// (index in the file's `slots` array, slot)
    pub slots: Vec<(usize, RawSlot)>,
    pub redirects: Vec<(usize, RawRedirect)>,
    /// Names of the slots declared here that did not deserialize: they
    /// exist, only malformed, so naming one is not a second error.
    pub broken: Vec<String>,
}

impl Layer {
    pub fn site(&self, path: FieldPath) -> Site {
        Site {
            file: self.file.clone(),
            pos: self.spans.pos_of(&path),
            path,
        }
    }

    pub fn diag(&self, path: &FieldPath, message: impl Into<String>) -> Diagnostic {
        self.site(path.clone()).diag(message)
    }

    /// `FILE: PATH: what`, unplaced: a finding on disk that does not make
    /// the config invalid.
    pub fn warning(&self, path: &FieldPath, what: String) -> Warning {
        let message = format!("{}: {path}: {what}", crate::msg::path(&self.file));
        Warning { message }
    }
}

/// Parse one file's bytes. Returns the layer (possibly partial) and every
/// diagnostic found; `None` when nothing usable could be read.
pub fn parse_layer(file: &Path, bytes: &[u8]) -> (Option<Layer>, Vec<Diagnostic>) {
    // The file as a whole is unusable: this is its only diagnostic.
    let fail = |pos, msg: String| (None, vec![Diagnostic::new(file, pos, None, msg)]);
    if bytes.len() > MAX_FILE_BYTES {
        let msg =
            format!("file is over {MAX_FILE_BYTES} bytes (4 MiB), the limit for a config file");
        return fail(None, msg);
    }
    if bytes.starts_with(b"\xef\xbb\xbf") {
        let msg = "starts with a UTF-8 byte order mark (EF BB BF), which JSON does not allow: save the file without it";
        return fail(Some(Pos { line: 1, col: 1 }), msg.into());
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = good.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            return fail(Some(Pos { line, col }), "invalid UTF-8".into());
        }
    };
    let spans = match Spans::scan(text) {
        Ok(spans) => spans,
        Err(e) => {
            let pos = Pos {
                line: e.line(),
                col: e.column().max(1),
            };
            return fail(Some(pos), strip_pos(&e));
        }
    };
    let mut diags = Vec::new();
    for (path, off) in &spans.duplicate_keys {
        diags.push(Diagnostic::new(
            file,
            Some(spans.pos(*off)),
            Some(path.clone()),
            "key defined twice in the same object",
        ));
    }
    let root = FieldPath::root();
    let start = spans.get(&root).map_or(0, |s| s.start);
    if text.as_bytes().get(start) != Some(&b'{') {
        diags.push(Diagnostic::new(
            file,
            Some(spans.pos(start)),
            None,
            "expected a JSON object at the top level",
        ));
        return (None, diags);
    }

    let mut layer = Layer {
        file: file.to_path_buf(),
        spans,
        top: RawTop::default(),
        slots: Vec::new(),
        redirects: Vec::new(),
        broken: Vec::new(),
    };
    for (path, span) in layer.spans.members(&root) {
        let Some(Seg::Key(key)) = path.0.last() else {
            continue;
        };
        match key.as_str() {
            "user" => layer.top.user = sub(&layer, text, &path, &mut diags),
            "state_dir" => layer.top.state_dir = sub(&layer, text, &path, &mut diags),
            "sentinel_env" => layer.top.sentinel_env = sub(&layer, text, &path, &mut diags),
            "default_program" => layer.top.default_program = sub(&layer, text, &path, &mut diags),
            "http" => layer.top.http = sub(&layer, text, &path, &mut diags),
            "slots" | "redirects" => {
                if text.as_bytes().get(span.start) != Some(&b'[') {
                    diags.push(layer.diag(&path, "expected an array"));
                    continue;
                }
                for (i, (p, _)) in layer.spans.members(&path).into_iter().enumerate() {
                    if key == "slots" {
                        match sub::<RawSlot>(&layer, text, &p, &mut diags) {
                            Some(s) => layer.slots.push((i, s)),
                            None => {
                                let name = layer.spans.get(&p.key("name"));
                                let name = name.and_then(|s| text.get(s.start..s.end));
                                let name =
                                    name.and_then(|t| serde_json::from_str::<String>(t).ok());
                                layer.broken.extend(name);
                            }
                        }
                    } else if let Some(r) = sub::<RawRedirect>(&layer, text, &p, &mut diags) {
                        layer.redirects.push((i, r));
                    }
                }
            }
            _ => diags.push(layer.diag(
                &path,
                format!(
                    "unknown key `{key}` (expected one of: {})",
                    TOP_KEYS.join(", ")
                ),
            )),
        }
    }
    (Some(layer), diags)
}

/// Deserialize the value at `path` from its own text span.
fn sub<T: DeserializeOwned>(
    layer: &Layer,
    text: &str,
    path: &FieldPath,
    diags: &mut Vec<Diagnostic>,
) -> Option<T> {
    let span = layer.spans.get(path)?;
    let slice = text.get(span.start..span.end)?;
    match serde_json::from_str::<T>(slice) {
        Ok(v) => Some(v),
        Err(e) => {
            // serde stops at the first error; look for the others too.
            let before = diags.len();
            every_error::<T>(layer, text, path, "", "", 0, diags);
            if diags.len() == before {
                diags.push(diag_at(layer, span.start + error_offset(slice, &e), &e));
            }
            None
        }
    }
}

/// Nesting checked member by member; below it a member's first error
/// stands for all of them.
const MAX_DEPTH: usize = 8;

/// Every error in a value serde_json rejected, not just its first.
///
/// serde stops at the first problem, so a slot with a wrong type in
/// `log.keep` and an unknown key `restat` would take two rounds of editing.
/// Here each member of the object is parsed alone, as the only member of a
/// skeleton of its ancestors, as part of the same type: an error inside the
/// member's own text is its own; one outside it belongs to the skeleton (a
/// required field the lone member leaves out) and is not reported. The
/// members of an object-valued member are checked the same way, one by one.
///
/// So: every error serde finds in the object at `at` (whose text is in
/// `text`), checked as a `T` (in the skeleton `open`, `close`), each with
/// its own position and field path. None when no single member is at
/// fault (e.g. a required field is missing): the caller then reports
/// serde's own error.
fn every_error<T: DeserializeOwned>(
    layer: &Layer,
    text: &str,
    at: &FieldPath,
    open: &str,
    close: &str,
    depth: usize,
    out: &mut Vec<Diagnostic>,
) {
    for (child, span) in layer.spans.members(at) {
        let Some(key_start) = span.key_start else {
            continue;
        };
        // `"key": ` with its colon, then the whole member.
        let (Some(key), Some(member)) = (
            text.get(key_start..span.start),
            text.get(key_start..span.end),
        ) else {
            continue;
        };
        let doc = format!("{open}{{{member}}}{close}");
        let Err(e) = serde_json::from_str::<T>(&doc) else {
            continue;
        };
        let base = open.len() + 1;
        let off = error_offset(&doc, &e);
        if off < base || off >= base + member.len() {
            continue;
        }
        let in_value = off >= base + key.len();
        let is_object = text.as_bytes().get(span.start) == Some(&b'{');
        if in_value && is_object && depth < MAX_DEPTH {
            let before = out.len();
            let open = format!("{open}{{{key}");
            let close = format!("}}{close}");
            every_error::<T>(layer, text, &child, &open, &close, depth + 1, out);
            if out.len() > before {
                continue;
            }
        }
        out.push(diag_at(layer, key_start + (off - base), &e));
    }
}

/// A serde error at byte `abs` of the layer as a diagnostic: its position
/// and the deepest field path there.
fn diag_at(layer: &Layer, abs: usize, e: &serde_json::Error) -> Diagnostic {
    let (path, start) = layer.spans.place_at(abs);
    let pos = layer.spans.pos(start);
    Diagnostic::new(&layer.file, Some(pos), Some(path), strip_pos(e))
}

/// Where in `slice` (which serde_json parsed) the error `e` lies, in bytes.
fn error_offset(slice: &str, e: &serde_json::Error) -> usize {
    let line_start = match e.line() {
        0 | 1 => 0,
        n => (slice.match_indices('\n').nth(n - 2)).map_or(0, |(i, _)| i + 1),
    };
    // serde_json reports the column after consuming the offending token;
    // step back one byte so the path lookup lands inside that token.
    let rel = (line_start + e.column()).min(slice.len());
    rel.saturating_sub(1)
}

/// serde_json's message without its " at line L column C" suffix (we print
/// our own absolute position in front).
fn strip_pos(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_errors_in_several_slots() {
        let text = r#"{
  "slots": [
    {"name": "a", "command": ["x"], "log": {"dir": "/l", "keep": "ten"}},
    {"name": "b", "command": ["x"], "bogus": 1}
  ]
}"#;
        let (layer, d) = parse_layer(Path::new("t.json"), text.as_bytes());
        assert!(layer.is_some());
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            d[0].path.as_ref().map(ToString::to_string).as_deref(),
            Some("slots[0].log.keep")
        );
        assert_eq!(d[0].pos.map(|p| p.line), Some(3));
        assert!(d[1].message.contains("unknown field `bogus`"), "{}", d[1]);
        assert_eq!(d[1].pos.map(|p| p.line), Some(4));
    }

    #[test]
    fn syntax_error_has_position() {
        let (l, d) = parse_layer(Path::new("t.json"), b"{\n  \"slots\": [,]\n}");
        assert!(l.is_none());
        assert_eq!(d[0].pos.map(|p| p.line), Some(2));
    }

    fn errors(text: &str) -> Vec<(String, String)> {
        let (_, d) = parse_layer(Path::new("t.json"), text.as_bytes());
        d.iter()
            .map(|d| {
                let path = d.path.as_ref().map(ToString::to_string);
                (path.unwrap_or_default(), d.message.clone())
            })
            .collect()
    }

    #[test]
    fn every_wrong_member_of_a_slot_is_reported() {
        let d = errors(
            r#"{"slots": [{"name": "a", "command": "x",
              "log": {"dir": 5, "keep": "ten", "colour": true},
              "restat": {}, "restart": {"backoff": {"max_s": "2"}}}]}"#,
        );
        let paths: Vec<&str> = d.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "slots[0].command",
                "slots[0].log.dir",
                "slots[0].log.keep",
                "slots[0].log",
                "slots[0]",
                "slots[0].restart.backoff.max_s"
            ],
            "{d:?}"
        );
        assert!(d[3].1.contains("unknown field `colour`"), "{d:?}");
        assert!(d[4].1.contains("unknown field `restat`"), "{d:?}");
    }

    #[test]
    fn a_missing_field_alone_is_still_reported() {
        let d = errors(r#"{"slots": [{"name": "a"}]}"#);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].1.contains("missing field `command`"), "{d:?}");
    }

    #[test]
    fn a_missing_field_inside_a_member_is_that_members_error() {
        let d = errors(r#"{"slots": [{"name": "a", "command": ["x"], "log": {"keep": 3}}]}"#);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].1.contains("missing field `dir`"), "{d:?}");
    }
}
