//! One `[program:x]` into one slot (a templated one for `numprocs`), key
//! by key; see docs/import.md for the table this follows. A value's text
//! is its `%(…)s` expanded ([`super::expand`]), `%(process_num)` written
//! as the slot's mode has it.
//!
//! Its `command` and `environment` are split as supervisord splits them,
//! or, where they need a shell or a value known only when the container
//! runs, run by a `sh -c` that keeps their meaning. Its log, its restart
//! policy (autorestart, exitcodes, startsecs, startretries) and how it is
//! stopped become svkit policies. Every other key is reported, with why.

use std::collections::BTreeMap;

use svkit::config::names;
use svkit::config::raw::{RawInstances, RawLog, RawRestart};
use svkit::msg::At;

use super::expand::{self, env_vars, Known, Seg, Spec, Val};
use super::ini::{Section, Value};
use super::shlex;
use super::words::{self, AutoRestart};
use crate::common::{name_chars, tidy_name};
use crate::{ImportError, Note, RawSlot};

/// What `[supervisord]` gives every program.
#[derive(Default)]
pub struct Global {
    pub user: Option<String>,
    pub env: Vec<(String, String)>,
}

/// One slot built, with what the passes after it need.
pub struct Built {
    pub slot: RawSlot,
    pub priority: i64,
    pub autostart: bool,
    /// Where the program's section was written.
    pub at: At,
    /// Where `stdout_logfile` was written, when it became `log.dir`.
    pub log_at: Option<At>,
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

pub struct Program<'a> {
    pub sec: &'a Section,
    pub defaults: &'a Section,
    pub global: &'a Global,
    pub group: &'a str,
    pub notes: &'a mut Vec<Note>,
    /// `numprocs=%(ENV_X)s`: `X`, once [`Self::build`] has read it.
    pub count: Option<String>,
}

