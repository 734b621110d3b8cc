//! A program's `command` and `environment`: split as supervisord splits
//! them, or, where they need a shell or a value known only when the
//! container runs, a `sh -c` that keeps their meaning.

use std::collections::BTreeMap;

use super::expand::{env_vars, Seg};
use super::program::{Mode, Program};
use super::shlex;
use crate::ImportError;

impl Program<'_> {
    /// `environment=` (over `[supervisord]`'s): the env known now, and
    /// the variables whose values are known only at run time.
    #[allow(clippy::type_complexity)]
    pub(super) fn env(
        &mut self,
        mode: Mode<'_>,
    ) -> Result<Option<(BTreeMap<String, String>, Vec<(String, Vec<Seg>)>)>, ImportError> {
        let mut env: BTreeMap<String, String> = self.global.env.iter().cloned().collect();
        let mut runtime = Vec::new();
        let Some(v) = self.value("environment") else {
            return Ok(Some((env, runtime)));
        };
        let Some(pieces) = self.pieces(v, "environment", mode)? else {
            return Ok(None);
        };
        // Runtime variables stand in as words the lexer keeps whole, and
        // are put back after it.
        let mark = stand_in(&pieces);
        let mut text = String::new();
        let mut vars = Vec::new();
        for p in &pieces {
            match p {
                Seg::Lit(l) => text.push_str(l),
                Seg::Env(x) => {
                    text.push_str(&format!("{mark}{}{mark}", vars.len()));
                    vars.push(x.clone());
                }
                Seg::Proc(_) => {}
            }
        }
        let pairs = shlex::env_pairs(&text).map_err(|e| self.bad(v, "environment", e))?;
        for (k, val) in pairs {
            if vars.is_empty() || !val.contains(mark.as_str()) {
                env.insert(k, val);
                continue;
            }
            let mut ps = Vec::new();
            for (i, part) in val.split(mark.as_str()).enumerate() {
                if i % 2 == 0 {
                    if !part.is_empty() {
                        ps.push(Seg::Lit(part.to_owned()));
                    }
                } else if let Some(x) = part.parse::<usize>().ok().and_then(|n| vars.get(n)) {
                    ps.push(Seg::Env(x.clone()));
                }
            }
            env.remove(&k);
            runtime.push((k, ps));
        }
        Ok(Some((env, runtime)))
    }

    pub(super) fn command(
        &mut self,
        mode: Mode<'_>,
        runtime_env: &[(String, Vec<Seg>)],
    ) -> Result<Option<Vec<String>>, ImportError> {
        let Some(v) = self.value("command") else {
            return Err(ImportError::new(
                self.sec.at.clone(),
                format!(
                    "[{}] has no command (supervisord refuses it)",
                    self.sec.name
                ),
            ));
        };
        let Some(pieces) = self.pieces(v, "command", mode)? else {
            return Ok(None);
        };
        let lit: String = pieces
            .iter()
            .map(|p| match p {
                Seg::Lit(l) => l.as_str(),
                _ => "x",
            })
            .collect();
        let words = shlex::split(&lit).map_err(|e| self.bad(v, "command", e))?;
        if words.is_empty() {
            return Err(self.bad(v, "command", "empty (supervisord refuses it)"));
        }
        let sh = shlex::shellish(&lit);
        // The run-time variables the command reads: its own, then its env's.
        let mut known: Vec<&str> = env_vars(&pieces).collect();
        known.extend(runtime_env.iter().flat_map(|(_, ps)| env_vars(ps)));
        known.dedup();
        if !sh.any() && known.is_empty() && runtime_env.is_empty() {
            // Without variables `lit` is the plain text: its words are argv.
            return Ok(Some(words));
        }
        let mut script = String::new();
        for (k, ps) in runtime_env {
            script.push_str(&format!("export {k}=\"{}\"; ", dq(ps)));
        }
        if !sh.list {
            script.push_str("exec ");
        }
        script.push_str(&shell_text(&pieces));
        let mut why = Vec::new();
        if sh.list || sh.redirections {
            why.push("it uses shell syntax (supervisord passed such words to the program as they are, without a shell)".to_owned());
        }
        if sh.expansions {
            why.push("it uses $-expansions (supervisord passed them as they are)".to_owned());
        }
        if !known.is_empty() {
            why.push(format!("{} known only when the container runs, read from its environment then (`${{X}}`; supervisord read them when it started)", known.iter().map(|x| format!("${x}")).collect::<Vec<_>>().join(", ")));
        }
        self.note(
            v,
            "command",
            format!(
                "run under `sh -c`{}: {}",
                if sh.list { "" } else { " with exec" },
                why.join("; ")
            ),
        );
        Ok(Some(vec!["sh".into(), "-c".into(), script]))
    }
}

/// Pieces inside double quotes: text escaped, variables as `${X}`.
fn dq(ps: &[Seg]) -> String {
    let mut s = String::new();
    for p in ps {
        match p {
            Seg::Lit(l) => {
                for c in l.chars() {
                    if matches!(c, '"' | '\\' | '$' | '`') {
                        s.push('\\');
                    }
                    s.push(c);
                }
            }
            Seg::Env(x) => s.push_str(&format!("${{{x}}}")),
            Seg::Proc(_) => {}
        }
    }
    s
}

/// The command as shell text: its own text, a variable as `${X}` (closing
/// and reopening a single-quoted part around it, where supervisord would
/// have put the value inside the quotes).
fn shell_text(ps: &[Seg]) -> String {
    let mut s = String::new();
    let mut sq = false;
    let mut dqs = false;
    for p in ps {
        match p {
            Seg::Lit(l) => {
                let mut esc = false;
                for c in l.chars() {
                    if esc {
                        esc = false;
                    } else if c == '\\' && !sq {
                        esc = true;
                    } else if c == '\'' && !dqs {
                        sq = !sq;
                    } else if c == '"' && !sq {
                        dqs = !dqs;
                    }
                    s.push(c);
                }
            }
            Seg::Env(x) if sq => s.push_str(&format!("'\"${{{x}}}\"'")),
            Seg::Env(x) => s.push_str(&format!("${{{x}}}")),
            Seg::Proc(_) => {}
        }
    }
    s
}

/// A word to stand in for run-time variables that no value as written
/// holds, once its quotes and escapes are gone: `SVKITVAR`, longer while
/// one does (a value may say anything). It overlaps itself nowhere (no
/// start of it is also an end), so its copies around a variable's number
/// are found where they were put, whatever text is beside them.
fn stand_in(pieces: &[Seg]) -> String {
    let bare: String = (pieces.iter())
        .flat_map(|p| match p {
            Seg::Lit(l) => l.chars(),
            _ => "\0".chars(),
        })
        .filter(|c| !matches!(c, '"' | '\'' | '\\'))
        .collect();
    let mut mark = String::from("SVKITVAR");
    while bare.contains(mark.as_str()) {
        mark.push('_');
    }
    mark
}
