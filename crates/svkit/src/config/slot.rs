//! Building one validated `Slot` from a raw slot and an instance name:
//! `{instance}` expansion of every string, then every per-field rule. All
//! problems are collected in its [`SlotCtx`], with the checks its fields
//! share (`{instance}` expansion, argv, paths, variable names, ranges);
//! nothing stops at the first.
//!
//! Of `env_file` and `secrets` only names and paths are checked here: the
//! files themselves are read when the slot starts (`crate::slotenv`),
//! never at render time.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde_json::Value;

use super::error::{Diagnostic, Site};
use super::json_pos::FieldPath;
use super::model::*;
use super::names::*;
use super::parse::Layer;
use super::raw::{RawCheck, RawLiveness, RawLog, RawReadiness, RawRestart, RawSchedule, RawSlot};
use super::vars::{shown, Vars};
use crate::probe::Probe;
use crate::schedule::When;

/// Build the slot; the caller checks `ctx.diags` to know whether it is
/// usable. `name` is the already expanded and checked slot name.
pub(crate) fn build_slot(
    ctx: &mut SlotCtx<'_>,
    raw: &RawSlot,
    name: String,
    origin: Origin,
    top_user: Option<&(String, Option<Site>)>,
) -> Slot {
    let b = ctx.base.clone();
    let command = ctx.argv(&b.key("command"), &raw.command, "command");

    let (user, user_site) = match &raw.user {
        Some(u) => {
            let p = b.key("user");
            let u = ctx.expand(&p, u);
            user(ctx.layer, p, &u, ctx.vars, &mut ctx.diags)
        }
        None => top_user.cloned(),
    }
    .unzip();
    let cwd = raw.cwd.as_ref().map(|c| ctx.abs_path(&b.key("cwd"), c));

    let env = env(ctx, &b, &raw.env);

    // Each string and its pointer count against the kernel's ARG_MAX; the
    // container's own environment comes on top at run time.
    let total: usize = command.iter().map(|a| a.len() + 1 + 8).sum::<usize>()
        + env
            .iter()
            .map(|(k, v)| k.len() + v.len() + 2 + 8)
            .sum::<usize>();
    let limit = arg_max();
    if total > limit {
        ctx.err(
            &b.key("command"),
            format!("command and env take {total} bytes together: execve refuses over {limit} (ARG_MAX)"),
        );
    }

    let autostart = autostart(ctx, &b.key("autostart"), raw.autostart.as_ref());
    let log = raw.log.as_ref().map(|l| log(ctx, &b.key("log"), l, &name));
    let (env_files, secrets) = env_inputs(ctx, &b, raw, &env);
    let mut restart = raw
        .restart
        .as_ref()
        .map(|r| restart(ctx, &b.key("restart"), r))
        .unwrap_or_default();
    let kind = kind(ctx, &b, raw, &mut restart);
    let schedule = raw
        .schedule
        .as_ref()
        .and_then(|r| schedule(ctx, &b, r, kind));
    if schedule.is_some() {
        not_for_jobs(ctx, &b, raw);
    }
    let readiness = raw
        .readiness
        .as_ref()
        .and_then(|r| readiness(ctx, &b.key("readiness"), r));
    let down_signal = raw.down_signal.as_ref().and_then(|s| {
        let p = b.key("down_signal");
        let s = ctx.expand(&p, s);
        check_signal(&s)
            .map_err(|e| ctx.err(&p, format!("`{s}`: {e}")))
            .ok()
    });
    let stop_timeout_ms = ctx.opt(
        &b,
        "stop_timeout_ms",
        raw.stop_timeout_ms,
        0,
        86_400_000,
        " ms",
    );

    Slot {
        name,
        instance: ctx.instance.map(str::to_string),
        origin,
        command,
        user,
        user_site: user_site.flatten(),
        cwd,
        env,
        autostart,
        log,
        restart,
        readiness,
        down_signal,
        stop_timeout_ms,
        kind,
        essential: raw.essential,
        depends_on: Vec::new(),
        env_files,
        secrets,
        liveness: raw
            .liveness
            .as_ref()
            .and_then(|l| liveness(ctx, &b.key("liveness"), l)),
        schedule,
    }
}

