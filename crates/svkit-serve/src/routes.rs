//! The endpoints, each a rendering of the one slot model (docs/serve.md
//! has the table). A slot name in a path is checked against the slot
//! name rules before any file is touched; logs and control need the
//! token; every refusal is one log line.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use svkit::config::names::check_slot_name;
use svkit::config::Model;
use svkit::control::{self, Op, Request, Waited};
use svkit::msg::{self, escape};
use svkit::s6::control::SvcCommand;
use svkit::slot::events::{follow, json_line, Event, Followed, Sink};
use svkit::slot::snapshot::{Slots, Snapshot};

use crate::gate::{Conn, Req};
use crate::{Shared, MAX_LONG};

/// The dashboard: one page, its script and its style, nothing fetched
/// from elsewhere.
const PAGE: &str = include_str!("dashboard.html");
const SCRIPT: &str = include_str!("dashboard.js");
const STYLE: &str = include_str!("dashboard.css");
/// Only the page's own script and style files (nothing inline), only this
/// origin, no frames, no forms sent anywhere.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/// A control request waits for the slot to get there, at most this long.
const CONTROL_WAIT: Duration = Duration::from_secs(30);
/// `lines=` of a log read: default and most.
const LINES: usize = 100;
const MAX_LINES: usize = 10_000;

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

pub struct Resp {
    code: u16,
    ctype: &'static str,
    body: Vec<u8>,
}

fn resp(code: u16, ctype: &'static str, body: impl Into<Vec<u8>>) -> Resp {
    Resp {
        code,
        ctype,
        body: body.into(),
    }
}

fn text(code: u16, body: impl std::fmt::Display) -> Resp {
    resp(code, TEXT, format!("{body}\n"))
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Internal Server Error",
    }
}

fn head(code: u16, ctype: &str, len: Option<usize>) -> String {
    let len = len.map_or(String::new(), |n| format!("Content-Length: {n}\r\n"));
    let mut h = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: {ctype}\r\n{len}Connection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
        reason(code)
    );
    if ctype.starts_with("text/html") {
        h.push_str(&format!("Content-Security-Policy: {CSP}\r\n"));
    }
    if code == 401 {
        h.push_str("WWW-Authenticate: Bearer\r\n");
    }
    h.push_str("\r\n");
    h
}

fn send(conn: &mut Conn, r: &Resp) {
    let mut out = head(r.code, r.ctype, Some(r.body.len())).into_bytes();
    out.extend_from_slice(&r.body);
    let _ = conn.write_all(&out);
}

/// A bad request: its answer, and one log line.
pub fn refuse(conn: &mut Conn, peer: &str, code: u16, why: &str) {
    msg::warn(format_args!("{}: {code}: {}", escape(peer), escape(why)));
    send(conn, &text(code, why));
}

/// Answers one request (a stream or control in a thread of its own).
pub fn answer(sh: &'static Shared, mut req: Req) {
    let long = req.method == "POST"
        || req.path == "/v1/events"
        || (req.path.ends_with("/logs")
            && pairs(&req.query).any(|(k, v)| k == "follow" && v == "1"));
    if !long {
        return finish(sh, req);
    }
    if sh.long.fetch_add(1, Ordering::SeqCst) >= MAX_LONG {
        sh.long.fetch_sub(1, Ordering::SeqCst);
        refuse(
            &mut req.conn,
            &req.peer,
            503,
            "too many streams and control requests at once",
        );
        return;
    }
    std::thread::spawn(move || {
        finish(sh, req);
        sh.long.fetch_sub(1, Ordering::SeqCst);
    });
}

/// Routes `req` and sends its response (one log line for a refusal).
fn finish(sh: &'static Shared, mut req: Req) {
    let Some(r) = route(sh, &mut req) else { return };
    if r.code >= 400 && r.code != 503 {
        let body = String::from_utf8_lossy(&r.body);
        let first = body.lines().next().unwrap_or_default();
        let what = format!("{} {}", req.method, req.path);
        msg::warn(format_args!(
            "{}: {what}: {}: {}",
            escape(&req.peer),
            r.code,
            escape(first)
        ));
    }
    send(&mut req.conn, &r);
}

