//! The keys of a program that become svkit policies: its log, its restart
//! policy (autorestart, exitcodes, startsecs, startretries) and how it is
//! stopped. The exact rules are in docs/import.md.

use svkit::config::names;
use svkit::config::raw::{RawLog, RawRestart};
use svkit::msg::At;

use super::program::{Mode, Program};
use super::words::{self, AutoRestart};
use crate::{ImportError, RawSlot};

/// What `stdout_logfile` names that is the container's own output.
const CONTAINER_OUTPUT: &[&str] = &["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"];
const CONTAINER_STDERR: &[&str] = &["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"];

/// `stdout_logfile` (+ `_maxbytes`, `_backups`) into `log`. `None`: the
/// template does not hold (see `Program::build`); `Some(where)`: where
/// the log dir was written, when there is one.
pub fn log(
    p: &mut Program<'_>,
    slot: &mut RawSlot,
    mode: Mode<'_>,
) -> Result<Option<Option<At>>, ImportError> {
    let Some(v) = p.value("stdout_logfile") else {
        return Ok(Some(None));
    };
    let pieces = p.pieces(v, "stdout_logfile", mode)?;
    let Some(path) = pieces.map(|p| super::expand::resolved(&p, 0)) else {
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
pub fn window(startsecs: i64, startretries: i64) -> (i64, i64) {
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

pub fn restart(p: &mut Program<'_>, slot: &mut RawSlot) -> Result<(), ImportError> {
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
    let r = RawRestart {
        max_deaths: window.map(|w| w.0),
        on_clean_exit: on_clean_exit_stop.then(|| "stop".into()),
        permanent_exit_codes: Some(perm),
        within_s: window.map(|w| w.1),
        backoff: None,
    };
    if ar != AutoRestart::Never {
        for key in ["startsecs", "startretries"] {
            if let Some(v) = p.value(key) {
                p.note(v, key, window_why(startsecs, startretries, deaths, within));
            }
        }
    }
    slot.restart = Some(r);
    Ok(())
}

/// The note on the death window.
fn window_why(startsecs: i64, startretries: i64, deaths: i64, within: i64) -> String {
    format!(
        "startsecs {startsecs}, startretries {startretries}: max_deaths {deaths} within_s {within}; \
         svkit counts every death in that window, not only deaths before startsecs (docs/import.md)"
    )
}

pub fn stop(p: &mut Program<'_>, slot: &mut RawSlot) -> Result<(), ImportError> {
    if let Some(v) = p.value("stopsignal") {
        let sig = v.text.trim().to_ascii_uppercase();
        let canon = names::check_signal(&sig)
            .map_err(|e| p.bad(v, "stopsignal", format!("`{}`: {e}", v.text)))?;
        let bare = canon.trim_start_matches("SIG");
        if bare != "TERM" {
            slot.down_signal = Some(bare.to_owned());
        }
    }
    let secs = p.int("stopwaitsecs", 0, 86_400, 10)?;
    slot.stop_timeout_ms = Some(secs * 1000);
    Ok(())
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
