//! One `[program:x]` into one slot (a templated one for `numprocs`), key
//! by key; see docs/import.md for the table this follows.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as J};

use super::expand::{self, Known, Seg, Spec, Val};
use super::ini::{Section, Value};
use super::shlex;
use super::words;
use crate::config::names;
use crate::import::{ImportError, Note};

/// What `[supervisord]` gives every program.
#[derive(Default)]
pub struct Global {
    pub user: Option<String>,
    pub env: Vec<(String, String)>,
}

/// One slot built, with what the passes after it need.
pub struct Built {
    pub slot: Map<String, J>,
    pub name: String,
    pub priority: i64,
    pub autostart: bool,
    pub file: PathBuf,
    pub line: u32,
    /// Where `stdout_logfile` was written, when it became `log.dir`.
    pub log_at: Option<(PathBuf, u32)>,
}

/// How `%(process_num)` is written out.
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// One process of this number.
    One(i64),
    /// A template over these numbers: `%(process_num)` written as in
    /// `process_name` becomes `{instance}`.
    Template(&'a Spec, &'a [i64]),
}

/// A resolved value: text, and variables known only at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Var(String),
}

pub struct Program<'a> {
    pub sec: &'a Section,
    pub defaults: &'a [(String, Value)],
    pub global: &'a Global,
    pub group: &'a str,
    pub notes: &'a mut Vec<Note>,
}

/// Keys this importer reads; every other key of a program is reported.
pub const KNOWN: &[&str] = &[
    "command",
    "process_name",
    "numprocs",
    "numprocs_start",
    "priority",
    "autostart",
    "startsecs",
    "startretries",
    "autorestart",
    "exitcodes",
    "stopsignal",
    "stopwaitsecs",
    "user",
    "redirect_stderr",
    "stdout_logfile",
    "stdout_logfile_maxbytes",
    "stdout_logfile_backups",
    "environment",
    "directory",
];

/// Keys supervisord knows that have no svkit equivalent, and why.
pub const DROPPED: &[(&str, &str)] = &[
    ("stopasgroup", "s6 signals the program itself, not its process group: a program that leaves children must end them on its down signal"),
    ("killasgroup", "s6 signals the program itself, not its process group: a program that leaves children must end them on its down signal"),
    ("umask", "no umask key in svkit: set it in the command (`sh -c 'umask 022; exec …'`)"),
    ("serverurl", "there is no supervisord to talk to: svctl talks to s6"),
    ("stdout_capture_maxbytes", "no process communication events in svkit"),
    ("stdout_events_enabled", "no process communication events in svkit"),
    ("stdout_syslog", "svkit logs to its log dir and docker logs, not syslog"),
    ("stderr_logfile", "svkit joins stderr to stdout (exec 2>&1): its lines go where stdout's go"),
    ("stderr_logfile_maxbytes", "svkit joins stderr to stdout: see stdout_logfile_maxbytes"),
    ("stderr_logfile_backups", "svkit joins stderr to stdout: see stdout_logfile_backups"),
    ("stderr_capture_maxbytes", "no process communication events in svkit"),
    ("stderr_events_enabled", "no process communication events in svkit"),
    ("stderr_syslog", "svkit logs to its log dir and docker logs, not syslog"),
];

fn err(v_file: &Path, line: u32, what: String) -> ImportError {
    ImportError {
        file: v_file.to_path_buf(),
        line: Some(line),
        what,
    }
}