fn pairs(q: &str) -> impl Iterator<Item = (&str, &str)> {
    (q.split('&').filter(|p| !p.is_empty())).map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// The response, or None when the handler wrote it itself (a stream).
fn route(sh: &'static Shared, req: &mut Req) -> Option<Resp> {
    let model = sh.model();
    let slots = Slots {
        scandir: &sh.scandir,
        model: model.as_deref(),
    };
    let get = req.method == "GET";
    let r = match req.path.as_str() {
        "/" if get => Ok(resp(200, "text/html; charset=utf-8", PAGE)),
        "/dashboard.js" if get => Ok(resp(200, "text/javascript; charset=utf-8", SCRIPT)),
        "/dashboard.css" if get => Ok(resp(200, "text/css; charset=utf-8", STYLE)),
        "/livez" if get => livez(&slots),
        "/readyz" if get => readyz(&slots, &req.query),
        "/healthz" if get => healthz(&slots),
        "/metrics" if get => metrics(&slots),
        "/v1/slots" if get => status(&slots, &[]),
        "/v1/events" if get => return events(&slots, req),
        "/" | "/livez" | "/readyz" | "/healthz" | "/metrics" | "/v1/slots" | "/v1/events" => {
            Ok(text(405, "method not allowed"))
        }
        p => match p.strip_prefix("/v1/slots/") {
            Some(rest) => return slot_route(&slots, req, rest.to_string()),
            None => Ok(text(404, "no such endpoint")),
        },
    };
    Some(r.unwrap_or_else(|refused| refused))
}

fn slot_route(slots: &Slots<'_>, req: &mut Req, rest: String) -> Option<Resp> {
    let (name, what) = rest.split_once('/').unwrap_or((&rest, ""));
    // Before any file is touched: `..`, `/`, control characters (raw or
    // %-escaped, which is never decoded) are not a name.
    if let Err(e) = check_slot_name(name) {
        return Some(text(400, format!("bad slot name `{}`: {e}", escape(name))));
    }
    let post = req.method == "POST";
    let op = match what {
        "" | "logs" if post => return Some(text(405, "method not allowed")),
        "start" | "stop" | "restart" | "signal" if !post => {
            return Some(text(405, "method not allowed: use POST"))
        }
        "" => return Some(status(slots, &[name.to_string()]).unwrap_or_else(|r| r)),
        "logs" => None,
        "start" => Some(Op::Start),
        "stop" => Some(Op::Stop),
        "restart" => Some(Op::Restart),
        "signal" => None,
        _ => return Some(text(404, "no such endpoint")),
    };
    if let Err(r) = authorize(slots.model, req) {
        return Some(r);
    }
    if !slots.known(name) {
        return Some(text(
            404,
            format!("unknown slot {name}: not in the scandir"),
        ));
    }
    let names = [name.to_string()];
    if what == "logs" {
        return logs(slots, req, name);
    }
    let said = match op {
        Some(op) => {
            let r = Request {
                op,
                all: false,
                wait: true,
                timeout: CONTROL_WAIT,
            };
            match control::run(slots, &names, &r) {
                Ok(w) => waited(w),
                Err(e @ (control::Error::InForeground { .. } | control::Error::Busy { .. })) => {
                    text(409, e)
                }
                Err(e) => text(500, e),
            }
        }
        None => {
            let sig = pairs(&req.query).find(|(k, _)| *k == "sig").map(|(_, v)| v);
            let Some(cmd) = sig.and_then(SvcCommand::from_signal) else {
                let names = svkit::s6::control::signal_names();
                return Some(text(400, format!("?sig= must be one of {names}")));
            };
            match control::send_all(slots, &names, cmd) {
                Ok(()) => text(200, "ok"),
                Err(e) => text(500, e),
            }
        }
    };
    let q = if req.query.is_empty() { "" } else { "?" };
    msg::info(format_args!(
        "{}: POST {}{q}{}: {}",
        escape(&req.peer),
        escape(&req.path),
        escape(&req.query),
        said.code,
    ));
    Some(said)
}

/// What a wait came to, as `svctl`'s exit codes say it, in its words.
fn waited(w: Waited) -> Resp {
    let code = match w {
        Waited::Met => return text(200, "ok"),
        Waited::Timeout { .. } | Waited::LogStuck { .. } => 504,
        Waited::Gone(_) => 404,
        Waited::GaveUp(_) | Waited::Failed { .. } => 409,
    };
    text(code, w.lines().join("; "))
}

/// Logs and control: 403 without a token file (or with one every user
/// may read), 401 without its token.
fn authorize(model: Option<&Model>, req: &Req) -> Result<(), Resp> {
    use std::os::unix::fs::PermissionsExt as _;
    let forbid = |why: String| text(403, format!("forbidden: {why}"));
    let file = model
        .and_then(|m| m.http.as_ref())
        .and_then(|h| h.token_file.as_deref());
    let Some(file) = file else {
        let why = "the config's http has no token_file (logs and control are off)";
        return Err(forbid(why.into()));
    };
    // None: a token every user may read, refused.
    let token = std::fs::metadata(file).and_then(|m| match m.permissions().mode() & 0o004 {
        0 => std::fs::read(file).map(Some),
        _ => Ok(None),
    });
    let token = match token {
        Ok(Some(t)) => t.trim_ascii().to_vec(),
        Ok(None) => {
            let why = format!("token file {file} is readable by every user: refused (chmod o-r)");
            return Err(forbid(why));
        }
        Err(e) => {
            let why = msg::strerror(&e);
            return Err(forbid(format!("unable to read token file {file}: {why}")));
        }
    };
    if token.is_empty() {
        return Err(forbid(format!("token file {file} is empty")));
    }
    // The scheme's name is case-insensitive (RFC 9110).
    let given = (req.auth.as_deref())
        .and_then(|a| a.split_at_checked(7))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case(b"bearer "))
        .map(|(_, t)| t);
    match given {
        Some(g) if same(g, &token) => Ok(()),
        _ => Err(text(
            401,
            "unauthorized: Authorization: Bearer TOKEN (the http.token_file's) needed",
        )),
    }
}

