#!/bin/bash
# What `log.prefix` and `log.format: "json"` cost per slot, in the sandbox:
# the private memory (Private_Clean + Private_Dirty of
# /proc/PID/smaps_rollup: what a process alone costs) of each slot's
# logger processes, after every slot wrote the same burst (20 000 short
# lines, then one of 100 000 bytes). Every stdout copy goes through one
# `svkit log-stdout` filter between s6-log and the container's stdout
# (whole lines; JSON with `log.format: "json"`); a prefix is s6-log's own
# `p` directive. Four filters run, so each measured shares the svkit
# binary's pages with the others, as in any container where more than one
# svkit process runs. A `sleep infinity` is the floor. Prints a Markdown section on stdout, progress
# on stderr.
#
# This file is also its own in-sandbox half (`--inside`): it writes the
# config and applies it with svkit-reconcile, as an operator would.
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# ---------------------------------------------------------------- inside --

sleeping() { grep -q '^State:[[:space:]]*S' "/proc/$1/status"; }
private_kb() { awk '/^Private_(Clean|Dirty):/ { k += $2 } END { print k + 0 }' "/proc/$1/smaps_rollup"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
has_done() { grep -q bench-done "/var/log/bench/$1/current" 2>/dev/null; }
# child_of PID: the pids whose parent is PID.
child_of() {
  local d s
  for d in /proc/[0-9]*; do
    s=$(cat "$d/stat" 2>/dev/null) || continue
    s=${s##*) }
    # After the command name: state, then the parent's pid.
    s=${s#* }
    [ "${s%% *}" = "$1" ] && echo "${d#/proc/}"
  done
  return 0
}

inside() {
  local burst slot pid f
  # shellcheck disable=SC2016 # expanded by the slot's sh, not here
  burst='i=0; while [ $i -lt 20000 ]; do echo \"line $i of the bench burst\"; i=$((i+1)); done; head -c 100000 /dev/zero | tr \"\\\\0\" x; echo; echo bench-done; exec sleep 100000'
  mkdir -p /etc/svkit
  cat >/etc/svkit/10-bench.json <<JSON
{ "slots": [
  { "name": "plain", "command": ["sh", "-c", "$burst"], "log": { "dir": "/var/log/bench/plain" } },
  { "name": "prefixed", "command": ["sh", "-c", "$burst"], "log": { "dir": "/var/log/bench/prefixed", "prefix": "[{slot}] " } },
  { "name": "json", "command": ["sh", "-c", "$burst"], "log": { "dir": "/var/log/bench/json", "format": "json" } },
  { "name": "json2", "command": ["sh", "-c", "$burst"], "log": { "dir": "/var/log/bench/json2", "format": "json" } }
] }
JSON
  mkdir -p /var/log/bench
  svkit-reconcile >/dev/null
  for slot in plain prefixed json json2; do
    wait_for "$slot's burst logged" 3000 has_done "$slot"
    pid=$(s6-svstat -o pid "/run/service/$slot/log")
    wait_for "$slot's s6-log idle" 500 sleeping "$pid"
    f=$(child_of "$pid")
    [ -n "$f" ] || { echo "logs.sh: no filter under s6-log $pid" >&2; exit 111; }
    wait_for "the filter idle" 500 sleeping "$f"
    echo "slot=$slot s6log_private_kb=$(private_kb "$pid") s6log_rss_kb=$(rss_kb "$pid")" \
      "filter_private_kb=$(private_kb "$f") filter_rss_kb=$(rss_kb "$f")" \
      "filter_anon_kb=$(awk '/^Anonymous:/ { print $2 }' "/proc/$f/smaps_rollup")" \
      "filter_pss_kb=$(awk '/^Pss:/ { print $2 }' "/proc/$f/smaps_rollup")"
  done
  sleep infinity &
  pid=$!
  wait_for "sleep to block" 500 sleeping "$pid"
  echo "sleep_private_kb=$(private_kb "$pid")"
  kill "$pid"
}

if [ "${1:-}" = --inside ]; then
  inside
  exit 0
fi

# ------------------------------------------------------------------ host --

# shellcheck disable=SC2016 # the backticks are Markdown, not a command
host_ready 'logs: what a prefix and JSON cost per slot' svkit-sandbox svkit svkit-reconcile -- unshare nsenter s6-svscan execlineb

echo "logs.sh: booting the sandbox" >&2
in_sandbox -- x

per() { awk -v s="$1" -v k="$2" '{ hit = 0; for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "slot" && kv[2] == s) hit = 1; if (hit && kv[1] == k) print kv[2] } }' "$tmp/out"; }

cat <<MD
## logs: what a prefix and JSON cost per slot

In the sandbox, four slots each write the same burst (20 000 short lines,
then one line of 100 000 bytes: over s6-log's default 8 KiB, passed whole)
to their logger, which copies it to the container's stdout and to a rotated
dir; measured once every logger is idle again. Private memory is
Private_Clean + Private_Dirty of /proc/PID/smaps_rollup (what the process
alone costs; VmRSS also counts shared pages). Every stdout copy goes
through one \`svkit log-stdout\` process per slot, which writes whole
lines into the container's output (JSON with \`log.format: "json"\`);
\`log.prefix\` is s6-log's own \`p\` directive. Four filters run, so the
one measured shares the svkit binary's pages with the others, as it does
with any other svkit process in a container (alone, it would also count
the binary's pages it touched, about 1.4 MiB, as its own). Its anonymous
memory is its heap and stack: a 64 KiB read buffer, 4 KiB of lines to
write, and the line being read (given back after a long one).

| logger process (per slot) | private memory | VmRSS |
|---|---:|---:|
| s6-log, plain (\`1\`) | $(per plain s6log_private_kb) KiB | $(per plain s6log_rss_kb) KiB |
| s6-log with \`prefix\` (\`p[prefixed] 1 p\`) | $(per prefixed s6log_private_kb) KiB | $(per prefixed s6log_rss_kb) KiB |
| s6-log of a \`json\` slot | $(per json2 s6log_private_kb) KiB | $(per json2 s6log_rss_kb) KiB |
| \`svkit log-stdout\` filter of the plain slot | $(per plain filter_private_kb) KiB | $(per plain filter_rss_kb) KiB |
| \`svkit log-stdout\` filter of the prefixed slot | $(per prefixed filter_private_kb) KiB | $(per prefixed filter_rss_kb) KiB |
| \`svkit log-stdout --json\` filter of the json slot | $(per json2 filter_private_kb) KiB | $(per json2 filter_rss_kb) KiB |
| that filter's anonymous memory / Pss | $(per json2 filter_anon_kb) KiB / $(per json2 filter_pss_kb) KiB | |
| \`sleep infinity\` (floor of any process) | $(field sleep_private_kb) KiB | |
MD
