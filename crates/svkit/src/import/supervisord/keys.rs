//! The keys of a program that do not carry over, each reported with why;
//! and keys written twice, whose later value wins.

use super::program::Program;
use super::words;
use crate::import::Note;

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

/// How many keys [`id`] numbers: [`KNOWN`]'s, then [`DROPPED`]'s.
pub const COUNT: usize = KNOWN.len() + DROPPED.len();

/// The key each [`id`] stands for.
pub const NAMES: [&str; COUNT] = {
    let mut out = [""; COUNT];
    let mut i = 0;
    while i < COUNT {
        out[i] = if i < KNOWN.len() {
            KNOWN[i]
        } else {
            DROPPED[i - KNOWN.len()].0
        };
        i += 1;
    }
    out
};

/// Where a name of 4 bytes or more lands in [`PLACES`].
const fn place(b: &[u8]) -> usize {
    (b.len() + 3 * b[3] as usize + 16 * b[b.len() / 2] as usize) % 128
}

const NO_ID: u8 = u8::MAX;

/// Each name's id at the place its bytes lead to: one comparison of
/// strings finds a key, where a search of the list cost dozens for every
/// key of every program. Built when compiling: a name that lands where
/// another did (or that is shorter than 4 bytes) fails the build, and
/// `place` needs other multipliers.
const PLACES: [u8; 128] = {
    let mut t = [NO_ID; 128];
    let mut i = 0;
    while i < COUNT {
        let p = place(NAMES[i].as_bytes());
        assert!(t[p] == NO_ID, "two key names at one place");
        t[p] = i as u8;
        i += 1;
    }
    t
};

/// The number of a key this importer knows (as written, lowercase): its
/// place in [`NAMES`].
#[inline]
pub fn id(k: &str) -> Option<usize> {
    let b = k.as_bytes();
    if b.len() < 4 {
        return None;
    }
    let i = usize::from(PLACES[place(b)]);
    (NAMES.get(i) == Some(&k)).then_some(i)
}

impl Program<'_> {
    pub(super) fn report_keys(&mut self) {
        let sec = self.sec;
        for (i, (k, v)) in sec.keys.iter().enumerate() {
            for (_, file, line) in sec.replaced.iter().filter(|(at, ..)| *at == i) {
                self.notes.push(Note {
                    file: file.to_path_buf(),
                    line: Some(*line),
                    key: k.to_string(),
                    why: format!(
                        "written again at {}:{}: the later value wins, as in supervisord",
                        crate::msg::path(&v.file),
                        v.line
                    ),
                });
            }
            let id = id(k);
            if id.is_some_and(|i| i < KNOWN.len()) {
                continue;
            }
            match id.and_then(|i| DROPPED.get(i - KNOWN.len())) {
                Some((_, why)) => {
                    let off = matches!(
                        k.as_ref(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_name_has_its_own_id() {
        for (i, n) in NAMES.iter().enumerate() {
            assert_eq!(id(n), Some(i), "{n}");
        }
        for other in [
            "",
            "x",
            "cmd",
            "Command",
            "commands",
            "stdout_logfile_maxbyte",
        ] {
            assert_eq!(id(other), None, "{other}");
        }
    }
}
