//! `log/run`: an s6-log logger, after ending one a killed supervisor left
//! and a safe creation of the log dir.

use std::fmt::Write as _;

use super::quote::{sh_quote, sh_words};
use super::{script, RenderEnv};
use crate::config::{Log, LogFormat, Slot};
use crate::slot::end::LOG_ERROR_NAME;

/// The longest line a slot's logger passes whole (s6-log's `-l`); a
/// longer one is cut into pieces of this size, each its own line, so that
/// neither s6-log nor the stdout copy (`crate::logs::stdout`) ever holds more.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Why s6-log cannot run as configured: one line in `.svkit-log-error`
/// (in `log/`, the script's cwd) for `svctl status`, and on stderr only
/// when it is new or says something else: s6 respawns a failing logger
/// every second, and the container's log must not fill with the same line.
/// Written through a temp file and a rename: a reader never sees half.
const RECORD: &str = r#"record() {
  prev=
  if [ -f "$errfile" ]; then read -r prev < "$errfile"; fi
  if [ "$prev" != "$1" ]; then
    printf 'svkit: slot %s: %s\n' "$slot" "$1" >&2
    printf '%s\n' "$1" > "$errfile.new" && mv -f -- "$errfile.new" "$errfile"
  fi
}
# $1: what failed; $2: the tool's message, of which only its last part
# (strerror's words) is kept.
fail() {
  record "log dir $dir: $1: ${2##*: }"
  exit 111
}
"#;

/// A logger whose supervisor was killed (`kill -9`, the OOM killer) runs
/// on beside the one the new supervisor starts: it holds the dir's lock
/// (the new one would log to stdout only) and reads the same pipe (the
/// lines would split between them). `svkit log-claim` ends it, as a
/// slot's `run` ends its program's stray copy, and records this logger:
/// the one process the rule adds to every logger start.
const CLAIM: &str = "# A logger left running by a killed supervisor holds the dir's lock and reads\n# this pipe: end it first (TERM: it writes out what it read), record this one.\nsvkit log-claim $$\n";

/// s6-log makes its stdout non-blocking. Inherited, that is the open file
/// of the container's output, shared with PID 1, the CMD and every slot
/// without a logger: their writes would then fail (EAGAIN) whenever the
/// engine's reader falls behind, and lines would be lost. An open of its
/// own of the same pipe (or terminal) leaves theirs blocking. Root can
/// reopen it; another user (a non-root container) cannot, and keeps the
/// shared one.
const OWN_STDOUT: &str = "# Its own open of the container's output: s6-log's O_NONBLOCK stays on it.\nif { [ -p /proc/self/fd/1 ] || [ -c /proc/self/fd/1 ]; } && [ -w /proc/self/fd/1 ]; then\n  exec 1>>/proc/self/fd/1\nfi\n";

