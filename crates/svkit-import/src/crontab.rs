//! A crontab as `crontab -l` prints it: `m h dom mon dow COMMAND` (or
//! `@daily COMMAND` and the other `@` names), `NAME=value` lines, `#`
//! comments. Each entry becomes a job (a oneshot with `schedule.cron`)
//! running its command under `sh -c`, as cron does; the variables set
//! above it go to its `env` (`CRON_TZ` to its `schedule.timezone`).
//! `@reboot` becomes a oneshot run once per container start. What cron
//! does and svkit does not (mail, `%` as stdin) is reported.

use std::collections::BTreeMap;
use std::path::Path;

use svkit::config::names::check_env_name;
use svkit::config::raw::RawSchedule;
use svkit::msg::At;
use svkit::schedule::Cron;

use crate::common::{error, no_placeholder, noted_slot_name, read_file};
use crate::{ImportError, Imported, Note, RawSlot};

/// Far above any crontab a person writes.
const MAX_BYTES: usize = 1 << 20;

const AT_NAMES: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// An entry's schedule (its five fields, an `@` name, or `@reboot`) and
/// its command, when `line` is one.
fn entry(line: &str) -> Option<(String, &str)> {
    let line = line.trim_start();
    if let Some((first, rest)) = line.split_once([' ', '\t']) {
        if first == "@reboot" || AT_NAMES.contains(&first) {
            return Some((first.to_string(), rest.trim_start()));
        }
    }
    let mut rest = line;
    let mut fields = Vec::new();
    for _ in 0..5 {
        let (f, r) = rest.split_once([' ', '\t'])?;
        fields.push(f);
        rest = r.trim_start();
    }
    let ok = fields.iter().all(|f| {
        f.chars()
            .all(|c| c.is_ascii_alphanumeric() || "*/,-".contains(c))
    });
    (ok && !rest.is_empty()).then(|| (fields.join(" "), rest))
}

/// `NAME=value` (blanks around `=`, the value maybe quoted), as cron reads
/// an environment line.
fn setting(line: &str) -> Option<(&str, String)> {
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    check_env_name(name).ok()?;
    let v = value.trim();
    let unquoted = ['"', '\''].iter().find_map(|q| {
        v.strip_prefix(*q)
            .and_then(|v| v.strip_suffix(*q))
            .map(str::to_string)
    });
    Some((name, unquoted.unwrap_or_else(|| v.to_string())))
}

/// Whether the first lines look like a crontab: some entry, and nothing
/// but entries, settings and comments before it.
pub fn looks_like(text: &str) -> bool {
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if l.starts_with('#') || setting(l).is_some() {
            continue;
        }
        return entry(l).is_some_and(|(s, _)| s.starts_with('@') || Cron::parse(&s).is_ok());
    }
    false
}

