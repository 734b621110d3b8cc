//! Building one validated `Slot` from a raw slot and an instance name:
//! `{instance}` expansion of every string, then every per-field rule. All
//! problems are collected in its [`SlotCtx`], with the checks its fields
//! share (`{instance}` expansion, argv, paths, variable names, ranges);
//! nothing stops at the first.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::{Diagnostic, Site};
use super::json_pos::FieldPath;
use super::model::*;
use super::names::*;
use super::parse::Layer;
use super::raw::{RawCheck, RawLog, RawReadiness, RawRestart, RawSlot};
use crate::probe::Probe;

/// Build the slot; the caller checks `ctx.diags` to know whether it is
/// usable. `name` is the already expanded and checked slot name.
pub(crate) fn build_slot(
    ctx: &mut SlotCtx<'_>,
    raw: &RawSlot,
    name: String,
    origin: Origin,
    top_user: Option<&(String, Site)>,
) -> Slot {
    let b = ctx.base.clone();
    let command = ctx.argv(&b.key("command"), &raw.command, "command");

    let (user, user_site) = match &raw.user {
        Some(u) => {
            let p = b.key("user");
            let u = ctx.expand(&p, u);
            if let Err(e) = check_user(&u) {
                ctx.err(&p, format!("`{u}`: {e}"));
            }
            (Some(u), Some(ctx.layer.site(p)))
        }
        None => match top_user {
            Some((u, site)) => (Some(u.clone()), Some(site.clone())),
            None => (None, None),
        },
    };
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
    let (env_files, secrets) = super::inputs::env_inputs(ctx, &b, raw, &env);
    let mut restart = raw
        .restart
        .as_ref()
        .map(|r| restart(ctx, &b.key("restart"), r))
        .unwrap_or_default();
    let kind = super::lifecycle::kind(ctx, &b, raw, &mut restart);
    let readiness = raw
        .readiness
        .as_ref()
        .and_then(|r| readiness(ctx, &b.key("readiness"), r));
    let down_signal = raw.down_signal.as_ref().and_then(|s| {
        let p = b.key("down_signal");
        let s = ctx.expand(&p, s);
        match check_signal(&s) {
            Ok(s) => Some(s),
            Err(e) => {
                ctx.err(&p, format!("`{s}`: {e}"));
                None
            }
        }
    });
    let stop_timeout_ms = raw
        .stop_timeout_ms
        .and_then(|v| ctx.int(&b.key("stop_timeout_ms"), v, 0, 86_400_000, " ms"));

    Slot {
        name,
        instance: ctx.instance.map(str::to_string),
        origin,
        command,
        user,
        user_site,
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
            .and_then(|l| super::lifecycle::liveness(ctx, &b.key("liveness"), l)),
    }
}

/// Per-slot validation context.
pub(crate) struct SlotCtx<'a> {
    pub layer: &'a Layer,
    pub base: FieldPath,
    pub instance: Option<&'a str>,
    pub sentinel_env: &'a str,
    pub diags: Vec<Diagnostic>,
}

impl SlotCtx<'_> {
    pub(super) fn err(&mut self, path: &FieldPath, msg: impl Into<String>) {
        self.diags.push(self.layer.diag(path, msg));
    }

    /// A variable name the slot sets (`env`, `secrets`), expanded: reported
    /// when it is not a valid name or is the sentinel svkit sets itself.
    pub(super) fn env_name(&mut self, path: &FieldPath, raw: &str) -> String {
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
    pub(super) fn expand(&mut self, path: &FieldPath, s: &str) -> String {
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

    pub(super) fn int(
        &mut self,
        path: &FieldPath,
        v: i64,
        lo: i64,
        hi: i64,
        unit: &str,
    ) -> Option<u32> {
        if v < lo || v > hi {
            self.err(path, format!("{v} is outside {lo}..{hi}{unit}"));
            None
        } else {
            u32::try_from(v).ok()
        }
    }

    pub(super) fn argv(&mut self, path: &FieldPath, raw: &[String], what: &str) -> Vec<String> {
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

    pub(super) fn abs_path(&mut self, path: &FieldPath, raw: &str) -> String {
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
    let keep = l
        .keep
        .and_then(|v| ctx.int(&p.key("keep"), v, 0, 10_000, " files"))
        .unwrap_or(DEFAULT_LOG_KEEP);
    // s6-log silently clamps `s` to this range; refusing keeps the docs true.
    let max_bytes = l
        .max_bytes
        .and_then(|v| ctx.int(&p.key("max_bytes"), v, 4096, 268_435_455, " bytes"))
        .unwrap_or(DEFAULT_LOG_MAX_BYTES);
    let stdout = l.stdout.unwrap_or(true);
    let (prefix, format) = super::inputs::log_output(ctx, p, l, stdout, slot);
    Log {
        dir,
        stdout,
        keep,
        max_bytes,
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
            let pc = pcodes.index(i);
            if let Some(c) = ctx.int(&pc, *c, 0, 255, " (exit codes are 0..255)") {
                if let Ok(c) = u8::try_from(c) {
                    if !v.contains(&c) {
                        v.push(c);
                    }
                }
            }
        }
        out.permanent_exit_codes = v;
    }
    if let Some(s) = &r.on_clean_exit {
        let pe = p.key("on_clean_exit");
        out.on_clean_exit = match ctx.expand(&pe, s).as_str() {
            "restart" => OnCleanExit::Restart,
            "stop" => OnCleanExit::Stop,
            other => {
                ctx.err(&pe, format!("`{other}`: expected \"restart\" or \"stop\""));
                OnCleanExit::Restart
            }
        };
    }
    if let Some(bk) = &r.backoff {
        let pb = p.key("backoff");
        let max_s = bk
            .max_s
            .and_then(|v| ctx.int(&pb.key("max_s"), v, 0, 3600, " s (0 = no delay)"))
            .unwrap_or(DEFAULT_BACKOFF_MAX_S);
        let reset_after_s = bk
            .reset_after_s
            .and_then(|v| ctx.int(&pb.key("reset_after_s"), v, 1, 86_400, " s"))
            .unwrap_or(DEFAULT_BACKOFF_RESET_AFTER_S);
        out.backoff = Backoff {
            max_s,
            reset_after_s,
        };
    }
    // s6 keeps at most 4096 records in its death tally; 0: never.
    let deaths =
        (r.max_deaths).map(|d| ctx.int(&p.key("max_deaths"), d, 0, 4096, " deaths (0 = never)"));
    let within_s = (r.within_s).and_then(|w| ctx.int(&p.key("within_s"), w, 1, 86_400, " s"));
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
    Readiness {
        probe: Probe::Exec(ctx.argv(&p.key("command"), &c.command, "readiness.check.command")),
        interval_ms: c
            .interval_ms
            .and_then(|v| ctx.int(&p.key("interval_ms"), v, 1, 3_600_000, " ms"))
            .unwrap_or(DEFAULT_CHECK_INTERVAL_MS),
        timeout_ms: c
            .timeout_ms
            .and_then(|v| ctx.int(&p.key("timeout_ms"), v, 0, 86_400_000, " ms"))
            .unwrap_or(0),
    }
}