/// A `user` written at `p` of `layer` (its `{instance}` expanded), its
/// `${VAR}` expanded and checked, with where it was written; None when it
/// is wrong (reported). Where the environment is incomplete it is not
/// looked up: as written, without a site.
pub(crate) fn user(
    layer: &Layer,
    p: FieldPath,
    raw: &str,
    vars: &Vars<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<(String, Option<Site>)> {
    let Some(v) = vars.get(layer, &p, raw, diags) else {
        return Some((raw.to_string(), None));
    };
    match check_user(&v) {
        Ok(()) => Some((v, Some(layer.site(p)))),
        Err(e) => {
            diags.push(layer.diag(&p, format!("{}: {e}", shown(raw, &v))));
            None
        }
    }
}

/// Per-slot validation context.
pub(crate) struct SlotCtx<'a> {
    pub layer: &'a Layer,
    pub base: FieldPath,
    pub instance: Option<&'a str>,
    pub sentinel_env: &'a str,
    pub vars: &'a Vars<'a>,
    pub diags: Vec<Diagnostic>,
}

impl SlotCtx<'_> {
    fn err(&mut self, path: &FieldPath, msg: impl Into<String>) {
        self.diags.push(self.layer.diag(path, msg));
    }

    /// A variable name the slot sets (`env`, `secrets`), expanded: reported
    /// when it is not a valid name or is the sentinel svkit sets itself.
    fn env_name(&mut self, path: &FieldPath, raw: &str) -> String {
        let k = self.expand(path, raw);
        if let Err(e) = check_env_name(&k) {
            self.err(path, format!("`{k}`: {e}"));
        } else if k == self.sentinel_env {
            let msg = format!("`{k}` is the sentinel_env, which svkit sets to the slot name");
            self.err(path, msg);
        }
        k
    }

    /// Expand `{instance}`; in a slot without instances the variable is an
    /// error (it would otherwise reach a program literally).
    fn expand(&mut self, path: &FieldPath, s: &str) -> String {
        match self.instance {
            Some(i) => s.replace(INSTANCE_VAR, i),
            None => {
                if s.contains(INSTANCE_VAR) {
                    self.err(path, "uses {instance} but the slot declares no `instances`");
                }
                s.to_string()
            }
        }
    }

    fn int(&mut self, path: &FieldPath, v: i64, lo: i64, hi: i64, unit: &str) -> Option<u32> {
        if v < lo || v > hi {
            self.err(path, format!("{v} is outside {lo}..{hi}{unit}"));
            None
        } else {
            u32::try_from(v).ok()
        }
    }

    /// [`Self::int`] of the member `key` of `p`, when it is set.
    fn opt(
        &mut self,
        p: &FieldPath,
        key: &str,
        v: Option<i64>,
        lo: i64,
        hi: i64,
        unit: &str,
    ) -> Option<u32> {
        self.int(&p.key(key), v?, lo, hi, unit)
    }

    /// `raw` expanded, when set: one of `words`, else reported.
    fn word<T: Copy>(
        &mut self,
        p: &FieldPath,
        raw: Option<&String>,
        words: &[(&str, T)],
    ) -> Option<T> {
        let w = self.expand(p, raw?);
        one_of(&w, words).map_err(|e| self.err(p, e)).ok()
    }

    fn argv(&mut self, path: &FieldPath, raw: &[String], what: &str) -> Vec<String> {
        if raw.is_empty() {
            self.err(
                path,
                format!("{what} must not be empty (it is an argv array)"),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(raw.len());
        for (i, a) in raw.iter().enumerate() {
            let p = path.index(i);
            let a = self.expand(&p, a);
            if let Err(e) = check_no_nul(&a) {
                self.err(&p, e);
            }
            if let Err(e) = check_arg_len(a.len(), "this argument") {
                self.err(&p, e);
            }
            if i == 0 {
                if a.is_empty() {
                    self.err(&p, "the program name must not be empty");
                } else if a.starts_with('-') {
                    self.err(&p, "the program name must not start with `-`");
                }
            }
            out.push(a);
        }
        out
    }

    fn abs_path(&mut self, path: &FieldPath, raw: &str) -> String {
        let s = self.expand(path, raw);
        match check_abs_path(&s) {
            Ok(p) => p,
            Err(e) => {
                self.err(path, format!("`{s}` {e}"));
                s
            }
        }
    }
}

/// The kernel's limit on argv and environment together, in bytes.
fn arg_max() -> usize {
    let n = nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX).ok();
    n.flatten()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(2 * 1024 * 1024)
}

