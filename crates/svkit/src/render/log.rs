//! `log/run`: an s6-log logger, after a safe creation of the log dir.

use std::fmt::Write as _;

use super::quote::{sh_quote, sh_words};
use super::{script, RenderEnv};
use crate::config::{Log, LogFormat, Slot};
use crate::logs::json::MAX_LINE_BYTES;

/// The dir-creation part. Run as root it must never let the slot's user
/// (who may own some parent dirs) redirect a root action elsewhere: each
/// component is checked for a symlink, root only creates entries inside
/// root-owned directories, deeper ones are created as the user (who can
/// then only hurt itself), and only dirs we create are chowned, one by one.
const MKDIR_AS_ROOT: &str = r#"path=
rest=${dir#/}
while [ -n "$rest" ]; do
  comp=${rest%%/*}
  case $rest in
    */*) rest=${rest#*/} ;;
    *) rest= ;;
  esac
  parent=${path:-/}
  path=$path/$comp
  if [ -L "$path" ]; then
    echo "svkit: slot $slot: refusing log dir $dir: $path is a symlink" >&2
    exit 111
  fi
  if [ ! -d "$path" ]; then
    if [ -O "$parent" ]; then
      if ! mkdir -m 0750 -- "$path" || ! chown -h -- "$user" "$path"; then
        exit 111
      fi
    elif ! "$setuidgid" "$user" mkdir -m 0750 -- "$path"; then
      exit 111
    fi
  fi
done
# A root-owned log dir would make s6-log, running as the user, fail and
# respawn every second: hand over the dir itself, never its contents.
if [ -O "$dir" ]; then
  chown -h -- "$user" "$dir" || exit 111
fi
"#;

/// Without a privilege drop there is no one to protect against: still
/// refuse symlinks (the dir must be where the config says).
const MKDIR_PLAIN: &str = r#"path=
rest=${dir#/}
while [ -n "$rest" ]; do
  comp=${rest%%/*}
  case $rest in
    */*) rest=${rest#*/} ;;
    *) rest= ;;
  esac
  path=$path/$comp
  if [ -L "$path" ]; then
    echo "svkit: slot $slot: refusing log dir $dir: $path is a symlink" >&2
    exit 111
  fi
  if [ ! -d "$path" ]; then
    mkdir -m 0750 -- "$path" || exit 111
  fi
done
"#;

/// s6-log locks its dir: a second container on the same volume makes it
/// exit 111 and respawn every second while the producer's pipe fills. Probe
/// the lock with s6's own locking (fcntl, as s6-log), report it once, and
/// keep the lines flowing to docker logs instead of looping silently.
fn lock_probe(o: &mut String, s6_log: &[String], stdout: &[String], env: &RenderEnv) {
    let mut stdout_only = s6_log.to_vec();
    stdout_only.extend(stdout.iter().cloned());
    o.push_str("# Another s6-log holding the dir (a second container on the same\n");
    o.push_str("# volume) would crash-loop this one: say so, log to stdout only.\n");
    let _ = writeln!(
        o,
        "if [ -e \"$dir/lock\" ] && ! {} -n \"$dir/lock\" true 2>/dev/null; then",
        sh_quote(&env.tool("s6-setlock"))
    );
    o.push_str("  echo \"svkit: slot $slot: unable to lock $dir: another s6-log holds it (a second container on the same volume?); logging to stdout only\" >&2\n");
    let _ = writeln!(o, "  exec {}", sh_words(&stdout_only));
    o.push_str("fi\n");
}

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

pub(super) fn log_run(slot: &Slot, log: &Log, env: &RenderEnv) -> String {
    let user = match (env.as_root, slot.run_as()) {
        (true, Some(u)) => Some(u),
        _ => None,
    };
    let mut o = script();
    let _ = writeln!(
        o,
        "# svkit logger of slot {}. Generated: edit the config, not this file.",
        slot.name
    );
    let _ = writeln!(o, "slot={}", sh_quote(&slot.name));
    let _ = writeln!(o, "dir={}", sh_quote(&log.dir));
    o.push_str("# Create the log dir and its missing parents one component at a time;\n");
    o.push_str("# a symlink anywhere in the path is refused.\n");
    match user {
        Some(u) => {
            let _ = writeln!(o, "user={}", sh_quote(u));
            let _ = writeln!(o, "setuidgid={}", sh_quote(&env.tool("s6-setuidgid")));
            o.push_str(MKDIR_AS_ROOT);
        }
        None => o.push_str(MKDIR_PLAIN),
    }
    // s6-log script: `1` copies the line to stdout (docker logs); `n`
    // and `s` set archive count and size for the dir after them; `T`
    // prefixes an ISO 8601 timestamp to the next action only: the dir.
    let mut words = Vec::new();
    if let Some(u) = user {
        words.push(env.tool("s6-setuidgid"));
        words.push(u.to_string());
    }
    if log.stdout && log.format == LogFormat::Json {
        // The filter runs as the user too: it only reads a pipe.
        words.extend(["svkit", "log-json", "--slot", &slot.name, "--"].map(String::from));
    }
    words.push(env.tool("s6-log"));
    words.push("-b".into());
    // Lines are cut only beyond this (s6-log's default is 8 KiB).
    words.push("-l".into());
    words.push(MAX_LINE_BYTES.to_string());
    words.push("--".into());
    let stdout = stdout_action(log);
    lock_probe(&mut o, &words, &stdout, env);
    if log.stdout {
        o.push_str(match (&log.prefix, log.format) {
            (_, LogFormat::Json) => "# 1: lines to stdout (docker logs), as JSON by svkit log-json; T: ISO 8601\n# timestamps in the files.\n",
            (Some(_), _) => "# p 1 p: prefixed lines to stdout (docker logs); T: ISO 8601 timestamps in\n# the files, raw lines.\n",
            (None, _) => "# 1: raw lines to stdout (docker logs); T: ISO 8601 timestamps in the files.\n",
        });
        words.extend(stdout);
    } else {
        o.push_str("# T: ISO 8601 timestamps in the files.\n");
    }
    words.push(format!("n{}", log.keep));
    words.push(format!("s{}", log.max_bytes));
    words.push("T".into());
    words.push(log.dir.clone());
    let _ = writeln!(o, "exec {}", sh_words(&words));
    o
}