/// Equal, in a time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let diff = (0..n).fold(a.len() ^ b.len(), |d, i| {
        d | usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0))
    });
    diff == 0
}

/// The snapshot every view reads (`measure`d: with CPU and memory); an
/// unknown slot named is 404, an unreadable scandir 503. The views below
/// answer `Err` for such a refusal, so that `?` says it.
fn snapshot(slots: &Slots<'_>, names: &[String], measure: bool) -> Result<Snapshot, Resp> {
    let mut snap = slots.snapshot(names, false).map_err(|e| text(503, e))?;
    if !snap.unknown.is_empty() {
        let unknown = snap.unknown.join(", ");
        return Err(text(
            404,
            format!("unknown slot {unknown}: not in the scandir"),
        ));
    }
    if measure {
        snap.measure();
    }
    Ok(snap)
}

/// 200 with `ok` when `why` is empty, else `bad` with one line each.
fn verdict(why: Vec<String>, ok: &str, bad: u16) -> Resp {
    if why.is_empty() {
        text(200, ok)
    } else {
        text(bad, why.join("\n"))
    }
}

fn status(slots: &Slots<'_>, names: &[String]) -> Result<Resp, Resp> {
    Ok(resp(200, JSON, snapshot(slots, names, true)?.json()))
}

/// 503 when s6-svscan is gone, the scandir unreadable or an essential
/// slot failed for good; never for a slot merely restarting.
fn livez(slots: &Slots<'_>) -> Result<Resp, Resp> {
    if let Some(why) = svkit::container::supervision_missing() {
        return Err(text(503, format!("no supervision: {why}")));
    }
    let snap = snapshot(slots, &[], false)?;
    let essential = |n: &str| {
        slots.slot(n).and_then(|s| s.essential) == Some(true)
            || slots.dir(n).join(svkit::slot::end::ESSENTIAL_FILE).exists()
    };
    let dead = (snap.rows.iter())
        .filter(|r| r.v.failed && essential(&r.name))
        .map(|r| {
            let why = r.v.why.as_deref().unwrap_or("for good");
            format!("essential slot {} failed: {why}", r.name)
        });
    Ok(verdict(dead.collect(), "ok", 503))
}