/// `env`, expanded and checked.
fn env(
    ctx: &mut SlotCtx<'_>,
    b: &FieldPath,
    raw: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let penv = b.key("env");
    for (k, v) in raw {
        let p = penv.key(k.as_str());
        let k = ctx.env_name(&p, k);
        let v = ctx.expand(&p, v);
        if let Err(e) = check_no_nul(&v) {
            ctx.err(&p, e);
        }
        if let Err(e) = check_arg_len(k.len() + 1 + v.len(), "`NAME=value`") {
            ctx.err(&p, e);
        }
        env.insert(k, v);
    }
    env
}

fn autostart(ctx: &mut SlotCtx<'_>, p: &FieldPath, v: Option<&Value>) -> Autostart {
    const EXPECTED: &str =
        "expected \"always\", \"never\", \"remember\" or {\"if_env\": \"VARIABLE\"}";
    match v {
        None => Autostart::Always,
        Some(Value::String(s)) => match ctx.expand(p, s).as_str() {
            "always" => Autostart::Always,
            "never" => Autostart::Never,
            "remember" => Autostart::Remember,
            other => {
                ctx.err(p, format!("`{other}`: {EXPECTED}"));
                Autostart::Never
            }
        },
        // Anything else must be `{"if_env": "VARIABLE"}`.
        Some(v) => match v.get("if_env").and_then(Value::as_str) {
            Some(var) if v.as_object().is_some_and(|o| o.len() == 1) => {
                let pv = p.key("if_env");
                let var = ctx.expand(&pv, var);
                if let Err(e) = check_env_name(&var) {
                    ctx.err(&pv, format!("`{var}`: {e}"));
                }
                Autostart::IfEnv(var)
            }
            _ => {
                ctx.err(p, EXPECTED);
                Autostart::Never
            }
        },
    }
}

fn log(ctx: &mut SlotCtx<'_>, p: &FieldPath, l: &RawLog, slot: &str) -> Log {
    let dir = ctx.abs_path(&p.key("dir"), &l.dir);
    if dir == "/" {
        ctx.err(&p.key("dir"), "the log dir must not be `/`");
    }
    let keep = ctx.opt(p, "keep", l.keep, 0, 10_000, " files");
    // s6-log silently clamps `s` to this range; refusing keeps the docs true.
    let max_bytes = ctx.opt(p, "max_bytes", l.max_bytes, 4096, 268_435_455, " bytes");
    let stdout = l.stdout.unwrap_or(true);
    let (prefix, format) = log_output(ctx, p, l, stdout, slot);
    Log {
        dir,
        stdout,
        keep: keep.unwrap_or(DEFAULT_LOG_KEEP),
        max_bytes: max_bytes.unwrap_or(DEFAULT_LOG_MAX_BYTES),
        prefix,
        format,
    }
}

fn restart(ctx: &mut SlotCtx<'_>, p: &FieldPath, r: &RawRestart) -> Restart {
    let mut out = Restart::default();
    if let Some(codes) = &r.permanent_exit_codes {
        let mut v: Vec<u8> = Vec::new();
        let pcodes = p.key("permanent_exit_codes");
        for (i, c) in codes.iter().enumerate() {
            let c = ctx.int(&pcodes.index(i), *c, 0, 255, " (exit codes are 0..255)");
            if let Some(c) = c
                .and_then(|c| u8::try_from(c).ok())
                .filter(|c| !v.contains(c))
            {
                v.push(c);
            }
        }
        out.permanent_exit_codes = v;
    }
    let words = [
        ("restart", OnCleanExit::Restart),
        ("stop", OnCleanExit::Stop),
    ];
    let pe = p.key("on_clean_exit");
    if let Some(w) = ctx.word(&pe, r.on_clean_exit.as_ref(), &words) {
        out.on_clean_exit = w;
    }
    if let Some(bk) = &r.backoff {
        let pb = p.key("backoff");
        let max_s = ctx.opt(&pb, "max_s", bk.max_s, 0, 3600, " s (0 = no delay)");
        let reset_after_s = ctx.opt(&pb, "reset_after_s", bk.reset_after_s, 1, 86_400, " s");
        out.backoff = Backoff {
            max_s: max_s.unwrap_or(DEFAULT_BACKOFF_MAX_S),
            reset_after_s: reset_after_s.unwrap_or(DEFAULT_BACKOFF_RESET_AFTER_S),
        };
    }
    // s6 keeps at most 4096 records in its death tally; 0: never.
    let deaths =
        (r.max_deaths).map(|d| ctx.int(&p.key("max_deaths"), d, 0, 4096, " deaths (0 = never)"));
    let within_s = ctx.opt(p, "within_s", r.within_s, 1, 86_400, " s");
    match (deaths, out.max_deaths.as_mut()) {
        (Some(Some(0)), _) => out.max_deaths = None,
        (Some(Some(deaths)), _) => {
            let within_s = within_s.unwrap_or(DEFAULT_WITHIN_S);
            out.max_deaths = Some(MaxDeaths { deaths, within_s });
        }
        (None, Some(m)) => m.within_s = within_s.unwrap_or(m.within_s),
        _ => {}
    }
    out
}