impl Program<'_> {
    pub fn program_name(&self) -> &str {
        self.sec
            .name
            .strip_prefix("program:")
            .unwrap_or(&self.sec.name)
    }

    pub(super) fn get_cloned(&self, key: &str) -> Option<Value> {
        self.get(key).cloned()
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.sec
            .get(key)
            .or_else(|| self.defaults.iter().find(|(k, _)| k == key).map(|(_, v)| v))
    }

    pub(super) fn bad(&self, v: &Value, key: &str, what: impl std::fmt::Display) -> ImportError {
        err(&v.file, v.line, format!("{key}: {what}"))
    }

    pub(super) fn note(&mut self, v: &Value, key: &str, why: impl Into<String>) {
        self.notes.push(Note {
            file: v.file.clone(),
            line: Some(v.line),
            key: key.into(),
            why: why.into(),
        });
    }

    pub(super) fn segs(
        &self,
        v: &Value,
        key: &str,
        numprocs: u32,
    ) -> Result<Vec<Seg>, ImportError> {
        // supervisord's %(here)s is absolute.
        let dir = v
            .file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = super::read::abspath(dir);
        let here = dir.to_str().ok_or_else(|| {
            self.bad(
                v,
                key,
                "the file's directory is not UTF-8: %(here)s cannot be expanded",
            )
        })?;
        let k = Known {
            here,
            program_name: self.program_name(),
            group_name: self.group,
            numprocs,
        };
        expand::expand(&v.text, &k).map_err(|e| self.bad(v, key, e))
    }

    pub(super) fn int(
        &self,
        key: &str,
        lo: i64,
        hi: i64,
        default: i64,
    ) -> Result<i64, ImportError> {
        match self.get(key) {
            Some(v) => words::integer(&v.text, lo, hi).map_err(|e| self.bad(v, key, e)),
            None => Ok(default),
        }
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, ImportError> {
        match self.get(key) {
            Some(v) => words::boolean(&v.text).map_err(|e| self.bad(v, key, e)),
            None => Ok(default),
        }
    }

    /// The slots of this program: one, or a template for `numprocs`.
    pub fn build(&mut self) -> Result<Vec<Built>, ImportError> {
        self.report_keys();
        let numprocs = self.int("numprocs", 1, 100_000, 1)?;
        let start = self.int("numprocs_start", 0, 1_000_000_000, 0)?;
        let nums: Vec<i64> = (start..start + numprocs).collect();
        let numprocs = u32::try_from(numprocs).unwrap_or(u32::MAX);
        let default_name = Value {
            text: "%(program_name)s".into(),
            file: self.sec.file.clone(),
            line: self.sec.line,
            replaced: Vec::new(),
        };
        let pn = self.get("process_name").cloned().unwrap_or(default_name);
        let name_segs = self.segs(&pn, "process_name", numprocs)?;
        if expand::env_vars(&name_segs).next().is_some() {
            return Err(self.bad(&pn, "process_name", "uses a variable known only at run time: a slot's name must be known when importing"));
        }
        let spec = name_segs.iter().find_map(|s| match s {
            Seg::Proc(spec) => Some(spec.clone()),
            _ => None,
        });
        if nums.len() == 1 {
            let one = self.one(&pn, &name_segs, Mode::One(start), numprocs)?;
            return Ok(one.into_iter().collect());
        }
        let Some(spec) = spec else {
            return Err(self.bad(&pn, "process_name", "numprocs is over 1 but process_name has no %(process_num) (supervisord refuses it)"));
        };
        if let Some(t) = self.one(&pn, &name_segs, Mode::Template(&spec, &nums), numprocs)? {
            return Ok(vec![t]);
        }
        // %(process_num) written otherwise somewhere than in the name: one
        // `{instance}` cannot stand for both, so each process is a slot.
        let mut out = Vec::new();
        for &k in &nums {
            out.extend(self.one(&pn, &name_segs, Mode::One(k), numprocs)?);
        }
        let v = self.get("numprocs").cloned().unwrap_or(pn);
        self.note(&v, "numprocs", format!("{} slots of their own, not a template: %(process_num) is written otherwise elsewhere than in process_name", out.len()));
        Ok(out)
    }

    fn report_keys(&mut self) {
        let keys: Vec<(String, Value)> = self.sec.keys.clone();
        for (k, v) in &keys {
            for (file, line) in &v.replaced {
                self.notes.push(Note {
                    file: file.clone(),
                    line: Some(*line),
                    key: k.clone(),
                    why: format!(
                        "written again at {}:{}: the later value wins, as in supervisord",
                        crate::msg::path(&v.file),
                        v.line
                    ),
                });
            }
            if KNOWN.contains(&k.as_str()) {
                continue;
            }
            match DROPPED.iter().find(|(d, _)| d == k) {
                Some((_, why)) => {
                    let off = matches!(
                        k.as_str(),
                        "stopasgroup"
                            | "killasgroup"
                            | "stdout_events_enabled"
                            | "stderr_events_enabled"
                            | "stdout_syslog"
                            | "stderr_syslog"
                    ) && words::boolean(&v.text) == Ok(false);
                    if !off {
                        self.note(v, k, format!("not carried over: {why}"));
                    }
                }
                None => self.note(
                    v,
                    k,
                    "not carried over: not a key supervisord knows (it ignores it too)",
                ),
            }
        }
    }

    /// The pieces of `segs` in `mode`; `None` when `%(process_num)` is
    /// written otherwise than the template's name has it.
    fn pieces(segs: &[Seg], mode: Mode<'_>) -> Option<Vec<Piece>> {
        let mut out = Vec::new();
        for s in segs {
            let p = match (s, mode) {
                (Seg::Lit(l), _) => Piece::Lit(l.clone()),
                (Seg::Env(v), _) => Piece::Var(v.clone()),
                (Seg::Proc(spec), Mode::One(k)) => {
                    Piece::Lit(expand::format(spec, Val::Int(k)).ok()?)
                }
                (Seg::Proc(spec), Mode::Template(t, nums)) => {
                    let same = nums.iter().all(|&k| {
                        expand::format(spec, Val::Int(k)) == expand::format(t, Val::Int(k))
                    });
                    if !same {
                        return None;
                    }
                    Piece::Lit(names::INSTANCE_VAR.into())
                }
            };
            out.push(p);
        }
        Some(out)
    }

    fn one(
        &mut self,
        pn: &Value,
        name_segs: &[Seg],
        mode: Mode<'_>,
        numprocs: u32,
    ) -> Result<Option<Built>, ImportError> {
        let Some(name) = self.name(pn, name_segs, mode)? else {
            return Ok(None);
        };
        let mut slot = Map::new();
        slot.insert("name".into(), J::String(name.clone()));
        if let Mode::Template(spec, nums) = mode {
            let mut inst = Vec::new();
            for &k in nums {
                let i = expand::format(spec, Val::Int(k))
                    .map_err(|e| self.bad(pn, "process_name", e))?;
                names::check_instance_name(&i)
                    .map_err(|e| self.bad(pn, "process_name", format!("instance `{i}`: {e}")))?;
                inst.push(J::String(i));
            }
            slot.insert("instances".into(), json!({ "names": inst }));
        }
        // environment first: a value known only at run time moves into
        // the command's shell.
        let Some((env, runtime_env)) = self.env(mode, numprocs)? else {
            return Ok(None);
        };
        let Some(command) = self.command(mode, numprocs, &runtime_env)? else {
            return Ok(None);
        };
        slot.insert("command".into(), json!(command));
        let user = match self.get("user").cloned() {
            Some(v) => {
                let segs = self.segs(&v, "user", numprocs)?;
                let text = expand::resolved(&segs, 0).ok_or_else(|| {
                    self.bad(&v, "user", "uses a variable known only at run time")
                })?;
                names::check_user(&text)
                    .map_err(|e| self.bad(&v, "user", format!("`{text}`: {e}")))?;
                Some(text)
            }
            None => self.global.user.clone(),
        };
        if let Some(u) = user {
            slot.insert("user".into(), J::String(u));
        }
        if let Some(v) = self.get("directory").cloned() {
            let segs = self.segs(&v, "directory", numprocs)?;
            let Some(p) = Self::pieces(&segs, mode) else {
                return Ok(None);
            };
            match plain(&p) {
                None => self.note(
                    &v,
                    "directory",
                    "not carried over: it uses a variable known only at run time; set cwd by hand",
                ),
                Some(d) => match names::check_abs_path(&d) {
                    Ok(d) => {
                        slot.insert("cwd".into(), J::String(d));
                    }
                    Err(e) => self.note(
                        &v,
                        "directory",
                        format!("not carried over: `{d}` {e} (svkit's cwd is absolute)"),
                    ),
                },
            }
        }
        if !env.is_empty() {
            slot.insert("env".into(), J::Object(env));
        }
        let autostart = self.boolean("autostart", true)?;
        if !autostart {
            slot.insert("autostart".into(), J::String("never".into()));
        }
        let Some(log_at) = super::policy::log(self, &mut slot, mode_pieces(mode), numprocs)? else {
            return Ok(None);
        };
        super::policy::restart(self, &mut slot)?;
        super::policy::stop(self, &mut slot)?;
        let priority = self.int("priority", -1_000_000_000, 1_000_000_000, 999)?;
        Ok(Some(Built {
            slot,
            name,
            priority,
            autostart,
            file: self.sec.file.clone(),
            line: self.sec.line,
            log_at,
        }))
    }

    fn name(
        &mut self,
        pn: &Value,
        segs: &[Seg],
        mode: Mode<'_>,
    ) -> Result<Option<String>, ImportError> {
        let mut name = String::new();
        let mut raw = String::new();
        for s in segs {
            match (s, mode) {
                (Seg::Lit(l), _) => {
                    raw.push_str(l);
                    name.push_str(&name_part(l));
                }
                (Seg::Proc(spec), Mode::Template(t, _)) if spec == t => {
                    raw.push_str(names::INSTANCE_VAR);
                    name.push_str(names::INSTANCE_VAR);
                }
                (Seg::Proc(spec), Mode::One(k)) => {
                    let n = expand::format(spec, Val::Int(k))
                        .map_err(|e| self.bad(pn, "process_name", e))?;
                    raw.push_str(&n);
                    name.push_str(&n);
                }
                (Seg::Proc(_), Mode::Template(..)) => return Ok(None),
                // Refused before: a name is known when importing.
                (Seg::Env(_), _) => {}
            }
        }
        let trimmed = name.trim_start_matches(['.', '_', '-']).to_owned();
        let mut name = trimmed;
        while name.contains("..") {
            name = name.replace("..", ".");
        }
        let expanded = name.replace(names::INSTANCE_VAR, "0");
        names::check_slot_name(&expanded)
            .map_err(|e| self.bad(pn, "process_name", format!("slot name `{name}`: {e}")))?;
        if name != raw {
            self.note(pn, "process_name", format!("`{raw}` is slot `{name}`: svkit names are lowercase a-z, 0-9, `.`, `_` and `-`"));
        }
        Ok(Some(name))
    }

    /// `environment=` (over `[supervisord]`'s): the env known now, and
    /// the variables whose values are known only at run time.
    #[allow(clippy::type_complexity)]
    fn env(
        &mut self,
        mode: Mode<'_>,
        numprocs: u32,
    ) -> Result<Option<(Map<String, J>, Vec<(String, Vec<Piece>)>)>, ImportError> {
        let mut env = Map::new();
        for (k, v) in &self.global.env {
            env.insert(k.clone(), J::String(v.clone()));
        }
        let mut runtime = Vec::new();
        let Some(v) = self.get("environment").cloned() else {
            return Ok(Some((env, runtime)));
        };
        let segs = self.segs(&v, "environment", numprocs)?;
        let Some(pieces) = Self::pieces(&segs, mode) else {
            return Ok(None);
        };
        // Runtime variables stand in as words the lexer keeps whole, and
        // are put back after it.
        let mut text = String::new();
        let mut vars = Vec::new();
        for p in &pieces {
            match p {
                Piece::Lit(l) => text.push_str(l),
                Piece::Var(x) => {
                    text.push_str(&format!("SVKITVAR{}SVKITVAR", vars.len()));
                    vars.push(x.clone());
                }
            }
        }
        let pairs = shlex::env_pairs(&text).map_err(|e| self.bad(&v, "environment", e))?;
        for (k, val) in pairs {
            names::check_env_name(&k)
                .map_err(|e| self.bad(&v, "environment", format!("`{k}`: {e}")))?;
            if !val.contains("SVKITVAR") {
                env.insert(k, J::String(val));
                continue;
            }
            let mut ps = Vec::new();
            for (i, part) in val.split("SVKITVAR").enumerate() {
                if i % 2 == 0 {
                    if !part.is_empty() {
                        ps.push(Piece::Lit(part.to_owned()));
                    }
                } else if let Some(x) = part.parse::<usize>().ok().and_then(|n| vars.get(n)) {
                    ps.push(Piece::Var(x.clone()));
                }
            }
            env.remove(&k);
            runtime.push((k, ps));
        }
        Ok(Some((env, runtime)))
    }

    fn command(
        &mut self,
        mode: Mode<'_>,
        numprocs: u32,
        runtime_env: &[(String, Vec<Piece>)],
    ) -> Result<Option<Vec<String>>, ImportError> {
        let Some(v) = self.get("command").cloned() else {
            return Err(err(
                &self.sec.file,
                self.sec.line,
                format!(
                    "[{}] has no command (supervisord refuses it)",
                    self.sec.name
                ),
            ));
        };
        let segs = self.segs(&v, "command", numprocs)?;
        let Some(pieces) = Self::pieces(&segs, mode) else {
            return Ok(None);
        };
        let lit: String = pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(l) => l.as_str(),
                Piece::Var(_) => "x",
            })
            .collect();
        let words = shlex::split(&lit).map_err(|e| self.bad(&v, "command", e))?;
        if words.is_empty() {
            return Err(self.bad(&v, "command", "empty (supervisord refuses it)"));
        }
        let sh = shlex::shellish(&lit);
        let vars: Vec<&str> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Var(x) => Some(x.as_str()),
                Piece::Lit(_) => None,
            })
            .collect();
        if !sh.any() && vars.is_empty() && runtime_env.is_empty() {
            return Ok(Some(
                shlex::split(&plain(&pieces).unwrap_or_default())
                    .map_err(|e| self.bad(&v, "command", e))?,
            ));
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
        let mut known: Vec<&str> = vars.clone();
        known.extend(runtime_env.iter().flat_map(|(_, ps)| {
            ps.iter().filter_map(|p| match p {
                Piece::Var(x) => Some(x.as_str()),
                Piece::Lit(_) => None,
            })
        }));
        known.dedup();
        if !known.is_empty() {
            why.push(format!("{} known only when the container runs, read from its environment then (`${{X}}`; supervisord read them when it started)", known.iter().map(|x| format!("${x}")).collect::<Vec<_>>().join(", ")));
        }
        self.note(
            &v,
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

/// Text of pieces that are all known, else `None`.
pub fn plain(ps: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in ps {
        match p {
            Piece::Lit(l) => s.push_str(l),
            Piece::Var(_) => return None,
        }
    }
    Some(s)
}

fn mode_pieces(mode: Mode<'_>) -> impl Fn(&[Seg]) -> Option<Vec<Piece>> + '_ {
    move |segs| Program::pieces(segs, mode)
}

/// A piece of a name: lowercase, anything but `a-z0-9._-` as `-`.
fn name_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Pieces inside double quotes: text escaped, variables as `${X}`.
fn dq(ps: &[Piece]) -> String {
    let mut s = String::new();
    for p in ps {
        match p {
            Piece::Lit(l) => {
                for c in l.chars() {
                    if matches!(c, '"' | '\\' | '$' | '`') {
                        s.push('\\');
                    }
                    s.push(c);
                }
            }
            Piece::Var(x) => s.push_str(&format!("${{{x}}}")),
        }
    }
    s
}

/// The command as shell text: its own text, a variable as `${X}` (closing
/// and reopening a single-quoted part around it, where supervisord would
/// have put the value inside the quotes).
fn shell_text(ps: &[Piece]) -> String {
    let mut s = String::new();
    let mut sq = false;
    let mut dqs = false;
    for p in ps {
        match p {
            Piece::Lit(l) => {
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
            Piece::Var(x) if sq => s.push_str(&format!("'\"${{{x}}}\"'")),
            Piece::Var(x) => s.push_str(&format!("${{{x}}}")),
        }
    }
    s
}
