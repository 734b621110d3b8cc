#!/bin/bash
# `svctl events --json`: how long after s6-supervise saw a crash the event
# line is out, against s6's own subscriber (`s6-svwait -d`, which listens
# on the same fifodir through s6-ftrigrd) on the same crashes; and what the
# stream costs while nothing happens. Prints a Markdown section on stdout,
# progress on stderr.
#
# How: one sandbox with one slot (`sleep`, always up; no backoff and no death
# limit, so each SIGKILL is restarted at once). `svctl events --json
# crash` runs in the background. Quiet first: its utime+stime (clock ticks)
# and voluntary context switches over QUIET seconds with nothing
# happening. Then RUNS times: an `s6-svwait -d` starts (and is waited for
# until its FIFO is in event/), the slot's process gets SIGKILL, and both
# delays are taken from the `s6_time` of the `down` event, the stamp
# s6-supervise wrote when it reaped the process: to the `time` svctl put on
# the line, and to the clock read right after s6-svwait returned.
#
# This file is also its own in-sandbox half (`--inside RUNS QUIET`).
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

RUNS=${EVENTS_BENCH_RUNS:-10}
QUIET=${EVENTS_BENCH_QUIET:-60}

# ---------------------------------------------------------------- inside --

svstat_is() { [ "$(s6-svstat -o "$2" "$1" 2>/dev/null)" = "$3" ]; }
sleeping() { grep -q '^State:[[:space:]]*S' "/proc/$1/status"; }
fifos_are() { [ "$(find "$1" -name 'ftrig1:*' | wc -l)" -eq "$2" ]; }
downs() { grep -c '"event":"down"' /run/ev.json || true; }
more_downs() { [ "$(downs)" -gt "$1" ]; }
# cpu PID: utime + stime, clock ticks.
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
switches() { awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status"; }
# us TIME: microseconds since the epoch of an RFC 3339 UTC time.
us() { date -u -d "$1" +%s%6N; }
json_str() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }

inside() {
  local runs=$1 quiet=$2 slot=/run/service/crash
  wait_for "crash up" 1000 svstat_is "$slot" up true
  svctl events --json crash >/run/ev.json 2>/run/ev.err &
  local ev=$!
  wait_for "svctl events subscribed" 500 fifos_are "$slot/event" 1
  wait_for "svctl events asleep" 500 sleeping "$ev"
  local c0 w0
  c0=$(cpu "$ev")
  w0=$(switches "$ev")
  sleep "$quiet"
  echo "quiet_s=$quiet cpu_ticks=$(($(cpu "$ev") - c0)) wakeups=$(($(switches "$ev") - w0))"
  local n pid line t s sw
  for _ in $(seq 1 "$runs"); do
    wait_for "crash up" 1000 svstat_is "$slot" up true
    pid=$(s6-svstat -o pid "$slot")
    rm -f /run/svwait.us
    (s6-svwait -d "$slot" && now_us >/run/svwait.us) &
    sw=$!
    wait_for "s6-svwait subscribed" 500 fifos_are "$slot/event" 2
    n=$(downs)
    kill -KILL "$pid"
    wait_for "the down event" 500 more_downs "$n"
    wait "$sw"
    line=$(grep '"event":"down"' /run/ev.json | tail -n 1)
    t=$(us "$(printf '%s' "$line" | json_str time)")
    s=$(us "$(printf '%s' "$line" | json_str s6_time)")
    echo "events_us=$((t - s)) svwait_us=$(($(cat /run/svwait.us) - s))"
  done
  kill -TERM "$ev"
  wait "$ev"
  fifos_are "$slot/event" 0 || { echo "events.sh: FIFOs left in $slot/event" >&2; exit 111; }
}

if [ "${1:-}" = --inside ]; then
  inside "$2" "$3"
  exit 0
fi

# ------------------------------------------------------------------ host --

# shellcheck disable=SC2016 # the backticks are Markdown, not a command
host_ready 'events: `svctl events` reporting a crash' svkit-sandbox svctl svkit-reconcile -- unshare nsenter

layer=$(mktemp -d)
eval "lib_$(declare -f bench_cleanup)"
bench_cleanup() { lib_bench_cleanup; rm -rf "$layer"; }
mkdir -p "$layer/etc/svkit" "$layer/etc/cont-init.d"
cat >"$layer/etc/svkit/10-bench.json" <<'JSON'
{ "slots": [ { "name": "crash", "command": ["sleep", "100000"],
  "restart": { "backoff": { "max_s": 0 }, "max_deaths": 0 } } ] }
JSON
printf '#!/bin/sh\nexec svkit-reconcile >/dev/null\n' >"$layer/etc/cont-init.d/50-svkit"
chmod +x "$layer/etc/cont-init.d/50-svkit"

echo "events.sh: booting the sandbox, ${QUIET} s quiet, $RUNS crashes" >&2
in_sandbox "$layer" -- "$RUNS" "$QUIET"

ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
ev_med=$(field events_us | median)
ev_max=$(field events_us | maximum)
sw_med=$(field svwait_us | median)
sw_max=$(field svwait_us | maximum)
runs=$(field events_us | wc -l)
ticks=$(field cpu_ticks)
wakeups=$(field wakeups)
quiet=$(field quiet_s)
late_ok=$(awk -v a="$ev_max" 'BEGIN { print (a <= 100000) ? "met" : "**missed**" }')
idle_ok=$([ "$ticks" -eq 0 ] && [ "$wakeups" -eq 0 ] && echo met || echo '**missed**')

cat <<MD
## events: \`svctl events\` reporting a crash

In the sandbox, one slot (\`sleep\`, always up) followed by \`svctl events
--json\`. Delay: from the stamp s6-supervise writes when it reaps the
killed process (the event's \`s6_time\`) to the \`time\` svctl puts on its
\`down\` line, status read and judged; beside it, on the same crashes,
s6's own subscriber \`s6-svwait -d\` (through s6-ftrigrd) to the clock read
right after it returned. $runs crashes (SIGKILL), median and worst.
Idle: the events process's CPU (utime + stime) and voluntary context
switches (wakeups) over ${quiet} s with nothing happening.

| measure | median | worst | target |
|---|---:|---:|---|
| \`svctl events --json\`: s6 saw the crash → line out | $(ms "$ev_med") ms | $(ms "$ev_max") ms | ≤ 100 ms: $late_ok |
| \`s6-svwait -d\`: s6 saw the crash → returned (baseline) | $(ms "$sw_med") ms | $(ms "$sw_max") ms | |
| idle ${quiet} s: CPU ticks / wakeups of \`svctl events\` | $ticks / $wakeups | | 0 / 0: $idle_ok |
MD