/// Import the crontab at `path`.
pub fn import(path: &Path) -> Result<Imported, ImportError> {
    let bytes = read_file(path, MAX_BYTES, "the crontab")?;
    let text =
        String::from_utf8(bytes).map_err(|_| error(path, "not UTF-8 text: a crontab is text"))?;
    let mut out = Imported {
        files: 1,
        ..Imported::default()
    };
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let mut zone: Option<String> = None;
    let mut shell = "/bin/sh".to_string();
    let at = |n: usize| At::line(path, n);
    let located = |n: usize, what: String| ImportError::new(at(n), what);
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, value)) = setting(line).filter(|_| entry(line).is_none()) {
            match name {
                "MAILTO" | "MAILFROM" => out.notes.push(Note::new(at(n), name, "cron mails a job's output; svkit mails nothing: the output goes to the job's log (`log.dir`) or to `docker logs`, and a failed run is in `svctl status`")),
                "CRON_TZ" => zone = Some(value),
                "SHELL" => shell = value,
                _ => {
                    env.insert(name.to_string(), value);
                }
            }
            continue;
        }
        let Some((when, command)) = entry(line) else {
            return Err(located(n, "not a crontab line: `m h dom mon dow COMMAND`, `@daily COMMAND`, `NAME=value` or a `#` comment".into()));
        };
        let command = percent(command, |why| out.notes.push(Note::new(at(n), "%", why)));
        let program = command.split_whitespace().next().unwrap_or("job");
        let base = program.rsplit('/').next().unwrap_or(program);
        let mut name = noted_slot_name(base, at(n), &mut out.notes)
            .or_else(|_| noted_slot_name("job", at(n), &mut out.notes))
            .map_err(|why| located(n, why))?;
        let taken = |s: &str| out.slots.iter().any(|o| o.name == s);
        if taken(&name) {
            let k = (2..).find(|k| !taken(&format!("{name}-{k}"))).unwrap_or(2);
            name = format!("{name}-{k}");
        }
        let mut slot = RawSlot {
            name,
            kind: Some("oneshot".into()),
            command: vec![shell.clone(), "-c".into(), command],
            env: env.clone(),
            ..RawSlot::default()
        };
        if when == "@reboot" {
            out.notes.push(Note::new(
                at(n),
                "@reboot",
                "runs once at every container start: a oneshot without a schedule",
            ));
        } else {
            Cron::parse(&when).map_err(|why| located(n, why))?;
            slot.schedule = Some(RawSchedule {
                cron: Some(when),
                timezone: zone.clone(),
                ..RawSchedule::default()
            });
        }
        no_placeholder(&slot, at(n))?;
        out.slots.push(slot);
    }
    if out.slots.is_empty() {
        return Err(error(
            path,
            "no job in it: a crontab line is `m h dom mon dow COMMAND`",
        ));
    }
    Ok(out)
}

/// The command before its first unescaped `%` (cron gives the rest to it
/// on stdin, each further `%` a newline), `\%` a `%`.
fn percent(cmd: &str, note: impl FnOnce(&'static str)) -> String {
    let mut out = String::new();
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'%') => {
                out.push('%');
                chars.next();
            }
            '%' => {
                note("cron gives the text after an unescaped `%` to the command on its stdin; not carried over: put it in a script, or pipe it in the command");
                break;
            }
            _ => out.push(c),
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_settings_and_what_is_not_carried_over() {
        let t = tempfile::tempdir().expect("tempdir");
        let p = t.path().join("crontab");
        std::fs::write(
            &p,
            "# m h dom mon dow command\nMAILTO=ops@example.com\nPATH = /usr/local/bin:/usr/bin:/bin\nCRON_TZ=Europe/Berlin\n\
             0 3 * * * /usr/local/bin/backup --to /data\n*/10 * * * * cleanup.sh\n@daily backup -x\n\
             @reboot warm-cache\n5 4 * * sun mail -s hi root%line one%line two\n",
        )
        .expect("write");
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(looks_like(&text));
        let i = import(&p).expect("imports");
        let names: Vec<&str> = i.slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["backup", "cleanup.sh", "backup-2", "warm-cache", "mail"]
        );
        let s = &i.slots[0];
        assert_eq!(
            s.command,
            ["/bin/sh", "-c", "/usr/local/bin/backup --to /data"]
        );
        assert_eq!(s.env["PATH"], "/usr/local/bin:/usr/bin:/bin");
        let sc = s.schedule.as_ref().expect("schedule");
        assert_eq!(
            (sc.cron.as_deref(), sc.timezone.as_deref()),
            (Some("0 3 * * *"), Some("Europe/Berlin"))
        );
        assert_eq!(
            i.slots[2].schedule.as_ref().and_then(|s| s.cron.as_deref()),
            Some("@daily")
        );
        assert!(i.slots[3].schedule.is_none());
        assert_eq!(i.slots[4].command[2], "mail -s hi root");
        let keys: Vec<&str> = i.notes.iter().map(|n| n.key.as_str()).collect();
        assert_eq!(keys, ["MAILTO", "@reboot", "%"]);
        // A bad entry is refused at its line; a Procfile is no crontab.
        std::fs::write(&p, "0 0 30 2 * never\n").expect("write");
        let e = import(&p).expect_err("never fires");
        assert!(
            e.to_string()
                .ends_with("crontab:1: `0 0 30 2 *` never fires: no chosen month has that day"),
            "{e}"
        );
        assert!(!looks_like("web: bundle exec puma\n"));
    }
}