fn readiness(ctx: &mut SlotCtx<'_>, p: &FieldPath, r: &RawReadiness) -> Option<Readiness> {
    match (r.notification_fd, &r.check) {
        (Some(fd), None) => ctx
            .int(&p.key("notification_fd"), fd, 3, 1023, " (0-2 are stdio)")
            .map(|fd| Readiness {
                probe: Probe::Notification(fd),
                interval_ms: 0,
                timeout_ms: 0,
            }),
        (None, Some(c)) => Some(check(ctx, &p.key("check"), c)),
        _ => {
            ctx.err(p, "set exactly one of `notification_fd` and `check`");
            None
        }
    }
}

fn check(ctx: &mut SlotCtx<'_>, p: &FieldPath, c: &RawCheck) -> Readiness {
    let probe = Probe::Exec(ctx.argv(&p.key("command"), &c.command, "readiness.check.command"));
    let interval_ms = ctx.opt(p, "interval_ms", c.interval_ms, 1, 3_600_000, " ms");
    let timeout_ms = ctx.opt(p, "timeout_ms", c.timeout_ms, 0, 86_400_000, " ms");
    Readiness {
        probe,
        interval_ms: interval_ms.unwrap_or(DEFAULT_CHECK_INTERVAL_MS),
        timeout_ms: timeout_ms.unwrap_or(0),
    }
}

/// The slot's name in a `log.prefix`.
pub const SLOT_VAR: &str = "{slot}";
/// Longest `log.prefix`, in bytes, after expansion: it is on every line.
pub const MAX_PREFIX_BYTES: usize = 256;

/// `log.prefix` (expanded) and `log.format`, checked against `stdout`.
fn log_output(
    ctx: &mut SlotCtx<'_>,
    p: &FieldPath,
    l: &RawLog,
    stdout: bool,
    slot: &str,
) -> (Option<String>, LogFormat) {
    let pf = p.key("format");
    let words = [("text", LogFormat::Text), ("json", LogFormat::Json)];
    let format = ctx.word(&pf, l.format.as_ref(), &words).unwrap_or_default();
    if format == LogFormat::Json && !stdout {
        ctx.err(
            &pf,
            "\"json\" shapes the stdout copy, and `stdout` is false: there is none",
        );
    }
    let Some(raw) = &l.prefix else {
        return (None, format);
    };
    let pp = p.key("prefix");
    let prefix = ctx.expand(&pp, raw).replace(SLOT_VAR, slot);
    if prefix.trim_matches(' ').is_empty() {
        ctx.err(
            &pp,
            "a prefix must hold more than spaces (leave `prefix` out for none)",
        );
    } else if let Some(c) = prefix.chars().find(|c| c.is_control()) {
        ctx.err(
            &pp,
            format!(
                "must not contain control characters (found {c:?}): the prefix is on every line"
            ),
        );
    } else if prefix.len() > MAX_PREFIX_BYTES {
        ctx.err(
            &pp,
            format!(
                "is {} bytes once expanded: at most {MAX_PREFIX_BYTES}",
                prefix.len()
            ),
        );
    }
    if !stdout {
        ctx.err(
            &pp,
            "the prefix goes on the stdout copy, and `stdout` is false: there is none",
        );
    }
    if format == LogFormat::Json {
        ctx.err(
            &pp,
            "a prefix is for the text format: each JSON line names its slot in `slot`",
        );
    }
    (Some(prefix), format)
}

