//! What a message may carry to a terminal or a log: printable text only.
//!
//! A message quotes what others wrote: config values, slot names, file
//! names, argv. A newline among them would split a message in two (the
//! second line free to imitate `FILE:LINE:COL: ...`); ESC, BEL and the
//! other control characters would reach the operator's terminal as
//! commands. So every control character is shown as a visible escape
//! (`\n`, `\r`, `\t`, `\e`, `\x07`, C1 ones as `\u{9b}`), and bytes that are
//! not UTF-8 (file names, argv) as `\xNN` rather than U+FFFD, so the reader
//! can still tell which file is meant. A backslash is left as it is: the
//! escapes are for reading, not for parsing back.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// `text` with every control character shown as a visible escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if u32::from(c) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// Bytes as message text: UTF-8 runs escaped as [`escape`] does, every
/// other byte as `\xNN`.
pub fn bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// A file name as message text (see [`bytes`]).
pub fn path(p: &Path) -> String {
    bytes(p.as_os_str().as_bytes())
}

/// An argument or other OS string as message text (see [`bytes`]).
pub fn os(s: &OsStr) -> String {
    bytes(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_visible() {
        assert_eq!(escape("plain `x`"), "plain `x`");
        assert_eq!(
            escape("a\nt.json:1:1: fake\r\t\x1b[31m\x07\x7f\u{9b}"),
            "a\\nt.json:1:1: fake\\r\\t\\e[31m\\x07\\x7f\\u{9b}"
        );
        // Already escaped text stays as it is: escaping twice is harmless.
        let once = escape("x\ny").into_owned();
        assert_eq!(escape(&once), once);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_hex() {
        assert_eq!(bytes(b"caf\xc3\xa9 \xff\xfe\n"), "café \\xff\\xfe\\n");
        assert_eq!(
            path(Path::new(OsStr::from_bytes(b"/etc/svkit/\x1b.json"))),
            "/etc/svkit/\\e.json"
        );
    }
}
