#!/bin/bash
# What an idle job costs: the proportional memory (Pss of
# /proc/PID/smaps_rollup) of a job's one waiting process (`svkit job
# wait`, asleep on its timer until the tick), alone and among 100 jobs,
# against as many `sleep` processes (a longrun slot of `sleep 100000`)
# waiting the same way under the same supervision. Prints a Markdown
# section on stdout, progress on stderr.
#
# This file is also its own in-sandbox half (`--inside`): it writes the
# configs and applies them with svkit-reconcile, as an operator would.
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# ---------------------------------------------------------------- inside --

pss_kb() { awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup"; }
private_kb() { awk '/^Private_(Clean|Dirty):/ { k += $2 } END { print k + 0 }' "/proc/$1/smaps_rollup"; }
scheduled() { [ -e "/run/service/$1/.svkit-job" ]; }
up() { [ "$(s6-svstat -o up "/run/service/$1")" = true ]; }

# config N: N jobs (every hour: none runs meanwhile) and N sleep slots.
config() {
  local i sep=''
  {
    echo '{ "slots": ['
    for i in $(seq 1 "$1"); do
      printf '%s{ "name": "job-%s", "type": "oneshot", "command": ["true"], "schedule": { "every_s": 3600 } },\n' "$sep" "$i"
      printf '  { "name": "sleep-%s", "command": ["sleep", "100000"] }' "$i"
      sep=','
    done
    echo '] }'
  } >/etc/svkit/10-bench.json
  svkit-reconcile >/dev/null
}

# measure N: the summed Pss and private memory of the N waits and the N sleeps.
measure() {
  local i pid jp=0 jv=0 sp=0 sv=0
  for i in $(seq 1 "$1"); do
    wait_for "job-$i scheduled" 1000 scheduled "job-$i"
    wait_for "sleep-$i up" 1000 up "sleep-$i"
  done
  for i in $(seq 1 "$1"); do
    pid=$(s6-svstat -o pid "/run/service/job-$i")
    jp=$((jp + $(pss_kb "$pid"))) jv=$((jv + $(private_kb "$pid")))
    pid=$(s6-svstat -o pid "/run/service/sleep-$i")
    sp=$((sp + $(pss_kb "$pid"))) sv=$((sv + $(private_kb "$pid")))
  done
  echo "n=$1 job_pss_kb=$jp job_private_kb=$jv sleep_pss_kb=$sp sleep_private_kb=$sv"
}

inside() {
  mkdir -p /etc/svkit
  config 1
  measure 1
  config 100
  measure 100
}

if [ "${1:-}" = --inside ]; then
  inside
  exit 0
fi

# ------------------------------------------------------------------ host --

# shellcheck disable=SC2016 # the backticks are Markdown, not a command
host_ready 'jobs: what an idle job costs' svkit-sandbox svkit svkit-reconcile -- unshare nsenter s6-svscan execlineb

echo "jobs.sh: booting the sandbox" >&2
in_sandbox -- x

per() { awk -v n="$1" -v k="$2" '{ hit = 0; for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "n" && kv[2] == n) hit = 1; if (hit && kv[1] == k) print kv[2] } }' "$tmp/out"; }
each() { awk -v a="$1" -v n="$2" 'BEGIN { printf "%.0f", a / n }'; }

cat <<MD
## jobs: what an idle job costs

In the sandbox, N jobs on a schedule (\`every_s: 3600\`: none runs while
measured) beside N longrun slots of \`sleep 100000\`, both under s6 as any
slot. An idle job is one process, \`svkit job wait\`, asleep on a timer
until its tick; the floor is a \`sleep\` waiting the same way. Pss is the
process's share of the pages it maps (the svkit binary's code is shared by
every svkit process, so it counts less the more of them run); private is
Private_Clean + Private_Dirty (what the process alone costs). A single
wait counts as its own the pages of the binary that no other svkit process
of the container touches (its schedule's code, the timezone's); among 100
they are shared, and what is left is each one's heap and stack.

| N | N waits: Pss (each) | N waits: private (each) | N sleeps: Pss (each) | N sleeps: private (each) |
|---:|---:|---:|---:|---:|
| 1 | $(per 1 job_pss_kb) KiB | $(per 1 job_private_kb) KiB | $(per 1 sleep_pss_kb) KiB | $(per 1 sleep_private_kb) KiB |
| 100 | $(per 100 job_pss_kb) KiB ($(each "$(per 100 job_pss_kb)" 100)) | $(per 100 job_private_kb) KiB ($(each "$(per 100 job_private_kb)" 100)) | $(per 100 sleep_pss_kb) KiB ($(each "$(per 100 sleep_pss_kb)" 100)) | $(per 100 sleep_private_kb) KiB ($(each "$(per 100 sleep_private_kb)" 100)) |
MD