/// `env_file` (a path or a list of paths) and `secrets` (VAR → path).
fn env_inputs(
    ctx: &mut SlotCtx<'_>,
    b: &FieldPath,
    raw: &RawSlot,
    env: &BTreeMap<String, String>,
) -> (Vec<String>, BTreeMap<String, String>) {
    let mut files = Vec::new();
    let pf = b.key("env_file");
    match &raw.env_file {
        None => {}
        Some(Value::String(s)) => files.push(ctx.abs_path(&pf, s)),
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                let pi = pf.index(i);
                match v {
                    Value::String(s) => files.push(ctx.abs_path(&pi, s)),
                    _ => ctx.err(&pi, "expected a path (a string)"),
                }
            }
        }
        Some(_) => ctx.err(&pf, "expected a path or a list of paths"),
    }
    let mut secrets = BTreeMap::new();
    let psecrets = b.key("secrets");
    for (k, path) in raw.secrets.iter().flatten() {
        let p = psecrets.key(k.as_str());
        let k = ctx.env_name(&p, k);
        if env.contains_key(&k) {
            ctx.err(
                &p,
                format!(
                    "`{k}` is also set in `env`: a variable is a secret or a plain value, not both"
                ),
            );
        }
        let path = ctx.abs_path(&p, path);
        secrets.insert(k, path);
    }
    (files, secrets)
}

/// `liveness` defaults.
pub const DEFAULT_INTERVAL_MS: u32 = 10_000;
pub const DEFAULT_TIMEOUT_MS: u32 = 1_000;
pub const DEFAULT_FAILURES: u32 = 3;

/// `liveness`: one of `exec` (argv), `tcp` (a port, or `host:port`) or
/// `http` (a URL), with `interval_ms`, `timeout_ms` and `failures`.
fn liveness(ctx: &mut SlotCtx<'_>, p: &FieldPath, r: &RawLiveness) -> Option<Liveness> {
    let probe = match (&r.exec, &r.tcp, &r.http) {
        (Some(argv), None, None) => Probe::Exec(ctx.argv(&p.key("exec"), argv, "liveness.exec")),
        (None, Some(t), None) => Probe::Tcp(tcp(ctx, &p.key("tcp"), t)?),
        (None, None, Some(url)) => {
            let pu = p.key("http");
            let url = ctx.expand(&pu, url);
            Probe::http(&url)
                .map_err(|e| ctx.err(&pu, format!("`{url}`: {e}")))
                .ok()?
        }
        _ => {
            ctx.err(p, "exactly one of `exec`, `tcp` or `http`");
            return None;
        }
    };
    let interval_ms = (ctx.opt(p, "interval_ms", r.interval_ms, 100, 3_600_000, " ms"))
        .unwrap_or(DEFAULT_INTERVAL_MS);
    let timeout_ms = match r.timeout_ms {
        Some(v) => ctx.int(
            &p.key("timeout_ms"),
            v,
            1,
            i64::from(interval_ms),
            " ms (at most interval_ms)",
        )?,
        None => DEFAULT_TIMEOUT_MS.min(interval_ms),
    };
    let failures = ctx.opt(p, "failures", r.failures, 1, 100, "");
    Some(Liveness {
        probe,
        interval_ms,
        timeout_ms,
        failures: failures.unwrap_or(DEFAULT_FAILURES),
    })
}

/// A port (1..65535, on 127.0.0.1) or `IP:port` / `[IPv6]:port`.
fn tcp(ctx: &mut SlotCtx<'_>, p: &FieldPath, v: &Value) -> Option<SocketAddr> {
    match v {
        Value::Number(n) => {
            let port = (n.as_u64()).and_then(|n| u16::try_from(n).ok().filter(|n| *n >= 1));
            if port.is_none() {
                ctx.err(p, format!("{n}: expected a port 1..65535 or \"host:port\""));
            }
            port.map(|port| SocketAddr::from(([127, 0, 0, 1], port)))
        }
        Value::String(s) => {
            let s = ctx.expand(p, s);
            let addr = s.parse::<SocketAddr>().ok().filter(|a| a.port() != 0);
            if addr.is_none() {
                let why = "expected \"IP:port\" (an IP literal, [::1] for IPv6)";
                ctx.err(p, format!("`{s}`: {why}"));
            }
            addr
        }
        _ => {
            ctx.err(p, "expected a port or \"host:port\"");
            None
        }
    }
}

