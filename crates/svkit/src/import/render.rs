//! The config text an import prints: `{"slots": [...]}`, pretty, each
//! slot's keys in the order docs/config.md lists them (nested objects in
//! key order), a final newline.

use std::io::Write as _;

use super::slot::{Log, Pairs, Restart, Slot};

/// The config text of `slots`, in serde_json's pretty layout (two spaces
/// a level, `[]` and `{}` when empty), written directly: serde's
/// serializer, with a formatter call for every bracket, comma and indent,
/// cost more than the rest of the render.
pub fn render(slots: &[Slot]) -> String {
    // Room for a typical slot up front: growing a big text by doubling
    // copied it over and over.
    let mut out = Vec::with_capacity(64 + slots.len() * 768);
    if slots.is_empty() {
        out.extend_from_slice(b"{\n  \"slots\": []");
    } else {
        out.extend_from_slice(b"{\n  \"slots\": [");
        for (i, s) in slots.iter().enumerate() {
            newline(&mut out, 2, i > 0);
            slot(&mut out, s);
        }
        newline(&mut out, 1, false);
        out.push(b']');
    }
    out.extend_from_slice(b"\n}\n");
    // Every piece written is UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// One slot at depth 2, its keys in the order of docs/config.md's table
/// (as `Slot`'s `Serialize` writes them), nested objects in key order.
fn slot(out: &mut Vec<u8>, s: &Slot) {
    let mut o = Obj::open(out, 2);
    string(o.key("name"), &s.name);
    if let Some(names) = &s.instances {
        let mut i = Obj::open(o.key("instances"), 3);
        strings(i.key("names"), names, 4);
        i.end();
    }
    if s.oneshot {
        o.key("type").extend_from_slice(b"\"oneshot\"");
    }
    strings(o.key("command"), &s.command, 3);
    if let Some(u) = &s.user {
        string(o.key("user"), u);
    }
    if let Some(c) = &s.cwd {
        string(o.key("cwd"), c);
    }
    if !s.env.is_empty() {
        pairs(o.key("env"), &s.env, 3, |out, v| string(out, v));
    }
    if s.autostart_never {
        o.key("autostart").extend_from_slice(b"\"never\"");
    }
    if !s.depends_on.is_empty() {
        pairs(o.key("depends_on"), &s.depends_on, 3, |out, c| {
            string(out, c.as_str());
        });
    }
    if let Some(fd) = s.notification_fd {
        let mut r = Obj::open(o.key("readiness"), 3);
        int(r.key("notification_fd"), fd);
        r.end();
    }
    if let Some(l) = &s.log {
        log(o.key("log"), l);
    }
    if let Some(r) = &s.restart {
        restart(o.key("restart"), r);
    }
    if let Some(sig) = &s.down_signal {
        string(o.key("down_signal"), sig);
    }
    if let Some(ms) = s.stop_timeout_ms {
        int(o.key("stop_timeout_ms"), ms);
    }
    o.end();
}

fn log(out: &mut Vec<u8>, l: &Log) {
    let mut o = Obj::open(out, 3);
    string(o.key("dir"), &l.dir);
    if let Some(k) = l.keep {
        int(o.key("keep"), k);
    }
    if let Some(b) = l.max_bytes {
        int(o.key("max_bytes"), b);
    }
    o.end();
}

fn restart(out: &mut Vec<u8>, r: &Restart) {
    let mut o = Obj::open(out, 3);
    if let Some((deaths, _)) = r.window {
        int(o.key("max_deaths"), deaths);
    }
    if r.on_clean_exit_stop {
        o.key("on_clean_exit").extend_from_slice(b"\"stop\"");
    }
    array(
        o.key("permanent_exit_codes"),
        &r.permanent_exit_codes,
        4,
        |out, c| {
            int(out, c);
        },
    );
    if let Some((_, within)) = r.window {
        int(o.key("within_s"), within);
    }
    o.end();
}

/// An object being written at `depth`: its keys go one level deeper.
struct Obj<'a> {
    out: &'a mut Vec<u8>,
    depth: usize,
    keys: usize,
}

impl<'a> Obj<'a> {
    fn open(out: &'a mut Vec<u8>, depth: usize) -> Self {
        out.push(b'{');
        Obj {
            out,
            depth,
            keys: 0,
        }
    }

