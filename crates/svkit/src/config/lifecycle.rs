//! How a slot's runs are judged: `type` (a long-running service or a job
//! run to completion) and `liveness` (one of `exec` (argv), `tcp` (a port,
//! or `host:port`) or `http` (a URL), with `interval_ms`, `timeout_ms` and
//! `failures`).

use std::net::SocketAddr;

use serde_json::Value;

use super::json_pos::FieldPath;
use super::model::{Kind, Liveness, OnCleanExit, Restart};
use super::raw::{RawLiveness, RawSlot};
use super::slot::SlotCtx;
use crate::probe::Probe;

pub const DEFAULT_INTERVAL_MS: u32 = 10_000;
pub const DEFAULT_TIMEOUT_MS: u32 = 1_000;
pub const DEFAULT_FAILURES: u32 = 3;

pub(super) fn liveness(ctx: &mut SlotCtx<'_>, p: &FieldPath, r: &RawLiveness) -> Option<Liveness> {
    let probe = match (&r.exec, &r.tcp, &r.http) {
        (Some(argv), None, None) => Probe::Exec(ctx.argv(&p.key("exec"), argv, "liveness.exec")),
        (None, Some(t), None) => Probe::Tcp(tcp(ctx, &p.key("tcp"), t)?),
        (None, None, Some(url)) => {
            let pu = p.key("http");
            let url = ctx.expand(&pu, url);
            match Probe::http(&url) {
                Ok(probe) => probe,
                Err(e) => {
                    ctx.err(&pu, format!("`{url}`: {e}"));
                    return None;
                }
            }
        }
        _ => {
            ctx.err(p, "exactly one of `exec`, `tcp` or `http`");
            return None;
        }
    };
    let interval_ms = r
        .interval_ms
        .and_then(|v| ctx.int(&p.key("interval_ms"), v, 100, 3_600_000, " ms"))
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
    let failures = r
        .failures
        .and_then(|v| ctx.int(&p.key("failures"), v, 1, 100, ""))
        .unwrap_or(DEFAULT_FAILURES);
    Some(Liveness {
        probe,
        interval_ms,
        timeout_ms,
        failures,
    })
}

/// A port (1..65535, on 127.0.0.1) or `IP:port` / `[IPv6]:port`.
fn tcp(ctx: &mut SlotCtx<'_>, p: &FieldPath, v: &Value) -> Option<SocketAddr> {
    match v {
        Value::Number(n) => match n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n >= 1)
        {
            Some(port) => Some(SocketAddr::from(([127, 0, 0, 1], port))),
            None => {
                ctx.err(p, format!("{n}: expected a port 1..65535 or \"host:port\""));
                None
            }
        },
        Value::String(s) => {
            let s = ctx.expand(p, s);
            match s.parse::<SocketAddr>() {
                Ok(a) if a.port() != 0 => Some(a),
                _ => {
                    ctx.err(
                        p,
                        format!("`{s}`: expected \"IP:port\" (an IP literal, [::1] for IPv6)"),
                    );
                    None
                }
            }
        }
        _ => {
            ctx.err(p, "expected a port or \"host:port\"");
            None
        }
    }
}

/// `type`; a oneshot's clean exit always ends it (`on_clean_exit: "stop"`),
/// so asking it to restart is a contradiction, reported.
pub(super) fn kind(
    ctx: &mut SlotCtx<'_>,
    b: &FieldPath,
    raw: &RawSlot,
    restart: &mut Restart,
) -> Kind {
    let p = b.key("type");
    let kind = match raw.kind.as_deref().map(|s| ctx.expand(&p, s)).as_deref() {
        None | Some("longrun") => Kind::Longrun,
        Some("oneshot") => Kind::Oneshot,
        Some(other) => {
            ctx.err(
                &p,
                format!("`{other}`: expected \"longrun\" or \"oneshot\""),
            );
            Kind::Longrun
        }
    };
    if kind == Kind::Oneshot {
        let asked = raw
            .restart
            .as_ref()
            .and_then(|r| r.on_clean_exit.as_deref());
        if asked == Some("restart") {
            ctx.err(
                &b.key("restart").key("on_clean_exit"),
                "`restart` with \"type\": \"oneshot\": a oneshot's clean exit ends it (done)",
            );
        }
        restart.on_clean_exit = OnCleanExit::Stop;
    }
    kind
}
