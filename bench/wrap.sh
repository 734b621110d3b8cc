#!/bin/bash
# The CMD wrapper's redirect, in the sandbox with the demo config: time from
# exec of `svkit-wrap gateway run` to its slot being wanted up, against the
# startup of a bare `python3 -c pass` (the floor of the reference's Python
# CLI), and the resident size of the keep-alive. Prints a Markdown section on
# stdout, progress on stderr.
#
# How: one sandbox booted like the demo (`--rootfs rootfs --rootfs
# tests/fixtures/sandbox-user`: gateway-default is rendered at boot,
# `autostart: remember`, down). Each run starts `svkit-wrap gateway run`
# with its stderr on a FIFO and stops the clock when the breadcrumb line
# arrives: svkit-wrap prints it only after `s6-svc -u` was written to the
# slot's supervisor (and the desired state persisted), so this is an upper
# bound of "exec to wanted up"; each run then checks with s6-svstat that the
# slot is wanted up, reads the memory of the blocked keep-alive (VmRSS,
# and its private memory: Private_Clean + Private_Dirty of
# /proc/PID/smaps_rollup, what it alone costs), sends it SIGTERM (exit 143 expected) and resets: slot
# down (`s6-svc -d`, waited for), remembered state removed. `python3 -c pass`
# is timed by the same shell, fork and exec included, like the wrapper.
# A `sleep infinity` in the same sandbox is the floor of the private
# memory: the least a blocked process of a dynamic binary holds.
#
# This file is also its own in-sandbox half (`--inside RUNS`).
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

RUNS=${WRAP_BENCH_RUNS:-30}

# ---------------------------------------------------------------- inside --

svstat_is() { [ "$(s6-svstat -o "$2" "$1" 2>/dev/null)" = "$3" ]; }
sleeping() { grep -q '^State:[[:space:]]*S' "/proc/$1/status"; }
# private_kb PID: memory no other process shares (kB).
private_kb() { awk '/^Private_(Clean|Dirty):/ { k += $2 } END { print k + 0 }' "/proc/$1/smaps_rollup"; }

inside() {
  local runs=$1 slot=/run/service/gateway-default state=/data/.svkit/desired/gateway-default
  local base=/run/svkit-bench
  mkdir -p "$base"
  wait_for "gateway-default supervised" 1000 s6-svok "$slot"
  python3 -c pass # warm the page cache, like the wrapper's warm-up run
  local r t0 t1 pid line code
  for r in $(seq 0 "$runs"); do
    # Reset: down, not wanted up, nothing remembered.
    s6-svc -d "$slot"
    wait_for "gateway-default down" 1000 svstat_is "$slot" up,wantedup "false false"
    rm -f "$state"
    rm -f "$base/err"
    mkfifo "$base/err"

    t0=$(now_us)
    svkit-wrap gateway run >/dev/null 2>"$base/err" &
    pid=$!
    exec 3<"$base/err"
    line=
    while IFS= read -r line <&3; do
      case $line in *"s6 supervision"*) break ;; esac
    done
    t1=$(now_us)
    case $line in *"s6 supervision"*) ;; *)
      echo "wrap.sh: no breadcrumb from svkit-wrap" >&2
      exit 111
      ;;
    esac
    # s6-supervise reads its control FIFO asynchronously: poll, bounded.
    wait_for "gateway-default wanted up after the breadcrumb" 500 \
      svstat_is "$slot" wantedup true
    wait_for "the keep-alive to block" 500 sleeping "$pid"
    # Run 0 is the warm-up: timed by nobody.
    if [ "$r" -gt 0 ]; then
      echo "wrap_us=$((t1 - t0))" \
        "rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")" \
        "anon_kb=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")" \
        "pss_kb=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")" \
        "private_kb=$(private_kb "$pid")"
    fi
    kill -TERM "$pid"
    code=0
    wait "$pid" || code=$?
    exec 3<&-
    [ "$code" -eq 143 ] || {
      echo "wrap.sh: keep-alive exited $code on SIGTERM, expected 143" >&2
      exit 111
    }
  done
  s6-svc -d "$slot"
  rm -f "$state"

  for r in $(seq 1 5); do
    sleep infinity &
    pid=$!
    wait_for "sleep to block" 500 sleeping "$pid"
    echo "sleep_private_kb=$(private_kb "$pid")"
    kill "$pid"
    wait "$pid" || true
  done

  echo "python=$(python3 -c 'import platform; print(platform.python_version())')"
  for r in $(seq 1 "$runs"); do
    t0=$(now_us)
    python3 -c pass
    t1=$(now_us)
    echo "python_us=$((t1 - t0))"
    # What any fork+exec of a dynamic binary costs from this shell.
    t0=$(now_us)
    /bin/true
    t1=$(now_us)
    echo "true_us=$((t1 - t0))"
  done
  rm -rf "$base"
}

if [ "${1:-}" = --inside ]; then
  inside "$2"
  exit 0
fi

