//! One `[program:x]` into one slot (a templated one for `numprocs`), key
//! by key; see docs/import.md for the table this follows. A value's text
//! is its `%(…)s` expanded ([`super::expand`]), `%(process_num)` written
//! as the slot's mode has it.

use std::path::{Path, PathBuf};

use svkit::config::names;
use svkit::config::raw::RawInstances;
use svkit::msg::At;

use super::expand::{self, Known, Seg, Spec, Val};
use super::ini::{Section, Value};
use super::words;
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
pub(super) enum Mode<'a> {
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
    pub(super) fn value(&self, key: &str) -> Option<&'a Value> {
        let (sec, defaults) = (self.sec, self.defaults);
        sec.get(key).or_else(|| defaults.get(key))
    }

    pub(super) fn bad(&self, v: &Value, key: &str, what: impl std::fmt::Display) -> ImportError {
        ImportError::new(v.at.clone(), format!("{key}: {what}"))
    }

    pub(super) fn note(&mut self, v: &Value, key: &str, why: impl Into<String>) {
        (self.notes).push(Note::new(v.at.clone(), key, why));
    }

    /// A key's value as `word` reads it, else `default`.
    pub(super) fn read<T>(
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

    pub(super) fn int(&self, key: &str, lo: i64, hi: i64, dflt: i64) -> Result<i64, ImportError> {
        self.read(key, dflt, |t| words::integer(t, lo, hi))
    }

    /// `v` with its `%(…)s` expanded ([`super::expand`]).
    pub(super) fn segs(&self, v: &Value, key: &str) -> Result<Vec<Seg>, ImportError> {
        if !v.text.contains('%') {
            return Ok(vec![Seg::Lit(v.text.clone())]);
        }
        // supervisord's %(here)s is absolute: asked of the file system
        // only for a value that uses it.
        let dir = if v.text.contains("%(here)") {
            let dir = (v.at.file.parent())
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            super::read::abspath(dir)
        } else {
            PathBuf::new()
        };
        let here = dir.to_str().ok_or_else(|| {
            self.bad(
                v,
                key,
                "the file's directory is not UTF-8: %(here)s cannot be expanded",
            )
        })?;
        let k = Known {
            here,
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
    pub(super) fn pieces(
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
        let Some(log_at) = super::policy::log(self, &mut slot, mode)? else {
            return Ok(None);
        };
        super::policy::restart(self, &mut slot)?;
        super::policy::stop(self, &mut slot)?;
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

impl Program<'_> {
    /// The keys that do not carry over, each reported with why; and keys
    /// written twice, whose later value wins.
    pub(super) fn report_keys(&mut self) {
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
}
