//! A Procfile, read as foreman and honcho read it: one process a line,
//! `NAME: COMMAND` with NAME of `[A-Za-z0-9_-]` from the first column,
//! blanks after the colon skipped, CRLF taken as LF; every other line is
//! ignored by them (and reported here unless it is blank or a `#` comment).
//! Both run each command through `sh -c` in the Procfile's dir, so a slot
//! does too whenever the command is more than plain words.
//!
//! `release` (Heroku's release phase: once per deploy, before the new
//! processes start) becomes a `oneshot` run once per container start, on
//! which every other slot depends (`completed`): the closest a container
//! has to "before the app, once".

use std::collections::HashMap;
use std::path::Path;

use svkit::config::names::{check_abs_path, check_arg_len, check_env_name, check_no_nul};
use svkit::msg::At;

use crate::common::{error, no_placeholder, noted_slot_name, read_file, utf8};
use crate::{ImportError, Imported, Note, RawSlot};

/// Far above any Procfile a person writes; a bigger file is not one.
const MAX_BYTES: usize = 1 << 20;

/// The process type Heroku runs once per release, before the others.
const RELEASE: &str = "release";

/// Import the Procfile at `path`.
pub fn import(path: &Path) -> Result<Imported, ImportError> {
    let bytes = read_file(path, MAX_BYTES, "the Procfile")?;
    let text = utf8(path, bytes, "not UTF-8 text: a Procfile is text")?;
    let cwd = procfile_dir(path)?;
    let mut out = Imported {
        files: 1,
        ..Imported::default()
    };
    // slot name -> (source name, line)
    let mut seen: HashMap<String, (String, usize)> = HashMap::new();
    let mut release = None;
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let Some((name, command)) = split_line(line) else {
            let t = line.trim();
            if !t.is_empty() && !t.starts_with('#') {
                out.notes.push(note(
                    path,
                    n,
                    "line",
                    "not a `NAME: COMMAND` line (NAME of letters, digits, `_` and `-`, \
                     from the first column): foreman and honcho ignore it too",
                ));
            }
            continue;
        };
        let slot = noted_slot_name(name, At::line(path, n), &mut out.notes)
            .map_err(|why| located(path, n, format!("{name}: {why}")))?;
        if let Some((first, at)) = seen.get(&slot) {
            let what = if first == name {
                format!("{name}: the name is already on line {at}: honcho refuses such a file and foreman runs both; rename one")
            } else {
                format!(
                    "{name}: makes the same slot name `{slot}` as {first} on line {at}: rename one"
                )
            };
            return Err(located(path, n, what));
        }
        seen.insert(slot.clone(), (name.to_string(), n));
        let command = command_argv(command, |why| note(path, n, name, why), &mut out.notes);
        for arg in &command {
            check_no_nul(arg)
                .and_then(|()| check_arg_len(arg.len() + 1, "the command"))
                .map_err(|why| located(path, n, format!("{name}: {why}")))?;
        }
        let mut slot_obj = RawSlot {
            name: slot.clone(),
            command,
            cwd: Some(cwd.clone()),
            ..RawSlot::default()
        };
        if name == RELEASE {
            slot_obj.kind = Some("oneshot".into());
            release = Some(slot.clone());
            out.notes.push(note(
                path,
                n,
                name,
                "runs once at every container start, as a oneshot the other slots wait \
                 for (`depends_on: completed`); Heroku runs it once per release: make it \
                 safe to run again (migrations usually are)",
            ));
        }
        no_placeholder(&slot_obj, At::line(path, n))?;
        out.slots.push(slot_obj);
    }
    if out.slots.is_empty() {
        return Err(error(
            path,
            "no process in it: a Procfile line is `NAME: COMMAND`",
        ));
    }
    if let Some(release) = release {
        for s in &mut out.slots {
            if s.name != release {
                s.depends_on = Some([(release.clone(), "completed".into())].into());
            }
        }
    }
    let dotenv = Path::new(&cwd).join(".env");
    if dotenv.exists() {
        out.notes.push(Note::new(
            At::file(dotenv),
            ".env",
            "foreman and honcho load it into every process; svkit does not: list it \
             in each slot's `env_file` (a strict subset of dotenv) or move its values \
             into `env`",
        ));
    }
    Ok(out)
}

/// `NAME: COMMAND` as foreman's and honcho's `^([A-Za-z0-9_-]+):\s*(.+)$`
/// takes it (a command of blanks only is no command here).
fn split_line(line: &str) -> Option<(&str, &str)> {
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    let command = rest.strip_prefix(':')?.trim_start();
    (!name.is_empty() && !command.trim().is_empty()).then_some((name, command))
}

/// The slot's dir: the Procfile's, where foreman and honcho run commands.
fn procfile_dir(path: &Path) -> Result<String, ImportError> {
    let io = |e: std::io::Error| error(path, format!("unable to resolve its directory: {e}"));
    let file = std::fs::canonicalize(path).map_err(io)?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    let dir = dir.to_str().ok_or_else(|| {
        error(
            path,
            "its directory's path is not UTF-8: a config holds UTF-8",
        )
    })?;
    check_abs_path(dir).map_err(|why| error(path, format!("its directory `{dir}` {why}")))
}