/// `type`; a oneshot's clean exit always ends it (`on_clean_exit: "stop"`),
/// so asking it to restart is a contradiction, reported.
fn kind(ctx: &mut SlotCtx<'_>, b: &FieldPath, raw: &RawSlot, restart: &mut Restart) -> Kind {
    let words = [("longrun", Kind::Longrun), ("oneshot", Kind::Oneshot)];
    let kind = ctx
        .word(&b.key("type"), raw.kind.as_ref(), &words)
        .unwrap_or_default();
    if kind == Kind::Oneshot {
        let asked = raw
            .restart
            .as_ref()
            .and_then(|r| r.on_clean_exit.as_deref());
        if asked.is_some() && raw.schedule.is_some() {
            ctx.err(
                &b.key("restart").key("on_clean_exit"),
                "`on_clean_exit` with `schedule`: a job's run ends, whatever its exit, and the job waits for its next tick",
            );
        } else if asked == Some("restart") {
            ctx.err(
                &b.key("restart").key("on_clean_exit"),
                "`restart` with \"type\": \"oneshot\": a oneshot's clean exit ends it (done)",
            );
        }
        restart.on_clean_exit = OnCleanExit::Stop;
    }
    kind
}

/// Keys that make no sense on a job, each an error at the key: its run is
/// no service others wait on or a watcher checks, and never the end of
/// the container (a failed run waits for the next tick).
fn not_for_jobs(ctx: &mut SlotCtx<'_>, b: &FieldPath, raw: &RawSlot) {
    let set = [
        (
            "readiness",
            raw.readiness.is_some(),
            "a job's run is no service to wait for",
        ),
        (
            "liveness",
            raw.liveness.is_some(),
            "a job's run is no service to watch: `timeout_s` ends a hung one",
        ),
        (
            "essential",
            raw.essential == Some(true),
            "a job never ends for good: a failed run waits for its next tick",
        ),
    ];
    for (key, present, why) in set {
        if present {
            ctx.err(&b.key(key), format!("`{key}` with `schedule`: {why}"));
        }
    }
}

/// Longest `every_s`: a year.
pub const MAX_EVERY_S: i64 = 31_536_000;

/// `schedule`, on a oneshot: exactly one of `cron` and `every_s`; a
/// `timezone` spelled as a zone name (whether the image has it is a fact
/// of where the job runs: `unknown_timezones`).
fn schedule(ctx: &mut SlotCtx<'_>, b: &FieldPath, r: &RawSchedule, kind: Kind) -> Option<Schedule> {
    let p = b.key("schedule");
    if kind != Kind::Oneshot {
        ctx.err(
            &p,
            "`schedule` makes a job, a run at each tick: it needs \"type\": \"oneshot\"",
        );
    }
    let (when, text) = match (&r.cron, r.every_s) {
        (Some(c), None) => {
            let pc = p.key("cron");
            let c = ctx.expand(&pc, c);
            let cron = crate::schedule::Cron::parse(&c).map_err(|e| ctx.err(&pc, e));
            (When::Cron(cron.ok()?), format!("cron {}", c.trim()))
        }
        (None, Some(n)) => {
            let n = ctx.int(&p.key("every_s"), n, 1, MAX_EVERY_S, " s")?;
            (When::Every(n), format!("every {n}s"))
        }
        _ => {
            ctx.err(
                &p,
                "exactly one of `cron` (\"m h dom mon dow\", or @daily, ...) and `every_s`",
            );
            return None;
        }
    };
    let timezone = r.timezone.as_ref().map(|t| {
        let pt = p.key("timezone");
        let t = ctx.expand(&pt, t);
        if !crate::schedule::is_zone_name(&t) {
            ctx.err(
                &pt,
                format!(
                    "`{}`: expected an IANA zone name such as Europe/Berlin",
                    crate::msg::escape(&t)
                ),
            );
        }
        (t, ctx.layer.site(pt))
    });
    if timezone.is_some() && matches!(when, When::Every(_)) {
        ctx.err(
            &p.key("timezone"),
            "`timezone` is for `cron`: `every_s` counts seconds, in no zone",
        );
    }
    let jitter_s = ctx.opt(&p, "jitter_s", r.jitter_s, 0, 86_400, " s");
    let timeout_s = ctx.opt(&p, "timeout_s", r.timeout_s, 1, 604_800, " s");
    let (timezone, timezone_site) = timezone.unzip();
    Some(Schedule {
        when,
        text,
        timezone,
        timezone_site,
        jitter_s: jitter_s.unwrap_or(0),
        timeout_s,
        catch_up: r.catch_up.unwrap_or(false),
    })
}
