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

/// The tokens of `environment=`: words (quoted parts join them, quotes
/// removed), and every other character a token of its own; `#` starts a
/// comment to the end of the line.
fn env_tokens(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut it = text.chars();
    let end = |out: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            out.push(std::mem::take(word));
            *in_word = false;
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
                in_word = true;
                escaped_or_quoted(c, &mut it, &mut word)?;
            }
            c if is_word(c) => {
                in_word = true;
                word.push(c);
            }
            c => {
                end(&mut out, &mut word, &mut in_word);
                out.push(c.to_string());
            }
        }
    }
    end(&mut out, &mut word, &mut in_word);
    Ok(out)
}

/// `KEY="a,b",K2=v` into pairs, in order, as supervisord reads it.
pub fn env_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut tokens = env_tokens(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &mut tokens[i..] {
            [k, eq, v, ..] if eq == "=" => out.push((std::mem::take(k), std::mem::take(v))),
            _ => {
                return Err(
                    "expected KEY=value pairs separated by commas (quote a value holding spaces, `=`, `$` or commas)"
                        .into(),
                )
            }
        }
        i += 3;
        if i < tokens.len() {
            if tokens[i] != "," {
                return Err(format!(
                    "expected a comma after {}=…, found `{}` (quote a value holding spaces or other signs)",
                    out.last().map_or("", |(k, _)| k.as_str()),
                    tokens[i]
                ));
            }
            i += 1;
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