/// 200 when no slot is [`svkit::slot::snapshot::Row::unready`]; 503 with one line per slot that is.
fn readyz(slots: &Slots<'_>, query: &str) -> Result<Resp, Resp> {
    let mut names = Vec::new();
    for (k, v) in pairs(query) {
        if k != "slot" {
            let k = escape(k);
            return Err(text(
                400,
                format!("unknown parameter `{k}` (only slot=NAME)"),
            ));
        }
        if let Err(e) = check_slot_name(v) {
            return Err(text(400, format!("bad slot name `{}`: {e}", escape(v))));
        }
        names.push(v.to_string());
    }
    let snap = snapshot(slots, &names, false)?;
    Ok(verdict(
        snap.rows.iter().filter_map(|r| r.unready()).collect(),
        "ready",
        503,
    ))
}

/// `svctl status`'s verdict: 200 for its exit 0, 503 with its table and
/// warnings otherwise.
fn healthz(slots: &Slots<'_>) -> Result<Resp, Resp> {
    let snap = snapshot(slots, &[], true)?;
    let mut body = snap.text(false);
    for w in snap.warnings() {
        body.push_str(&format!("warning: {w}\n"));
    }
    let code = if snap.exit_code() == 0 { 200 } else { 503 };
    Ok(resp(code, TEXT, body))
}

fn metrics(slots: &Slots<'_>) -> Result<Resp, Resp> {
    let snap = snapshot(slots, &[], true)?;
    let t = svkit::slot::metrics::of_snapshot(slots, snap)
        .map_err(|(n, e)| text(500, format!("unable to read status of {n}: {e}")))?;
    Ok(resp(200, "text/plain; version=0.0.4; charset=utf-8", t))
}

struct Sse<'a>(&'a mut Conn);

impl Sink for Sse<'_> {
    fn event(&mut self, e: &Event) -> bool {
        self.0
            .write_all(format!("data: {}\n\n", json_line(e)).as_bytes())
            .is_ok()
    }
}

/// Ends a stream when its client goes away. A client sends nothing after
/// its request, so a read that returns at all is its end (EOF, a reset);
/// the socket is then shut down both ways, which the stream sees at once
/// (a hangup in its poll, a failed write). Quiet streams would otherwise
/// hold their thread until their next line. Returns whether it ended.
fn watch_hangup(conn: &Conn) -> Arc<AtomicBool> {
    let gone = Arc::new(AtomicBool::new(false));
    if let Ok(mut peer) = conn.try_clone() {
        let g = Arc::clone(&gone);
        std::thread::spawn(move || {
            let mut b = [0u8; 512];
            while matches!(peer.read(&mut b), Ok(n) if n > 0) {}
            g.store(true, Ordering::SeqCst);
            let _ = peer.shutdown(std::net::Shutdown::Both);
        });
    }
    gone
}

/// Starts a stream: its head (no length) and `first`; false when the
/// client is gone already.
fn open_stream(req: &mut Req, ctype: &str, first: &[u8]) -> bool {
    let h = head(200, ctype, None);
    req.conn.write_all(&[h.as_bytes(), first].concat()).is_ok()
}

