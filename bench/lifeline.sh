#!/bin/sh
# Who holds a port, with ~2,000 processes alive: svkit-lifeline --which-port
# (one walk of /proc/PID/fd, native) against lsof -ti tcp:PORT (the baseline
# the reference deployment used). Prints a Markdown section on stdout.
set -eu
cd "$(dirname "$0")/.."

BIN=${SVKIT_LIFELINE:-target/$(rustc --print host-tuple)/release/svkit-lifeline}
N=${LIFELINE_BENCH_PROCS:-2000}
RUNS=${LIFELINE_BENCH_RUNS:-7}
PY=$(command -v python3)

if [ ! -x "$BIN" ]; then
  cargo build --release -p svkit-cli >&2 && dist/link-tools.sh "${BIN%/*}"
fi
# lsof is the baseline only, never a runtime dependency of svkit.
if ! command -v lsof >/dev/null 2>&1; then
  apt-get install -y lsof >&2 || { apt-get update >&2 && apt-get install -y lsof >&2; }
fi

tmp=$(mktemp -d)
cleanup() {
  if [ -s "$tmp/pids" ]; then
    # shellcheck disable=SC2046 # one pid per word is the point
    kill $(cat "$tmp/pids") 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

i=0
while [ "$i" -lt "$N" ]; do
  sleep 3600 &
  echo "$!" >>"$tmp/pids"
  i=$((i + 1))
done

# The listener writes its port once it listens: no sleep as synchronisation.
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(3600)
' "$tmp/port" &
listener=$!
echo "$listener" >>"$tmp/pids"
tries=0
while [ ! -s "$tmp/port" ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 1000 ] || { echo "lifeline.sh: listener never started" >&2; exit 111; }
  sleep 0.01
done
port=$(cat "$tmp/port")
procs=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)

# Both must name the listener, or the timing means nothing.
ours=$("$BIN" --which-port "$port" | cut -f1)
theirs=$(lsof -ti "tcp:$port")
if [ "$ours" != "$listener" ] || [ "$theirs" != "$listener" ]; then
  echo "lifeline.sh: disagreement: listener $listener, svkit-lifeline '$ours', lsof '$theirs'" >&2
  exit 111
fi

now_ns() { date +%s%N; }
# time_runs CMD... : prints one elapsed time in ms per run.
time_runs() {
  r=0
  while [ "$r" -lt "$RUNS" ]; do
    t0=$(now_ns)
    "$@" >/dev/null
    t1=$(now_ns)
    echo "$(((t1 - t0) / 1000))" | awk '{ printf "%.2f\n", $1 / 1000 }'
    r=$((r + 1))
  done
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
minimum() { sort -n | head -n 1; }

time_runs "$BIN" --which-port "$port" >"$tmp/ours"
time_runs lsof -ti "tcp:$port" >"$tmp/lsof"
lsof_med=$(median <"$tmp/lsof")
# The floor: the bare walk in C (bench/procwalk.c), what any tool must do.
floor_row="| bare /proc walk in C (\`bench/procwalk.c\`, the floor) | not measured: no C compiler | |"
floor_note=
if command -v cc >/dev/null 2>&1 &&
  cc -O2 -pthread -o "$tmp/procwalk" bench/procwalk.c 2>/dev/null; then
  time_runs "$tmp/procwalk" >"$tmp/floor"
  floor_med=$(median <"$tmp/floor")
  floor_row="| bare /proc walk in C (\`bench/procwalk.c\`, the floor) | $floor_med | $(minimum <"$tmp/floor") |"
  best=$(awk -v a="$lsof_med" -v b="$floor_med" 'BEGIN { printf "%.1f", a / b }')
  floor_note="Even the bare walk, with nothing parsed or checked, is only **${best}×** faster
than lsof here: that is the most any tool walking \`/proc\` could reach on this
machine, where each \`/proc\` call costs microseconds."
fi
ours_med=$(median <"$tmp/ours")
ours_min=$(minimum <"$tmp/ours")
lsof_min=$(minimum <"$tmp/lsof")
ratio=$(awk -v a="$lsof_med" -v b="$ours_med" 'BEGIN { printf "%.1f", a / b }')
lsof_ver=$(lsof -v 2>&1 | awk '/revision/ { print $2; exit }')
target_ok=$(awk -v r="$ratio" 'BEGIN { print (r >= 10) ? "met" : "**missed**" }')

cat <<MD
## lifeline: finding the owner of a port

$procs processes alive ($N idle \`sleep\`s and one listener on 127.0.0.1:$port);
wall time of one full query, process start included, median and best of $RUNS
runs. Both answers were checked to be the listener's pid.

| query | median ms | best ms |
|---|---:|---:|
| \`svkit-lifeline --which-port $port\` (native /proc walk) | $ours_med | $ours_min |
| \`lsof -ti tcp:$port\` (lsof $lsof_ver) | $lsof_med | $lsof_min |
$floor_row

svkit-lifeline is **${ratio}×** faster than lsof (median); target ≥ 10×: $target_ok.
$floor_note
MD
