//! Python's `shlex` in POSIX mode, the two ways supervisord uses it:
//! `shlex.split(command)` splits a `command=` into argv, and
//! `dict_of_key_value_pairs` reads `environment=KEY="a,b",K2=v`.

/// `shlex.split(text)`: words split at whitespace; `'…'` literal, `"…"`
/// with `\"` and `\\` escapes, `\` outside quotes escaping any character.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut it = text.chars();
    while let Some(c) = it.next() {
        match c {
            c if is_space(c) => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' | '\'' | '"' => {
                in_word = true;
                escaped_or_quoted(c, &mut it, &mut word)?;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// A `\` escape (the next character, whatever it is) or a quoted part,
/// joined to `word`.
fn escaped_or_quoted(
    c: char,
    it: &mut std::str::Chars<'_>,
    word: &mut String,
) -> Result<(), String> {
    if c != '\\' {
        return quoted(c, it, word);
    }
    match it.next() {
        Some(n) => {
            word.push(n);
            Ok(())
        }
        None => Err("no escaped character after a final `\\`".into()),
    }
}

/// Reads a quoted part up to its closing `quote` into `word`: the text
/// up to the next quote (or, in double quotes, escape) at once.
fn quoted(quote: char, it: &mut std::str::Chars<'_>, word: &mut String) -> Result<(), String> {
    let unclosed = || format!("no closing quotation (a `{quote}` opened)");
    let dq = quote == '"';
    loop {
        let s = it.as_str();
        // `quote` and `\\` are ASCII: where either is, a character starts.
        let stop = s
            .bytes()
            .position(|b| char::from(b) == quote || (dq && b == b'\\'))
            .ok_or_else(unclosed)?;
        word.push_str(&s[..stop]);
        *it = s[stop + 1..].chars();
        if s.as_bytes()[stop] != b'\\' {
            return Ok(());
        }
        match it.next() {
            Some(n @ ('"' | '\\')) => word.push(n),
            Some(n) => {
                word.push('\\');
                word.push(n);
            }
            None => return Err(unclosed()),
        }
    }
}

/// Characters of a word for `dict_of_key_value_pairs`' lexer: shlex's
/// POSIX wordchars plus the `/.+-():` supervisord adds.
fn is_word(c: char) -> bool {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii() => is_word_byte(b),
        _ => "ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ".contains(c),
    }
}

/// [`is_word`] for an ASCII character.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'.' | b'+' | b'-' | b'(' | b')' | b':')
}

/// A token of `environment=`: a word, or any other character (kept as a
/// char: most are the `=` and `,` between words, and a String each cost
/// an allocation).
enum Tok {
    Word(String),
    Sign(char),
}

impl Tok {
    /// Whether the token reads as `c`, as the lexer's string tokens are
    /// compared (a quoted `","` is a word that reads as a comma).
    fn is(&self, c: char) -> bool {
        match self {
            Tok::Sign(s) => *s == c,
            Tok::Word(w) => w.strip_prefix(c) == Some(""),
        }
    }

    fn into_text(self) -> String {
        match self {
            Tok::Word(w) => w,
            Tok::Sign(c) => c.to_string(),
        }
    }
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Word(w) => f.write_str(w),
            Tok::Sign(c) => write!(f, "{c}"),
        }
    }
}

/// The tokens of `environment=`, one at a time: words (quoted parts join
/// them, quotes removed), and every other character a token of its own;
/// `#` starts a comment to the end of the line. Read as they are asked
/// for: a list of them all cost an allocation and a move of each.
struct Lexer<'a> {
    rest: &'a str,
    failed: bool,
}

impl Lexer<'_> {
    fn next(&mut self) -> Option<Result<Tok, String>> {
        if self.failed {
            return None;
        }
        let mut word: Option<String> = None;
        loop {
            let Some(c) = self.rest.chars().next() else {
                return word.map(|w| Ok(Tok::Word(w)));
            };
            match c {
                c if is_space(c) => {
                    self.rest = &self.rest[1..];
                    if let Some(w) = word {
                        return Some(Ok(Tok::Word(w)));
                    }
                }
                '\\' | '\'' | '"' => {
                    let mut it = self.rest[1..].chars();
                    let w = word.get_or_insert_with(String::new);
                    if let Err(e) = escaped_or_quoted(c, &mut it, w) {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    self.rest = it.as_str();
                }
                c if is_word(c) => {
                    // A run of ASCII word characters, byte by byte; a
                    // character past ASCII, alone (the loop goes on with
                    // the same word).
                    let n = match self.rest.bytes().position(|b| !is_word_byte(b)) {
                        Some(0) => c.len_utf8(),
                        Some(n) => n,
                        None => self.rest.len(),
                    };
                    word.get_or_insert_with(String::new)
                        .push_str(&self.rest[..n]);
                    self.rest = &self.rest[n..];
                }
                // A word ends before a sign or comment, which the next
                // call reads.
                _ if word.is_some() => return word.map(|w| Ok(Tok::Word(w))),
                '#' => self.rest = self.rest.find('\n').map_or("", |n| &self.rest[n + 1..]),
                c => {
                    self.rest = &self.rest[c.len_utf8()..];
                    return Some(Ok(Tok::Sign(c)));
                }
            }
        }
    }

    /// `err`, unless the rest of the text does not read as tokens: that
    /// error comes first, as all the tokens are read before any pair.
    fn unless_later(&mut self, err: String) -> String {
        while let Some(t) = self.next() {
            if let Err(e) = t {
                return e;
            }
        }
        err
    }
}

/// `KEY="a,b",K2=v` into pairs, in order, as supervisord reads it.
pub fn env_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut toks = Lexer {
        rest: text,
        failed: false,
    };
    let mut out = Vec::new();
    while let Some(k) = toks.next() {
        let k = k?;
        let eq = toks.next().transpose()?;
        match (eq, toks.next().transpose()?) {
            (Some(eq), Some(v)) if eq.is('=') => out.push((k.into_text(), v.into_text())),
            _ => {
                return Err(toks.unless_later(
                    "expected KEY=value pairs separated by commas (quote a value holding spaces, `=`, `$` or commas)"
                        .into(),
                ))
            }
        }
        if let Some(t) = toks.next().transpose()?.filter(|t| !t.is(',')) {
            let e = format!(
                "expected a comma after {}=…, found `{t}` (quote a value holding spaces or other signs)",
                out.last().map_or("", |(k, _)| k.as_str()),
            );
            return Err(toks.unless_later(e));
        }
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
                for n in it.by_ref() {
                    if n == '\'' {
                        break;
                    }
                }
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