/// Server-sent events, one per `svctl events --json` record, until the
/// client goes away.
fn events(slots: &Slots<'_>, req: &mut Req) -> Option<Resp> {
    // A comment first: the client knows the stream is open.
    if !open_stream(req, "text/event-stream", b": svkit events\n\n") {
        return None;
    }
    watch_hangup(&req.conn);
    let fd = req.conn.try_clone().ok();
    let r = follow(
        slots,
        &Followed::Ours,
        fd.as_ref().map(std::os::fd::AsFd::as_fd),
        &mut Sse(&mut req.conn),
    );
    let _ = req.conn.shutdown(std::net::Shutdown::Both);
    if let Err(e) = r {
        msg::warn(format_args!(
            "{}: event stream ended: {e}",
            escape(&req.peer)
        ));
    }
    None
}

/// The slot's last `lines=N` log lines; `follow=1`: and the lines after
/// them as they come.
fn logs(slots: &Slots<'_>, req: &mut Req, name: &str) -> Option<Resp> {
    let mut lines = LINES;
    let mut follow = false;
    for (k, v) in pairs(&req.query) {
        match (k, v.parse::<usize>()) {
            ("lines", Ok(n)) if n <= MAX_LINES => lines = n,
            ("follow", Ok(n @ (0 | 1))) => follow = n == 1,
            _ => {
                let k = escape(k);
                let why = format!("bad parameter `{k}` (lines=0..{MAX_LINES}, follow=0|1)");
                return Some(text(400, why));
            }
        }
    }
    let Some(dir) = svkit::logs::dir_of(slots, name) else {
        let why = format!("{name} has no log dir (its output goes to docker logs)");
        return Some(text(404, why));
    };
    let (body, pos) = match svkit::logs::tail(&dir, lines) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(e) => {
            let why = msg::strerror(&e);
            let what = format!("unable to read log dir {}: {why}", dir.display());
            return Some(text(500, what));
        }
    };
    if !follow {
        return Some(resp(200, TEXT, body));
    }
    if !open_stream(req, TEXT, &body) {
        return None;
    }
    let gone = watch_hangup(&req.conn);
    let mut f = svkit::logs::Follower::new(&dir, pos);
    while !gone.load(Ordering::SeqCst) {
        let until = std::time::Instant::now() + Duration::from_secs(1);
        if f.run(&mut req.conn, Some(until), &mut || {}).is_err() {
            break;
        }
    }
    let _ = req.conn.shutdown(std::net::Shutdown::Both);
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_compare_needs_every_byte_and_the_length() {
        assert!(same(b"s3cret", b"s3cret"));
        assert!(!same(b"s3cre", b"s3cret"));
        assert!(!same(b"s3cretX", b"s3cret"));
        assert!(!same(b"s3creT", b"s3cret"));
        assert!(!same(b"", b"s3cret"));
        assert!(same(b"", b""));
    }

    #[test]
    fn query_pairs_are_split_not_decoded() {
        let q: Vec<_> = pairs("slot=a&&slot=b%2f&follow").collect();
        assert_eq!(q, [("slot", "a"), ("slot", "b%2f"), ("follow", "")]);
    }

    #[test]
    fn heads_close_and_only_the_page_has_its_policy() {
        let page = head(200, "text/html; charset=utf-8", Some(3));
        assert!(page.contains("Content-Security-Policy: default-src 'none'; script-src 'self';"));
        assert!(page.contains("Connection: close\r\n") && page.ends_with("\r\n\r\n"));
        let denied = head(401, TEXT, Some(0));
        assert!(denied.starts_with("HTTP/1.1 401 Unauthorized\r\n"));
        assert!(denied.contains("WWW-Authenticate: Bearer\r\n"));
        assert!(!denied.contains("Content-Security-Policy"));
        assert!(!head(200, "text/event-stream", None).contains("Content-Length"));
    }
}
