//! The `env_file` format: a strict, documented subset of dotenv
//! (docs/config.md says the same, rule by rule).
//!
//! - Lines end at `\n` (a last line without one counts); a `\r` right
//!   before the `\n` is dropped, so CRLF files read the same.
//! - Spaces and tabs around a line are ignored; a blank line, or one whose
//!   first other character is `#`, is skipped.
//! - `[export ]KEY=VALUE`: `KEY` is `[A-Za-z_][A-Za-z0-9_]*`; spaces and
//!   tabs may surround the `=`.
//! - `VALUE` is one of: nothing (an empty value); `'...'`, taken as is;
//!   `"..."`, where `\\`, `\"`, `\$`, `\n`, `\t` and `\r` are the only
//!   escapes; or unquoted text up to a `#` that begins it or follows a space
//!   or tab (a comment), its trailing spaces and tabs dropped. A quoted
//!   value ends on its own line, and only a `#` comment may follow it.
//! - Nothing is expanded: `$HOME` is five characters.
//! - A later line wins over an earlier one for the same key.
//!
//! Errors name the line and never quote it: an env file may hold a secret.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// One error: the 1-based line and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub msg: String,
}

/// The variables of one file, in file order, each with its 1-based line
/// (duplicates kept: applying them in order makes the last one win).
pub fn parse(text: &[u8]) -> Result<Vec<(usize, String, OsString)>, LineError> {
    let mut out = Vec::new();
    // A final `\n` leaves an empty last piece: a blank line, skipped.
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let err = |msg: &str| LineError {
            line: i + 1,
            msg: msg.to_string(),
        };
        if line.contains(&0) {
            return Err(err("holds a NUL byte, which no program can receive"));
        }
        if let Some((k, v)) = parse_line(line).map_err(err)? {
            out.push((i + 1, k, v));
        }
    }
    Ok(out)
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim_start(s: &[u8]) -> &[u8] {
    let i = s.iter().position(|&b| !is_blank(b)).unwrap_or(s.len());
    &s[i..]
}

fn trim_end(s: &[u8]) -> &[u8] {
    let i = s.iter().rposition(|&b| !is_blank(b)).map_or(0, |i| i + 1);
    &s[..i]
}

fn parse_line(line: &[u8]) -> Result<Option<(String, OsString)>, &'static str> {
    let line = trim_start(line);
    if line.is_empty() || line[0] == b'#' {
        return Ok(None);
    }
    let line = match line.strip_prefix(b"export") {
        Some(r) if r.first().copied().is_some_and(is_blank) => trim_start(r),
        _ => line,
    };
    let key_len = line
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(key_len);
    let rest = trim_start(rest);
    if key.is_empty() || rest.first() != Some(&b'=') {
        return Err("expected KEY=value (or a `#` comment)");
    }
    if key[0].is_ascii_digit() {
        return Err("a variable name must match [A-Za-z_][A-Za-z0-9_]*");
    }
    let value = trim_start(&rest[1..]);
    let value = match value.first() {
        Some(b'\'') => quoted(&value[1..], b'\'')?,
        Some(b'"') => quoted(&value[1..], b'"')?,
        _ => unquoted(value),
    };
    // Only ASCII bytes were taken into the key.
    let key = String::from_utf8_lossy(key).into_owned();
    Ok(Some((key, OsString::from_vec(value))))
}

fn unquoted(v: &[u8]) -> Vec<u8> {
    let comment = (0..v.len()).find(|&i| v[i] == b'#' && (i == 0 || is_blank(v[i - 1])));
    trim_end(&v[..comment.unwrap_or(v.len())]).to_vec()
}

/// The value after an opening `q`, up to its closing one; what follows it
/// may only be blanks and a comment.
fn quoted(v: &[u8], q: u8) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    loop {
        let Some(&b) = v.get(i) else {
            return Err(if q == b'\'' {
                "a single-quoted value must end on its line (no closing `'`)"
            } else {
                "a double-quoted value must end on its line (no closing `\"`; write a newline as \\n)"
            });
        };
        i += 1;
        if b == q {
            break;
        }
        if b == b'\\' && q == b'"' {
            let e = v.get(i).copied();
            i += 1;
            out.push(match e {
                Some(b'\\') => b'\\',
                Some(b'"') => b'"',
                Some(b'$') => b'$',
                Some(b'n') => b'\n',
                Some(b't') => b'\t',
                Some(b'r') => b'\r',
                _ => return Err(
                    "unknown escape in a double-quoted value (known: \\\\ \\\" \\$ \\n \\t \\r)",
                ),
            });
            continue;
        }
        out.push(b);
    }
    let after = trim_start(&v[i..]);
    if after.is_empty() || after[0] == b'#' {
        Ok(out)
    } else {
        Err("text after the closing quote (only a `#` comment may follow)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<(String, String)> {
        parse(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e:?}"))
            .into_iter()
            .map(|(_, k, v)| (k, v.to_string_lossy().into_owned()))
            .collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn bad(text: &str) -> LineError {
        match parse(text.as_bytes()) {
            Ok(v) => panic!("accepted {text:?}: {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_form() {
        let text = "# comment\n\n  \t\nA=1\nexport B=two words  # note\nC = 'it s' \nD=\"a\\nb \\\"q\\\" \\$X \\\\\"  # c\nE='$HOME #no'\nF=\nG=x#y\nH=#z\n\texport\tI=i\r\nexport=e\nexports=s\nA=again\nK=\"t\\tr\\r\"\nL=a #b\nM=a# b\nJ=last";
        assert_eq!(
            ok(text),
            kv(&[
                ("A", "1"),
                ("B", "two words"),
                ("C", "it s"),
                ("D", "a\nb \"q\" $X \\"),
                ("E", "$HOME #no"),
                ("F", ""),
                ("G", "x#y"),
                ("H", ""),
                ("I", "i"),
                ("export", "e"),
                ("exports", "s"),
                ("A", "again"),
                ("K", "t\tr\r"),
                ("L", "a"),
                ("M", "a# b"),
                ("J", "last"),
            ])
        );
    }

    #[test]
    fn bytes_pass_unchanged() {
        let v = parse(b"K=\xff\xfe caf\xc3\xa9\n").unwrap_or_default();
        assert_eq!(v[0].2.as_encoded_bytes(), b"\xff\xfe caf\xc3\xa9");
    }

    #[test]
    fn errors_name_the_line_and_never_quote_it() {
        let cases = [
            ("A=1\nhunter2\n", 2, "expected KEY=value"),
            ("1A=x", 1, "variable name"),
            ("A-B=x", 1, "expected KEY=value"),
            ("=x", 1, "expected KEY=value"),
            ("A='open", 1, "single-quoted"),
            ("A=\"open\\\"", 1, "double-quoted"),
            ("A=\"\\q\"", 1, "unknown escape"),
            ("A='x' y", 1, "after the closing quote"),
            ("\n\nA=\"x\"y", 3, "after the closing quote"),
            ("A=a\0b", 1, "NUL"),
            ("export A", 1, "expected KEY=value"),
        ];
        for (text, line, msg) in cases {
            let e = bad(text);
            assert_eq!(e.line, line, "{text:?}");
            assert!(e.msg.contains(msg), "{text:?}: {}", e.msg);
            assert!(!e.msg.contains("hunter2"));
        }
    }
}