# ------------------------------------------------------------------ host --

# shellcheck disable=SC2016 # the backticks are Markdown, not a command
host_ready 'wrap: `svkit-wrap gateway run` into its slot' svkit-sandbox svkit-wrap svkit-reconcile app -- unshare nsenter s6-svscan execlineb python3

echo "wrap.sh: booting the sandbox, $RUNS runs" >&2
in_sandbox rootfs tests/fixtures/sandbox-user -- "$RUNS"

ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

wrap_med=$(field wrap_us | median)
wrap_min=$(field wrap_us | minimum)
py_med=$(field python_us | median)
py_min=$(field python_us | minimum)
true_med=$(field true_us | median)
true_min=$(field true_us | minimum)
anon_med=$(field anon_kb | median)
pss_med=$(field pss_kb | median)
rss_med=$(field rss_kb | median)
rss_max=$(field rss_kb | maximum)
runs=$(field wrap_us | wc -l)
pyver=$(field python | head -n 1)
ratio=$(awk -v a="$py_med" -v b="$wrap_med" 'BEGIN { printf "%.1f", a / b }')
speed_ok=$(awk -v a="$py_med" -v b="$wrap_med" 'BEGIN { print (a >= 10 * b) ? "met" : "**missed**" }')
priv_med=$(field private_kb | median)
priv_max=$(field private_kb | maximum)
sleep_priv=$(field sleep_private_kb | median)
priv_ok=$(awk -v a="$priv_max" 'BEGIN { print (a <= 256) ? "met" : "**missed**" }')
file_med=$((priv_med - anon_med))
# Against the fork+exec floor of the same run (issue 16: within 2x).
floor_ratio=$(awk -v a="$wrap_med" -v b="$true_med" 'BEGIN { printf "%.2f", a / b }')
floor_ok=$(awk -v a="$wrap_med" -v b="$true_med" 'BEGIN { print (a <= 2 * b) ? "met" : "**missed**" }')
# 10x python leaves a budget below what any fork+exec costs here?
floor_note=$(awk -v p="$py_med" -v t="$true_med" 'BEGIN {
  if (p / 10 < t) printf "A 10x target means %.2f ms, less than the %.2f ms a bare fork+exec of /bin/true takes in the same run: not reachable on this machine by any program.", p / 10000, t / 1000
}')
rss_mib() { awk -v k="$1" 'BEGIN { printf "%.2f", k / 1024 }'; }

cat <<MD
## wrap: \`svkit-wrap gateway run\` into its slot

In the sandbox with the demo config (\`gateway-default\`, \`autostart:
remember\`, down before every run): wall time from the fork+exec of
\`svkit-wrap gateway run\` to its breadcrumb on stderr, which it prints once
the desired state is persisted and \`s6-svc -u\` was sent (each run then
checked \`wantedup true\` with s6-svstat); against \`python3 -c pass\`
(Python $pyver, the reference CLI's floor before any import of its own),
timed by the same shell. Median and best of $runs runs, after one warm-up.
Keep-alive: the private memory of the process that stays (the same pid:
\`svkit-wrap\` execs s6-overlay's \`s6-pause\` in its place), blocked
(Private_Clean + Private_Dirty of /proc/PID/smaps_rollup: what it alone
costs; VmRSS also counts the binary's and libc's shared pages) beside a
\`sleep infinity\` in the same sandbox; it exited 143 on SIGTERM every time.

| measure | median | best | target |
|---|---:|---:|---|
| \`svkit-wrap gateway run\` → slot wanted up | $(ms "$wrap_med") ms | $(ms "$wrap_min") ms | |
| \`python3 -c pass\` | $(ms "$py_med") ms | $(ms "$py_min") ms | |
| \`/bin/true\` (fork+exec floor of this shell, for scale) | $(ms "$true_med") ms | $(ms "$true_min") ms | |
| speed-up (python / svkit-wrap, medians) | ${ratio}× | | ≥ 10×: $speed_ok |
| svkit-wrap against the fork+exec floor (medians) | ${floor_ratio}× | | ≤ 2×: $floor_ok |
| keep-alive private memory | ${priv_med} KiB | max ${priv_max} KiB | ≤ 256 KiB: $priv_ok |
| of which anonymous (its own data) / file-backed (its binary's pages) | ${anon_med} / ${file_med} KiB | | |
| \`sleep infinity\` private memory (floor) | ${sleep_priv} KiB | | |
| keep-alive VmRSS / RssAnon / Pss | $(rss_mib "$rss_med") / $(rss_mib "$anon_med") / $(rss_mib "$pss_med") MiB | max VmRSS $(rss_mib "$rss_max") MiB | |

$floor_note

The keep-alive's own data is the anonymous part; the rest is pages of its
binary's file mapped only by it. Before it was s6-pause, the keep-alive
was \`svkit-wrap --hold\`: about 1.3 MiB by this measure, nearly all of it
pages of the static svkit binary that the kernel's fault-around maps
around each page start-up touches.
MD
