//! The keys of a program that do not carry over, each reported with why;
//! and keys written twice, whose later value wins.

use super::program::Program;
use super::words;
use crate::Note;

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

impl Program<'_> {
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
            match DROPPED.iter().find(|(name, _)| name == k) {
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
}