/// The argv for a Procfile command: its words when it is plain words (no
/// quoting, expansion, redirection or operator), else `sh -c`, with `exec`
/// in front when the command is one simple command, so that the program
/// replaces the shell and gets s6's signals itself.
fn command_argv(cmd: &str, note: impl Fn(&str) -> Note, notes: &mut Vec<Note>) -> Vec<String> {
    if refs_var(cmd, "PORT") {
        notes.push(note(
            "$PORT: foreman and honcho set PORT (5000, plus 100 a process); svkit sets \
             none: the container's PORT is used (`docker run -e PORT=...`), or set it in \
             the slot's `env`",
        ));
    }
    if refs_var(cmd, "PS") {
        notes.push(note(
            "$PS: foreman sets PS to the process's name (`web.1`); svkit does not: set it \
             in the slot's `env` if the program reads it",
        ));
    }
    if is_plain(cmd) {
        return cmd
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
    }
    let script = if cmd.starts_with("exec ") {
        cmd.to_string()
    } else if exec_safe(cmd) {
        format!("exec {cmd}")
    } else {
        notes.push(note(
            "more than one command (an operator, a keyword or an assignment first): it \
             runs under `sh -c` without `exec`, so the shell stays between s6 and the \
             program and a stop signals the shell; put it in a script that ends in \
             `exec PROGRAM` to give the program the signals",
        ));
        cmd.to_string()
    };
    vec!["sh".into(), "-c".into(), script]
}

/// Words a shell would pass on unchanged: no character it treats
/// specially, no `~`/`#` opening a word, no assignment as the first word.
fn is_plain(cmd: &str) -> bool {
    let special = |c: char| {
        "|&;<>()$`\\\"'*?[]{}!".contains(c)
            || (c.is_whitespace() && c != ' ' && c != '\t')
            || c.is_control()
    };
    let mut words = cmd.split([' ', '\t']).filter(|w| !w.is_empty());
    let first_ok = words.clone().next().is_some_and(|w| !w.contains('='));
    first_ok && !cmd.chars().any(special) && !words.any(|w| w.starts_with(['~', '#']))
}

/// Whether `exec ` may go in front: one simple command, i.e. no list or
/// pipeline operator, subshell or newline outside quotes and substitutions,
/// and a first word that names a program (not a keyword, builtin or
/// assignment).
fn exec_safe(cmd: &str) -> bool {
    const NOT_PROGRAMS: &[&str] = &[
        "if", "then", "for", "while", "until", "case", "{", "!", "[[", "cd", "export", "set",
        "unset", "source", ".", "eval", "trap", "ulimit", "umask", "exec", "time", "(",
    ];
    let first = cmd.split([' ', '\t']).find(|w| !w.is_empty()).unwrap_or("");
    let assignment = (first.split_once('=')).is_some_and(|(n, _)| check_env_name(n).is_ok());
    if NOT_PROGRAMS.contains(&first) || first.starts_with('(') || assignment {
        return false;
    }
    let (mut single, mut double, mut backtick, mut depth) = (false, false, false, 0usize);
    let mut prev = ' ';
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            _ if single => single = c != '\'',
            '\\' => {
                chars.next();
                prev = ' ';
                continue;
            }
            '"' if !backtick => double = !double,
            '`' => backtick = !backtick,
            '\'' if !double && !backtick => single = true,
            '(' if prev == '$' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if double || backtick || depth > 0 => {}
            ';' | '(' | ')' | '\n' => return false,
            '|' if prev != '>' => return false,
            '&' if prev != '>' && prev != '<' => return false,
            _ => {}
        }
        prev = c;
    }
    true
}

/// `$NAME` or `${NAME` followed by something that ends the name.
fn refs_var(cmd: &str, name: &str) -> bool {
    [format!("${name}"), format!("${{{name}")]
        .iter()
        .any(|pat| {
            cmd.match_indices(pat.as_str()).any(|(i, m)| {
                let next = cmd[i + m.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
}

fn located(path: &Path, line: usize, what: String) -> ImportError {
    ImportError::new(At::line(path, line), what)
}

fn note(path: &Path, line: usize, key: &str, why: &str) -> Note {
    Note::new(At::line(path, line), key, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_foreman_reads_them() {
        assert_eq!(split_line("web: a b"), Some(("web", "a b")));
        assert_eq!(split_line("web:a"), Some(("web", "a")));
        assert_eq!(split_line("my-worker_2:\t x "), Some(("my-worker_2", "x ")));
        for no in [
            "# web: a", " web: a", "web : a", "web:", "web:   ", "w.b: a", "a b: c", "",
        ] {
            assert_eq!(split_line(no), None, "{no:?}");
        }
    }

    #[test]
    fn plain_words_or_a_shell() {
        let argv = |c: &str| command_argv(c, |w| Note::new(At::file("P"), "", w), &mut Vec::new());
        assert_eq!(argv("bin/web  --port=80"), ["bin/web", "--port=80"]);
        assert_eq!(
            argv("bundle exec puma -p $PORT"),
            ["sh", "-c", "exec bundle exec puma -p $PORT"]
        );
        assert_eq!(
            argv("node app.js > /tmp/o 2>&1"),
            ["sh", "-c", "exec node app.js > /tmp/o 2>&1"]
        );
        assert_eq!(
            argv("echo \"a;b\" $(date; x)"),
            ["sh", "-c", "exec echo \"a;b\" $(date; x)"]
        );
        assert_eq!(argv("exec app 'x y'"), ["sh", "-c", "exec app 'x y'"]);
        for shell in [
            "a && b",
            "a | b",
            "a; b",
            "cd /x && a",
            "FOO=1 app",
            "a &",
            "(a)",
            "if x; then y; fi",
        ] {
            assert_eq!(argv(shell), ["sh", "-c", shell], "{shell}");
        }
    }

    #[test]
    fn variable_references() {
        assert!(refs_var("x -p $PORT", "PORT"));
        assert!(refs_var("x -p ${PORT:-80}", "PORT"));
        assert!(!refs_var("x $PORTAL", "PORT"));
        assert!(refs_var("echo $PS", "PS"));
    }
}
