//! Python's `shlex` in POSIX mode, the two ways supervisord uses it:
//! `shlex.split(command)` splits a `command=` into argv, and
//! `dict_of_key_value_pairs` reads `environment=KEY="a,b",K2=v`.

/// `shlex.split(text)`: words split at whitespace; `'…'` literal, `"…"`
/// with `\"` and `\\` escapes, `\` outside quotes escaping any character.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    if !text.contains(['\\', '\'', '"']) {
        // Nothing quoted or escaped: words are the runs between spaces.
        return Ok(text
            .split(is_space)
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect());
    }
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

/// Reads a quoted part up to its closing `quote` into `word`.
fn quoted(quote: char, it: &mut std::str::Chars<'_>, word: &mut String) -> Result<(), String> {
    loop {
        match it.next() {
            None => return Err(format!("no closing quotation (a `{quote}` opened)")),
            Some(c) if c == quote => return Ok(()),
            Some('\\') if quote == '"' => match it.next() {
                Some(n @ ('"' | '\\')) => word.push(n),
                Some(n) => {
                    word.push('\\');
                    word.push(n);
                }
                None => return Err(format!("no closing quotation (a `{quote}` opened)")),
            },
            Some(c) => word.push(c),
        }
    }
}

/// Characters of a word for `dict_of_key_value_pairs`' lexer: shlex's
/// POSIX wordchars plus the `/.+-():` supervisord adds.
fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || "/.+-():".contains(c)
        || !c.is_ascii()
            && "ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ".contains(c)
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

/// The tokens of `environment=`: words (quoted parts join them, quotes
/// removed), and every other character a token of its own; `#` starts a
/// comment to the end of the line.
fn env_tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut it = text.chars();
    let end = |out: &mut Vec<Tok>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    // A word starts with room for a usual value (bounded: a huge value
    // must not make every word as big): growing it by doubling from empty
    // cost more allocations than the words.
    let start = |word: &mut String, in_word: &mut bool, rest: &str| {
        if !*in_word {
            word.reserve(rest.len().min(60) + 4);
            *in_word = true;
        }
    };
    while let Some(c) = it.next() {
        match c {
            c if is_space(c) => end(&mut out, &mut word, &mut in_word),
            '#' => {
                end(&mut out, &mut word, &mut in_word);
                for n in it.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            '\\' | '\'' | '"' => {
                start(&mut word, &mut in_word, it.as_str());
                escaped_or_quoted(c, &mut it, &mut word)?;
            }
            c if is_word(c) => {
                start(&mut word, &mut in_word, it.as_str());
                word.push(c);
            }
            c => {
                end(&mut out, &mut word, &mut in_word);
                out.push(Tok::Sign(c));
            }
        }
    }
    end(&mut out, &mut word, &mut in_word);
    Ok(out)
}

/// `KEY="a,b",K2=v` into pairs, in order, as supervisord reads it.
pub fn env_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut toks = env_tokens(text)?.into_iter();
    let mut out = Vec::new();
    while let Some(k) = toks.next() {
        match (toks.next(), toks.next()) {
            (Some(eq), Some(v)) if eq.is('=') => out.push((k.into_text(), v.into_text())),
            _ => {
                return Err(
                    "expected KEY=value pairs separated by commas (quote a value holding spaces, `=`, `$` or commas)"
                        .into(),
                )
            }
        }
        if let Some(t) = toks.next().filter(|t| !t.is(',')) {
            return Err(format!(
                "expected a comma after {}=…, found `{t}` (quote a value holding spaces or other signs)",
                out.last().map_or("", |(k, _)| k.as_str()),
            ));
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
mod tests {
    use super::*;

    #[test]
    fn split_as_python_shlex() {
        assert_eq!(
            split(r#"php -d "memory_limit = 1G" 'a b'c \$x "q\"t" "\n""#).unwrap(),
            [
                "php",
                "-d",
                "memory_limit = 1G",
                "a bc",
                "$x",
                "q\"t",
                "\\n"
            ]
        );
        assert!(split("a 'b").is_err());
        assert_eq!(split("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn env_pairs_as_supervisord() {
        assert_eq!(
            env_pairs(r#"KEY="a,b",K2=v, URL=http://x:80/y,E="""#).unwrap(),
            [
                ("KEY".into(), "a,b".into()),
                ("K2".into(), "v".into()),
                ("URL".into(), "http://x:80/y".into()),
                ("E".into(), String::new()),
            ]
        );
        let e = env_pairs("A=b c").unwrap_err();
        assert!(e.contains("after A=…, found `c`"), "{e}");
        assert!(env_pairs("A=$HOME").is_err());
        assert!(env_pairs("A").is_err());
        assert!(env_pairs("A='x").is_err());
        // The lexer's tokens are strings: a quoted `=` or `,` reads as the
        // sign itself, a sign may be a key or a value, and one a comma
        // does not end the list.
        assert_eq!(
            env_pairs(r#"A "=" 1 "," B=2,"#).unwrap(),
            [("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(
            env_pairs("A==,B=(").unwrap(),
            [("A".into(), "=".into()), ("B".into(), "(".into())]
        );
        let e = env_pairs("A=1;B=2").unwrap_err();
        assert!(e.contains("after A=…, found `;`"), "{e}");
    }

    #[test]
    fn shell_syntax_is_seen_outside_quotes() {
        assert!(!shellish("nginx -g 'daemon off;'").any());
        assert!(shellish("a | b").list);
        assert!(shellish("a && b").list);
        let r = shellish("a >> /log 2>&1");
        assert!(r.redirections && !r.list);
        assert!(shellish("echo \"$HOME\"").expansions);
        assert!(!shellish("echo '$HOME'").expansions);
        assert!(!shellish("price 5$").expansions);
    }
}
