//! Python's `shlex` in POSIX mode, the two ways supervisord uses it:
//! `shlex.split(command)` splits a `command=` into argv, and
//! `dict_of_key_value_pairs` reads `environment=KEY="a,b",K2=v`.

use std::str::Chars;

use svkit::config::names::check_env_name;

/// `shlex.split(text)`: words split at whitespace; `'…'` literal, `"…"`
/// with `\"` and `\\` escapes, `\` outside quotes escaping any character.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    lex(text, false)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Reads a quoted part up to its closing `quote` into `word`.
fn quoted(quote: char, it: &mut Chars<'_>, word: &mut String) -> Result<(), String> {
    let unclosed = || format!("no closing quotation (a `{quote}` opened)");
    loop {
        match it.next().ok_or_else(unclosed)? {
            c if c == quote => return Ok(()),
            '\\' if quote == '"' => match it.next().ok_or_else(unclosed)? {
                n @ ('"' | '\\') => word.push(n),
                n => {
                    word.push('\\');
                    word.push(n);
                }
            },
            c => word.push(c),
        }
    }
}

/// Characters of a word for `dict_of_key_value_pairs`' lexer: shlex's
/// POSIX wordchars plus the `/.+-():` supervisord adds.
fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || "_/.+-():".contains(c)
        || "ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ".contains(c)
}

/// [`split`]'s words, or for `env`, the tokens of `environment=`, as
/// strings (a quoted `","` reads as a comma): words (quoted parts join
/// them, quotes removed), and every other character a token of its own;
/// `#` starts a comment to the end of the line. All read before any pair,
/// as supervisord's lexer does: a text that does not read as tokens is
/// that error.
fn lex(text: &str, env: bool) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut it = text.chars();
    while let Some(c) = it.next() {
        match c {
            c if is_space(c) => out.extend(word.take()),
            // An escape: the next character, whatever it is.
            '\\' => (word.get_or_insert_default())
                .push(it.next().ok_or("no escaped character after a final `\\`")?),
            '\'' | '"' => quoted(c, &mut it, word.get_or_insert_default())?,
            c if !env || is_word(c) => word.get_or_insert_default().push(c),
            '#' => {
                out.extend(word.take());
                it.by_ref().find(|&n| n == '\n');
            }
            c => {
                out.extend(word.take());
                out.push(c.to_string());
            }
        }
    }
    out.extend(word);
    Ok(out)
}

/// `KEY="a,b",K2=v` into pairs, in order, as supervisord reads it; then
/// each KEY checked as svkit checks an env name.
pub fn env_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut toks = lex(text, true)?.into_iter();
    let mut out = Vec::new();
    while let Some(k) = toks.next() {
        match (toks.next(), toks.next()) {
            (Some(eq), Some(v)) if eq == "=" => out.push((k, v)),
            _ => return Err("expected KEY=value pairs separated by commas (quote a value holding spaces, `=`, `$` or commas)".into()),
        }
        if let Some(t) = toks.next().filter(|t| t != ",") {
            return Err(format!(
                "expected a comma after {}=…, found `{t}` (quote a value holding spaces or other signs)",
                out.last().map_or("", |(k, _)| k.as_str()),
            ));
        }
    }
    for (k, _) in &out {
        check_env_name(k).map_err(|e| format!("`{k}`: {e}"))?;
    }
    Ok(out)
}

/// What shell syntax an (expanded) command holds, outside single quotes:
/// supervisord never runs a shell, but such a command was meant for one.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shellish {
    /// `$X`, `${X}`, `` `…` ``, `$(…)`: expansions.
    pub expansions: bool,
    /// `|`, `&&`, `||`, `;`, `&`, `(`, `)`: more than one simple command,
    /// so `exec` cannot go in front.
    pub list: bool,
    /// `<`, `>` (with `2>&1`): redirections, fine after `exec`.
    pub redirections: bool,
}

impl Shellish {
    pub fn any(&self) -> bool {
        self.expansions || self.list || self.redirections
    }
}

pub fn shellish(text: &str) -> Shellish {
    let mut s = Shellish::default();
    let mut it = text.chars().peekable();
    let mut dq = false;
    let mut prev = ' ';
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                it.next();
                prev = 'x';
                continue;
            }
            '\'' if !dq => {
                it.by_ref().find(|&n| n == '\'');
            }
            '"' => dq = !dq,
            '$' if it
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || "_{(".contains(*n)) =>
            {
                s.expansions = true
            }
            '`' => s.expansions = true,
            _ if dq => {}
            '<' | '>' => s.redirections = true,
            '&' if matches!(prev, '<' | '>') => {}
            '|' | '&' | ';' | '(' | ')' => s.list = true,
            _ => {}
        }
        prev = c;
    }
    s
}

#[cfg(test)]
mod tests;