impl<'a> Program<'a> {
    /// A key of the program, else of `[DEFAULT]`.
    fn value(&self, key: &str) -> Option<&'a Value> {
        let (sec, defaults) = (self.sec, self.defaults);
        sec.get(key).or_else(|| defaults.get(key))
    }

    fn bad(&self, v: &Value, key: &str, what: impl std::fmt::Display) -> ImportError {
        ImportError::new(v.at.clone(), format!("{key}: {what}"))
    }

    fn note(&mut self, v: &Value, key: &str, why: impl Into<String>) {
        (self.notes).push(Note::new(v.at.clone(), key, why));
    }

    /// A key's value as `word` reads it, else `default`.
    fn read<T>(
        &self,
        key: &str,
        default: T,
        word: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, ImportError> {
        let Some(v) = self.value(key) else {
            return Ok(default);
        };
        word(&v.text).map_err(|e| self.bad(v, key, e))
    }

    fn int(&self, key: &str, lo: i64, hi: i64, dflt: i64) -> Result<i64, ImportError> {
        self.read(key, dflt, |t| words::integer(t, lo, hi))
    }

    /// `v` with its `%(…)s` expanded ([`super::expand`]).
    fn segs(&self, v: &Value, key: &str) -> Result<Vec<Seg>, ImportError> {
        if !v.text.contains('%') {
            return Ok(vec![Seg::Lit(v.text.clone())]);
        }
        // supervisord's %(here)s is absolute: asked of the file system
        // only for a value that uses it.
        let here = match v.text.contains("%(here)") {
            true => super::read::here(&v.at.file),
            false => Some(String::new()),
        };
        let here = here.ok_or_else(|| {
            let why = "the file's directory is not UTF-8: %(here)s cannot be expanded";
            self.bad(v, key, why)
        })?;
        let k = Known {
            here: &here,
            program_name: self
                .sec
                .name
                .strip_prefix("program:")
                .unwrap_or(&self.sec.name),
            group_name: self.group,
            // Read (and checked) before any value is expanded.
            numprocs: self.numprocs()?,
        };
        expand::expand(&v.text, &k).map_err(|e| self.bad(v, key, e))
    }

    /// The segments of `v` in `mode`, `%(process_num)` written out; `None`
    /// when it is written otherwise than the template's name has it.
    fn pieces(
        &self,
        v: &Value,
        key: &str,
        mode: Mode<'_>,
    ) -> Result<Option<Vec<Seg>>, ImportError> {
        let mut out = Vec::new();
        for s in self.segs(v, key)? {
            let Seg::Proc(spec) = s else {
                out.push(s);
                continue;
            };
            let text = match mode {
                Mode::One(k) => expand::format(&spec, Val::Int(k)).ok(),
                Mode::Template(t, nums) => nums
                    .iter()
                    .all(|&k| expand::format(&spec, Val::Int(k)) == expand::format(t, Val::Int(k)))
                    .then(|| names::INSTANCE_VAR.into()),
            };
            let Some(text) = text else { return Ok(None) };
            out.push(Seg::Lit(text));
        }
        Ok(Some(out))
    }

    /// `process_name` (`%(program_name)s` when not written), expanded,
    /// and its `%(process_num)` spec.
    fn process_name(&self) -> Result<(Value, Vec<Seg>, Option<Spec>), ImportError> {
        let pn = self
            .value("process_name")
            .cloned()
            .unwrap_or_else(|| Value {
                text: "%(program_name)s".into(),
                at: self.sec.at.clone(),
            });
        let segs = self.segs(&pn, "process_name")?;
        let spec = segs.iter().find_map(|s| match s {
            Seg::Proc(spec) => Some(spec.clone()),
            _ => None,
        });
        Ok((pn, segs, spec))
    }

    /// `numprocs` when it is known now; `None`: written with `%(` (read
    /// by [`Self::build`]: `%(ENV_X)s`, known only at run time).
    fn numprocs(&self) -> Result<Option<i64>, ImportError> {
        match self.value("numprocs") {
            Some(v) if v.text.contains("%(") => Ok(None),
            _ => self.int("numprocs", 1, 100_000, 1).map(Some),
        }
    }

    /// The slots of this program: one, or a template for `numprocs`.
    pub fn build(&mut self) -> Result<Vec<Built>, ImportError> {
        self.report_keys();
        let start = self.int("numprocs_start", 0, 1_000_000_000, 0)?;
        let nums: Vec<i64> = match self.numprocs()? {
            Some(n) => (start..start + n).collect(),
            None => return self.counted(start),
        };
        let (pn, name_segs, spec) = self.process_name()?;
        let pn = &pn;
        if expand::env_vars(&name_segs).next().is_some() {
            return Err(self.bad(pn, "process_name", "uses a variable known only at run time: a slot's name must be known when importing"));
        }
        if nums.len() == 1 {
            let one = self.one(pn, &name_segs, Mode::One(start))?;
            return Ok(one.into_iter().collect());
        }
        let Some(spec) = spec else {
            return Err(self.bad(pn, "process_name", "numprocs is over 1 but process_name has no %(process_num) (supervisord refuses it)"));
        };
        if let Some(t) = self.one(pn, &name_segs, Mode::Template(&spec, &nums))? {
            return Ok(vec![t]);
        }
        // %(process_num) written otherwise somewhere than in the name: one
        // `{instance}` cannot stand for both, so each process is a slot.
        let mut out = Vec::new();
        for &k in &nums {
            out.extend(self.one(pn, &name_segs, Mode::One(k))?);
        }
        let v = self.value("numprocs").unwrap_or(pn);
        self.note(v, "numprocs", format!("{} slots of their own, not a template: %(process_num) is written otherwise elsewhere than in process_name", out.len()));
        Ok(out)
    }

    /// `numprocs=%(ENV_X)s`: a template whose `instances.count` is
    /// `${X}`, instances `0`…`N-1` (`numprocs_start` is not carried
    /// over). `%(process_num)` is written one way, in the name and
    /// wherever it is, as svkit writes an instance.
    fn counted(&mut self, start: i64) -> Result<Vec<Built>, ImportError> {
        let Some(v) = self.value("numprocs") else {
            return Ok(Vec::new());
        };
        let x = match self.segs(v, "numprocs")?.as_slice() {
            [Seg::Env(x)] => x.clone(),
            _ => {
                return Err(self.bad(
                    v,
                    "numprocs",
                    format!("`{}`: a whole number, or %(ENV_X)s alone", v.text),
                ))
            }
        };
        self.count = Some(x.clone());
        self.note(v, "numprocs", format!("instances.count `${{{x}}}`: instances `0`…`N-1`, N read from the container's environment at each boot and `svctl apply` (supervisord read it when it started); unset, the boot refuses the config, as supervisord refused to start"));
        if let Some(s) = self.value("numprocs_start").filter(|_| start != 0) {
            self.note(
                s,
                "numprocs_start",
                "not carried over: instances of a count are numbered from 0",
            );
        }
        let (pn, name_segs, spec) = self.process_name()?;
        let pn = &pn;
        let Some(spec) = spec else {
            return Err(self.bad(pn, "process_name", "numprocs is known only when the container runs but process_name has no %(process_num) (supervisord refuses it when numprocs is over 1)"));
        };
        // Every number a count may reach.
        let nums: Vec<i64> = (0..i64::from(svkit::s6::SVSCAN_MAX)).collect();
        if nums
            .iter()
            .any(|&k| expand::format(&spec, Val::Int(k)).ok() != Some(k.to_string()))
        {
            self.note(pn, "process_name", "instances of a count are named `0`, `1`, …: not as this %(process_num) format writes them, here and wherever it is written");
        }
        match self.one(pn, &name_segs, Mode::Template(&spec, &nums))? {
            Some(t) => Ok(vec![t]),
            None => Err(self.bad(v, "numprocs", "is known only when the container runs, and %(process_num) is written otherwise elsewhere than in process_name: one template cannot stand for both")),
        }
    }

    fn one(
        &mut self,
        pn: &Value,
        name_segs: &[Seg],
        mode: Mode<'_>,
    ) -> Result<Option<Built>, ImportError> {
        let Some(name) = self.name(pn, name_segs, mode)? else {
            return Ok(None);
        };
        let mut slot = RawSlot {
            name,
            ..RawSlot::default()
        };
        if let (Some(x), Mode::Template(..)) = (&self.count, mode) {
            slot.instances = Some(RawInstances {
                count: Some(format!("${{{x}}}").into()),
                ..RawInstances::default()
            });
        } else if let Mode::Template(spec, nums) = mode {
            let mut inst = Vec::new();
            for &k in nums {
                let i = expand::format(spec, Val::Int(k))
                    .map_err(|e| self.bad(pn, "process_name", e))?;
                names::check_instance_name(&i)
                    .map_err(|e| self.bad(pn, "process_name", format!("instance `{i}`: {e}")))?;
                inst.push(i);
            }
            slot.instances = Some(RawInstances {
                names: inst,
                ..RawInstances::default()
            });
        }
        // environment first: a value known only at run time moves into
        // the command's shell.
        let Some((env, runtime_env)) = self.env(mode)? else {
            return Ok(None);
        };
        let Some(command) = self.command(mode, &runtime_env)? else {
            return Ok(None);
        };
        slot.command = command;
        slot.user = match self.value("user") {
            Some(v) => {
                let segs = self.segs(v, "user")?;
                let text = expand::text(&segs, 0, true)
                    .ok_or_else(|| self.bad(v, "user", "cannot be expanded"))?;
                if expand::env_vars(&segs).next().is_some() {
                    // Its form is checked with the imported config.
                    self.note(v, "user", format!("`{text}`: read from the container's environment at each boot and `svctl apply` (supervisord read it when it started)"));
                } else {
                    names::check_user(&text)
                        .map_err(|e| self.bad(v, "user", format!("`{text}`: {e}")))?;
                }
                Some(text)
            }
            None => self.global.user.clone(),
        };
        if let Some(v) = self.value("directory") {
            let Some(pieces) = self.pieces(v, "directory", mode)? else {
                return Ok(None);
            };
            match expand::resolved(&pieces, 0) {
                None => self.note(
                    v,
                    "directory",
                    "not carried over: it uses a variable known only at run time; set cwd by hand",
                ),
                Some(d) => match names::check_abs_path(&d) {
                    Ok(d) => slot.cwd = Some(d),
                    Err(e) => self.note(
                        v,
                        "directory",
                        format!("not carried over: `{d}` {e} (svkit's cwd is absolute)"),
                    ),
                },
            }
        }
        slot.env = env;
        let autostart = self.read("autostart", true, words::boolean)?;
        slot.autostart = (!autostart).then(|| "never".into());
        let Some(log_at) = log(self, &mut slot, mode)? else {
            return Ok(None);
        };
        restart(self, &mut slot)?;
        stop(self, &mut slot)?;
        let priority = self.int("priority", -1_000_000_000, 1_000_000_000, 999)?;
        Ok(Some(Built {
            slot,
            priority,
            autostart,
            at: self.sec.at.clone(),
            log_at,
        }))
    }

    /// The slot name `process_name` makes in `mode` (`None`: as for
    /// [`Self::pieces`]), noted when it differs from the name as written.
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
                    name.push_str(&name_chars(l));
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
        let name = tidy_name(&name);
        // The placeholder stands for an instance name to check.
        names::check_slot_name(&name.replace(names::INSTANCE_VAR, "0"))
            .map_err(|e| self.bad(pn, "process_name", format!("slot name `{name}`: {e}")))?;
        if name != raw {
            self.note(pn, "process_name", format!("`{raw}` is slot `{name}`: svkit names are lowercase a-z, 0-9, `.`, `_` and `-`"));
        }
        Ok(Some(name))
    }

    /// The keys that do not carry over, each reported with why; and keys
    /// written twice, whose later value wins.
    fn report_keys(&mut self) {
        let sec = self.sec;
        for (i, (k, v)) in sec.keys.iter().enumerate() {
            for (_, at) in sec.replaced.iter().filter(|(j, _)| *j == i) {
                self.notes.push(Note::new(
                    at.clone(),
                    k,
                    format!(
                        "written again at {}: the later value wins, as in supervisord",
                        v.at
                    ),
                ));
            }
            if KNOWN.contains(&k.as_str()) {
                continue;
            }
            match dropped(k) {
                Some(why) => {
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

    /// `environment=` (over `[supervisord]`'s): the env known now, and
    /// the variables whose values are known only at run time.
    #[allow(clippy::type_complexity)]
    fn env(
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

    fn command(
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

/// Why a key supervisord knows has no svkit equivalent (`None`: not such a
/// key).
fn dropped(key: &str) -> Option<&'static str> {
    let events = "no process communication events in svkit";
    let syslog = "svkit logs to its log dir and docker logs, not syslog";
    Some(match key {
        "stopasgroup" | "killasgroup" => "s6 signals the program itself, not its process group: a program that leaves children must end them on its down signal",
        "umask" => "no umask key in svkit: set it in the command (`sh -c 'umask 022; exec …'`)",
        "serverurl" => "there is no supervisord to talk to: svctl talks to s6",
        "stdout_capture_maxbytes" | "stdout_events_enabled" => events,
        "stderr_capture_maxbytes" | "stderr_events_enabled" => events,
        "stdout_syslog" | "stderr_syslog" => syslog,
        "stderr_logfile" => "svkit joins stderr to stdout (exec 2>&1): its lines go where stdout's go",
        "stderr_logfile_maxbytes" => "svkit joins stderr to stdout: see stdout_logfile_maxbytes",
        "stderr_logfile_backups" => "svkit joins stderr to stdout: see stdout_logfile_backups",
        _ => return None,
    })
}

/// What `stdout_logfile` names that is the container's own output.
const CONTAINER_OUTPUT: &[&str] = &["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"];
const CONTAINER_STDERR: &[&str] = &["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"];

/// `stdout_logfile` (+ `_maxbytes`, `_backups`) into `log`. `None`: the
/// template does not hold (see `Program::build`); `Some(where)`: where
/// the log dir was written, when there is one.
fn log(
    p: &mut Program<'_>,
    slot: &mut RawSlot,
    mode: Mode<'_>,
) -> Result<Option<Option<At>>, ImportError> {
    let Some(v) = p.value("stdout_logfile") else {
        return Ok(Some(None));
    };
    let pieces = p.pieces(v, "stdout_logfile", mode)?;
    let Some(path) = pieces.map(|p| expand::resolved(&p, 0)) else {
        return Ok(None);
    };
    let Some(path) = path else {
        p.note(v, "stdout_logfile", "not carried over: it uses a variable known only at run time; output goes to docker logs");
        return Ok(Some(None));
    };
    let why = match path.to_ascii_uppercase().as_str() {
        _ if CONTAINER_OUTPUT.contains(&path.as_str()) => return Ok(Some(None)),
        _ if CONTAINER_STDERR.contains(&path.as_str()) => Some("the container's stderr: svkit sends a slot without `log` to the container's stdout (docker logs shows both)"),
        "NONE" => Some("NONE: svkit cannot discard output; it goes to docker logs (redirect it in the command to drop it)"),
        "AUTO" => Some("AUTO: no log dir; output goes to docker logs (add `log.dir` for files)"),
        "SYSLOG" => Some("syslog: output goes to docker logs"),
        _ => None,
    };
    if let Some(why) = why {
        p.note(v, "stdout_logfile", why);
        return Ok(Some(None));
    }
    let split = path.rsplit_once('/').filter(|(d, _)| !d.is_empty());
    let dir = split.and_then(|(d, _)| names::check_abs_path(d).ok());
    let (Some(dir), Some((_, file))) = (dir.filter(|d| d != "/"), split) else {
        p.note(v, "stdout_logfile", format!("not carried over: `{path}` is not an absolute file path in a dir of its own; output goes to docker logs"));
        return Ok(Some(None));
    };
    p.note(v, "stdout_logfile", format!("log.dir {dir}: s6-log writes `current` and rotated archives there, not `{file}`; stderr joins stdout (docs/import.md)"));
    let mut log = RawLog {
        dir,
        ..RawLog::default()
    };
    if let Some(b) = p.value("stdout_logfile_maxbytes") {
        let n = words::byte_size(&b.text).map_err(|e| p.bad(b, "stdout_logfile_maxbytes", e))?;
        if n == 0 {
            p.note(
                b,
                "stdout_logfile_maxbytes",
                "0 (never rotate): svkit always rotates; its default of 1000000 bytes applies",
            );
        } else {
            let c = n.clamp(4096, 268_435_455);
            if c != n {
                p.note(
                    b,
                    "stdout_logfile_maxbytes",
                    format!("{n} bytes is outside svkit's 4096..268435455: {c}"),
                );
            }
            log.max_bytes = i64::try_from(c).ok();
        }
    }
    if let Some(b) = p.value("stdout_logfile_backups") {
        let n = words::integer(&b.text, 0, i64::MAX)
            .map_err(|e| p.bad(b, "stdout_logfile_backups", e))?;
        let c = n.min(10_000);
        if c != n {
            p.note(
                b,
                "stdout_logfile_backups",
                format!("{n} is over svkit's 10000: {c}"),
            );
        }
        log.keep = Some(c);
    }
    slot.log = Some(log);
    Ok(Some(Some(v.at.clone())))
}

/// The death window a program gets from `startsecs` and `startretries`:
/// supervisord gives up (FATAL) after `startretries` + 1 starts in a row
/// that each died within `startsecs`; svkit after `max_deaths` deaths
/// within `within_s`. So `max_deaths` is `startretries` + 1, and
/// `within_s` is the time those deaths take for a program that dies just
/// before `startsecs`, with svkit's default backoff (0, 1, 2, 4 … 30 s
/// between starts) and s6's 1 s between starts, at least svkit's 60.
/// `startsecs=0` never goes FATAL: `max_deaths` 0.
fn window(startsecs: i64, startretries: i64) -> (i64, i64) {
    if startsecs == 0 {
        return (0, 60);
    }
    let deaths = (startretries + 1).min(4096);
    let mut t: i64 = 0;
    for k in 1..=deaths {
        t += startsecs + 1;
        if k >= 2 && k < deaths {
            t += (1i64 << (k - 2).min(5)).min(30);
        }
    }
    (deaths, t.clamp(60, 86_400))
}

fn restart(p: &mut Program<'_>, slot: &mut RawSlot) -> Result<(), ImportError> {
    let ar = p.read("autorestart", AutoRestart::Unexpected, words::auto_restart)?;
    let codes = p.read("exitcodes", vec![0], words::exit_codes)?;
    let startsecs = p.int("startsecs", 0, 86_400, 1)?;
    let startretries = p.int("startretries", 0, 1_000_000, 3)?;
    let mut on_clean_exit_stop = false;
    let mut perm = Vec::new();
    let (deaths, within) = match ar {
        AutoRestart::Always => window(startsecs, startretries),
        AutoRestart::Unexpected => {
            perm = codes.iter().copied().filter(|&c| c != 0).collect();
            on_clean_exit_stop = codes.contains(&0);
            if !perm.is_empty() {
                if let Some(v) = p.value("exitcodes") {
                    p.note(v, "exitcodes", format!("expected exit codes {perm:?} keep the slot down as `failed` (supervisord: EXITED, not restarted)"));
                }
            }
            window(startsecs, startretries)
        }
        AutoRestart::Never => {
            if let Some(v) = p.value("autorestart") {
                p.note(v, "autorestart", "false: exit 0 is `done`; another exit is `failed` after its first death (max_deaths 1), where supervisord shows EXITED");
            }
            on_clean_exit_stop = true;
            (1, 86_400)
        }
    };
    // svkit's default window is left out.
    let window = ((deaths, within) != (5, 60)).then_some((deaths, within));
    slot.restart = Some(RawRestart {
        max_deaths: window.map(|w| w.0),
        on_clean_exit: on_clean_exit_stop.then(|| "stop".into()),
        permanent_exit_codes: Some(perm),
        within_s: window.map(|w| w.1),
        backoff: None,
    });
    if ar != AutoRestart::Never {
        for key in ["startsecs", "startretries"] {
            if let Some(v) = p.value(key) {
                p.note(v, key, window_why(startsecs, startretries, deaths, within));
            }
        }
    }
    Ok(())
}

/// The note on the death window.
fn window_why(startsecs: i64, startretries: i64, deaths: i64, within: i64) -> String {
    format!(
        "startsecs {startsecs}, startretries {startretries}: max_deaths {deaths} within_s {within}; \
         svkit counts every death in that window, not only deaths before startsecs (docs/import.md)"
    )
}

fn stop(p: &mut Program<'_>, slot: &mut RawSlot) -> Result<(), ImportError> {
    if let Some(v) = p.value("stopsignal") {
        let sig = v.text.trim().to_ascii_uppercase();
        let canon = names::check_signal(&sig)
            .map_err(|e| p.bad(v, "stopsignal", format!("`{}`: {e}", v.text)))?;
        let bare = canon.trim_start_matches("SIG");
        if bare != "TERM" {
            slot.down_signal = Some(bare.to_owned());
        }
    }
    slot.stop_timeout_ms = Some(p.int("stopwaitsecs", 0, 86_400, 10)? * 1000);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_note_says_each_number_in_its_place() {
        assert_eq!(
            window_why(5, 3, 4, 60),
            "startsecs 5, startretries 3: max_deaths 4 within_s 60; svkit counts every death \
             in that window, not only deaths before startsecs (docs/import.md)"
        );
        assert!(window_why(86_400, 1_000_000, 4096, 86_400)
            .starts_with("startsecs 86400, startretries 1000000: max_deaths 4096 within_s 86400;"));
        assert!(window_why(0, -3, i64::MAX, i64::MIN).starts_with(&format!(
            "startsecs 0, startretries -3: max_deaths {} within_s {};",
            i64::MAX,
            i64::MIN
        )));
    }
}