    /// Starts the entry `k` (a name needing no escape); its value is
    /// written next, into what this returns.
    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        newline(self.out, self.depth + 1, self.keys > 0);
        self.keys += 1;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\": ");
        self.out
    }

    fn end(self) {
        if self.keys > 0 {
            newline(self.out, self.depth, false);
        }
        self.out.push(b'}');
    }
}

/// An array of strings whose first line is at `depth`.
fn strings(out: &mut Vec<u8>, a: &[String], depth: usize) {
    array(out, a, depth, |out, x| string(out, x));
}

/// An array whose first line is at `depth`.
fn array<T>(out: &mut Vec<u8>, a: &[T], depth: usize, item: impl Fn(&mut Vec<u8>, &T)) {
    if a.is_empty() {
        out.extend_from_slice(b"[]");
        return;
    }
    out.push(b'[');
    for (i, x) in a.iter().enumerate() {
        newline(out, depth + 1, i > 0);
        item(out, x);
    }
    newline(out, depth, false);
    out.push(b']');
}

/// An object of `p`'s names (any text: escaped as need be) whose first
/// line is at `depth`.
fn pairs<V>(out: &mut Vec<u8>, p: &Pairs<V>, depth: usize, value: impl Fn(&mut Vec<u8>, &V)) {
    if p.is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    out.push(b'{');
    for (i, (k, v)) in p.iter().enumerate() {
        newline(out, depth + 1, i > 0);
        string(out, k);
        out.extend_from_slice(b": ");
        value(out, v);
    }
    newline(out, depth, false);
    out.push(b'}');
}

/// A number as serde_json writes it; into a Vec, that cannot fail.
fn int(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    let _ = write!(out, "{n}");
}

/// A JSON string: as it is when nothing in it needs escaping (nearly
/// every string of a config), else as serde_json escapes it.
fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        let _ = serde_json::to_writer(&mut *out, s);
        return;
    }
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// A comma, a line break and the indent of up to 32 levels.
const BREAK: &[u8] = b",\n                                                                ";

/// A line break (after a comma when `comma`) and the indent of `depth`.
fn newline(out: &mut Vec<u8>, depth: usize, comma: bool) {
    let from = usize::from(!comma);
    match BREAK.get(from..2 + 2 * depth) {
        Some(b) => out.extend_from_slice(b),
        None => {
            out.extend_from_slice(&BREAK[from..2]);
            (0..depth).for_each(|_| out.extend_from_slice(b"  "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::slot::Condition;

    /// `{"slots": [...]}` through serde_json's own pretty serializer.
    #[derive(serde::Serialize)]
    struct Config<'a> {
        slots: &'a [Slot],
    }

    #[test]
    fn the_layout_is_serde_jsons_pretty_one_with_every_key() {
        let full = Slot {
            name: "a\"b-{instance}".into(),
            instances: Some(vec!["0".into(), "x\\y".into()]),
            oneshot: true,
            command: vec!["sh".into(), "-c".into(), "echo \"$X\"\n\t".into()],
            user: Some("www-data".into()),
            cwd: Some("/srv/a b".into()),
            env: [("Z", "1"), ("A", "q\"uote"), ("M", "")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            autostart_never: true,
            depends_on: [("db", Condition::Ready), ("m", Condition::Completed)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            notification_fd: Some(3),
            log: Some(Log {
                dir: "/var/log/a".into(),
                keep: Some(0),
                max_bytes: Some(4096),
            }),
            restart: Some(Restart {
                on_clean_exit_stop: true,
                permanent_exit_codes: vec![2, -3],
                window: Some((0, 86_400)),
            }),
            down_signal: Some("QUIT".into()),
            stop_timeout_ms: Some(0),
        };
        let bare = Slot {
            name: "b".into(),
            instances: Some(Vec::new()),
            restart: Some(Restart::default()),
            log: Some(Log::default()),
            ..Slot::default()
        };
        for set in [vec![], vec![bare.clone()], vec![full.clone(), bare, full]] {
            let want = serde_json::to_string_pretty(&Config { slots: &set }).unwrap();
            assert_eq!(render(&set), want + "\n", "{set:#?}");
        }
    }
}