/// The start of the walk over the log dir's path, one component at a
/// time. Parents are made 0755, so that every slot's user reaches its own
/// log dir below a shared one (`/data/logs`); the log dir itself 0750.
const WALK: &str = r#"path=
rest=${dir#/}
while [ -n "$rest" ]; do
  comp=${rest%%/*}
  case $rest in
    */*) rest=${rest#*/} ;;
    *) rest= ;;
  esac
  path=$path/$comp
  if [ -L "$path" ]; then
    record "log dir $dir: refused: $path is a symlink"
    exit 111
  fi
  [ -d "$path" ] && continue
  if [ -n "$rest" ]; then
    mode=0755 what="cannot create $path"
  else
    mode=0750 what="cannot create it"
  fi
"#;

/// The dir-creation part when run as root for a slot's user. The user
/// must never be able to redirect a root action elsewhere: each component
/// is checked for a symlink, and root only creates entries inside
/// root-owned directories (those it makes stay root's: one slot's user
/// must not own a parent other users' log dirs live in); deeper ones are
/// created as the user, who can then only hurt itself. The log dir itself
/// is the user's, with the files s6-log keeps directly in it (another
/// user's after the slot's user changed): named ones, never recursive,
/// never through a symlink or a hard link. A dir made by another logger
/// in between (slots start at once) is fine.
const MKDIR_AS_ROOT: &str = r#"  parent=${path%/*}
  if [ -O "${parent:-/}" ]; then
    why=$(mkdir -m "$mode" -- "$path" 2>&1) || [ -d "$path" ] || fail "$what" "$why"
  else
    why=$("$setuidgid" "$user" mkdir -m "$mode" -- "$path" 2>&1) || [ -d "$path" ] || fail "$what" "$why"
  fi
done
# s6-log runs as the user: it must own the dir and the files it keeps in
# it, or it fails and respawns every second while the slot's pipe fills.
# They are another's when root just made the dir, or when the slot's user
# changed (a new image version on the same volume). Then: the dir to root
# first, so that its old owner cannot swap an entry while root works in
# it; then the regular files s6-log keeps directly in it (never a symlink,
# a hard link to a file elsewhere, a subdir or anything else); then the dir.
log_owner=${user%%:*}
s6log_files='( -name lock -o -name current -o -name state -o -name newstate -o -name previous -o -name processed -o -name @*.[su] )'
set -f
# shellcheck disable=SC2086 # $s6log_files: find's own words, globbing off
not_owned=$(find "$dir" -maxdepth 0 ! -user "$log_owner" -print 2>&1; find "$dir" -mindepth 1 -maxdepth 1 -type f $s6log_files ! -user "$log_owner" -print 2>&1)
if [ -n "$not_owned" ]; then
  hand_fix="cannot hand it and its s6-log files to $user (chown -h them to $user)"
  why=$(chown -h -- 0:0 "$dir" 2>&1) || fail "$hand_fix" "$why"
  # shellcheck disable=SC2086
  why=$(find "$dir" -mindepth 1 -maxdepth 1 -type f -links 1 $s6log_files -exec chown -h -- "$user" {} + 2>&1) || fail "$hand_fix" "$why"
  why=$(chown -h -- "$user" "$dir" 2>&1) || fail "$hand_fix" "$why"
fi
set +f
"#;

/// Without a privilege drop there is no one to protect against: still
/// refuse symlinks (the dir must be where the config says).
const MKDIR_PLAIN: &str = r#"  why=$(mkdir -m "$mode" -- "$path" 2>&1) || [ -d "$path" ] || fail "$what" "$why"
done
"#;

/// s6-log locks its dir: a second container on the same volume makes it
/// exit 111 and respawn every second while the producer's pipe fills. Wait
/// (bounded) for the lock with s6's own locking (fcntl, as s6-log): the
/// holder may be this slot's previous logger, going away (an unregister
/// then a register of the same instance, a restart). Past the wait, record
/// it and keep the lines flowing to docker logs instead of looping.
fn lock_probe(o: &mut String, stdout_only: &[String], env: &RenderEnv) {
    let _ = writeln!(
        o,
        "# Another s6-log holding the dir: this slot's previous logger on its way
# out (waited for), or a second container on the same volume (then stdout only).
if [ -e \"$dir/lock\" ] && ! {} -t {LOCK_WAIT_MS} \"$dir/lock\" true 2>/dev/null; then
  record \"unable to lock $dir: another s6-log holds it; logging to stdout only\"
  exec {}
fi",
        sh_quote(&env.tool("s6-setlock")),
        sh_words(stdout_only)
    );
}

/// How long a starting logger waits for its dir's lock. An old logger goes
/// once every writer of its pipe is gone: well under a second, unless a
/// stray child of the old program holds the pipe.
pub const LOCK_WAIT_MS: u32 = 3000;

/// The s6-log directives of the stdout copy. s6-log's `p` puts its prefix
/// and one space before each line of the actions after it (until a bare
/// `p`), so a template's own trailing space is that space.
fn stdout_action(log: &Log) -> Vec<String> {
    match &log.prefix {
        Some(p) => vec![
            format!("p{}", p.strip_suffix(' ').unwrap_or(p)),
            "1".into(),
            "p".into(),
        ],
        None => vec!["1".into()],
    }
}

/// The log dir a rendered `log/run` writes to (its `dir=` line): where the
/// slot's logger writes, whatever the config says now.
pub fn rendered_dir(log_run: &str) -> Option<String> {
    let at = log_run.find("\ndir=")?;
    super::quote::sh_unquote(&log_run[at + "\ndir=".len()..])
}

pub(super) fn log_run(slot: &Slot, log: &Log, env: &RenderEnv) -> String {
    let user = env.drop_to(slot);
    let mut o = script();
    let _ = write!(
        o,
        "# svkit logger of slot {}. Generated: edit the config, not this file.\n{CLAIM}{OWN_STDOUT}slot={}\ndir={}\n",
        slot.name,
        sh_quote(&slot.name),
        sh_quote(&log.dir)
    );
    if let Some(u) = user {
        let setuidgid = env.tool("s6-setuidgid");
        let _ = writeln!(
            o,
            "user={}\nsetuidgid={}",
            sh_quote(u),
            sh_quote(&setuidgid)
        );
    }
    let mkdir = if user.is_some() {
        MKDIR_AS_ROOT
    } else {
        MKDIR_PLAIN
    };
    let _ = write!(
        o,
        "# Why s6-log cannot run as configured, one line (svctl status reads it);
# said on stderr once per episode, not at every respawn.
errfile={LOG_ERROR_NAME}
{RECORD}# Create the log dir and its missing parents one component at a time
# (parents 0755, the dir 0750); a symlink anywhere in the path is refused.
{WALK}{mkdir}"
    );
    // s6-log script: `1` copies the line to stdout (docker logs), through
    // svkit log-stdout, which writes it whole; `n` and `s` set archive
    // count and size for the dir after them; `T` prefixes an ISO 8601
    // timestamp to the next action only: the dir.
    let drop = super::run::drop_words(slot, env);
    // The filter runs as the user too: it only reads a pipe.
    let mut copy = ["svkit", "log-stdout", "--slot", &slot.name]
        .map(String::from)
        .to_vec();
    if log.format == LogFormat::Json {
        copy.push("--json".into());
    }
    copy.push("--".into());
    // Lines are cut only beyond this (s6-log's default is 8 KiB).
    let s6_log = [
        env.tool("s6-log"),
        "-b".into(),
        "-l".into(),
        MAX_LINE_BYTES.to_string(),
        "--".into(),
    ];
    let stdout = stdout_action(log);
    let stdout_only = [&drop[..], &copy, &s6_log, &stdout].concat();
    lock_probe(&mut o, &stdout_only, env);
    o.push_str("# Running as configured: nothing to record any more.\nif [ -e \"$errfile\" ]; then rm -f -- \"$errfile\"; fi\n");
    let mut words = drop;
    if log.stdout {
        o.push_str(match (&log.prefix, log.format) {
            (_, LogFormat::Json) => "# 1: lines to stdout (docker logs), as JSON by svkit log-stdout; T: ISO 8601\n# timestamps in the files.\n",
            (Some(_), _) => "# p 1 p: prefixed lines to stdout (docker logs), whole by svkit log-stdout;\n# T: ISO 8601 timestamps in the files, raw lines.\n",
            (None, _) => "# 1: raw lines to stdout (docker logs), whole by svkit log-stdout; T: ISO\n# 8601 timestamps in the files.\n",
        });
        words.extend(copy);
        words.extend(s6_log);
        words.extend(stdout);
    } else {
        o.push_str("# T: ISO 8601 timestamps in the files.\n");
        words.extend(s6_log);
    }
    let (keep, size, dir) = (log.keep, log.max_bytes, sh_quote(&log.dir));
    let _ = writeln!(o, "exec {} n{keep} s{size} T {dir}", sh_words(&words));
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn rendered_dir_reads_the_dir_back() {
        let quoted = include_str!("../../../../tests/golden/log/expected/as-root/log/run");
        assert_eq!(
            super::rendered_dir(quoted).as_deref(),
            Some("/var/log/as root")
        );
        let bare = include_str!("../../../../tests/golden/plain-host/expected/svc/log/run");
        assert_eq!(super::rendered_dir(bare).as_deref(), Some("/tmp/svc-logs"));
        assert_eq!(super::rendered_dir("#!/bin/sh\nexec s6-log\n"), None);
    }
}
