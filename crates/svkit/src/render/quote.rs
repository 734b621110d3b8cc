//! Quoting for POSIX sh.
//!
//! Inside single quotes sh takes every byte literally except `'` itself,
//! which is written as `'\''` (close, escaped quote, reopen). That covers
//! `$`, backticks, backslashes, newlines and any UTF-8. Words made only of
//! characters sh never treats specially are left bare so that `cat run`
//! reads like the command an author wrote.

use std::borrow::Cow;

/// Characters that need no quoting anywhere in a word. Deliberately
/// excludes `~` (tilde expansion at word start), `#` (comment at word
/// start), `=` is safe because we never put a word in assignment position.
fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
}

/// One sh word that evaluates to exactly `s`.
pub fn sh_quote(s: &str) -> Cow<'_, str> {
    if !s.is_empty() && s.chars().all(is_safe) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("'{}'", s.replace('\'', "'\\''")))
}

/// The value of the word [`sh_quote`] wrote at the start of `s` (what
/// follows it is left alone); None when `s` does not start with one.
pub fn sh_unquote(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    let mut any = false;
    loop {
        if let Some(r) = rest.strip_prefix('\'') {
            let end = r.find('\'')?;
            out.push_str(&r[..end]);
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("\\'") {
            out.push('\'');
            rest = r;
        } else {
            let end = rest.find(|c| !is_safe(c)).unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
        any = true;
    }
    any.then_some(out)
}

/// Words joined by spaces.
pub fn sh_words(words: &[String]) -> String {
    let quoted: Vec<Cow<str>> = words.iter().map(|w| sh_quote(w)).collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("app"), "app");
        assert_eq!(sh_quote("--port=9119"), "--port=9119");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote("$(x)`y`"), "'$(x)`y`'");
        assert_eq!(sh_quote("~root"), "'~root'");
        assert_eq!(sh_quote("#x"), "'#x'");
        assert_eq!(sh_quote("a\nb"), "'a\nb'");
        // A comment line: a newline would end it (see `run`).
        assert_eq!(crate::msg::escape("a\nb"), "a\\nb");
    }

    #[test]
    fn unquoting_undoes_quoting() {
        for s in ["app", "/var/log/a b", "it's", "a\nb", "''", "$(x)", "~root"] {
            let q = format!("{}\nnext line", sh_quote(s));
            assert_eq!(sh_unquote(&q).as_deref(), Some(s), "{q}");
        }
        assert_eq!(sh_unquote("\nx"), None);
        assert_eq!(sh_unquote("'unterminated"), None);
    }
}
