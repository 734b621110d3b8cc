#!/bin/sh
# `svctl top` at rest: its CPU with 10 and 100 live slots at the default
# 1 s interval, in a real terminal (tmux), against `watch -n1 svctl
# status` (what operators run without it: a shell and a svctl process
# every second) measured the same way. Side by side, one run.
set -eu
cd "$(dirname "$0")/.."
sbx=./target/$(rustc --print host-tuple)/release/svkit-sandbox
secs=${TOP_BENCH_SECS:-20}
sock=
conf=$(mktemp -d)
id=
# shellcheck source=bench/sleepers.sh
. bench/sleepers.sh
trap '[ -z "$sock" ] || tmux -L "$sock" kill-server 2>/dev/null || true; [ -z "$id" ] || $sbx stop "$id" >/dev/null 2>&1 || true; rm -rf "$conf"' EXIT

# CPU ticks (user + system) of a process and every process below it.
tree_ticks() {
  # cat goes on past a process that ends while it reads; awk would stop.
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
    { pid = $1; line = $0; sub(/.*\) /, "", line); split(line, f, " ")
      ppid[pid] = f[2]; t[pid] = f[12] + f[13] + f[14] + f[15] }
    END { keep[root] = 1; changed = 1
          while (changed) { changed = 0
            for (p in ppid) if (!(p in keep) && (ppid[p] in keep)) { keep[p] = 1; changed = 1 } }
          for (p in keep) sum += t[p]; print sum + 0 }'
}

# Percent of one CPU used by what runs in tmux session $1 over $secs s.
cpu_of_session() {
  pane=$(tmux -L "$sock" display-message -p -t "$1" '#{pane_pid}')
  a=$(tree_ticks "$pane"); t0=$(date +%s%N)
  sleep "$secs"
  b=$(tree_ticks "$pane"); t1=$(date +%s%N)
  hz=$(getconf CLK_TCK)
  awk -v a="$a" -v b="$b" -v ns=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz / (ns / 1e9) * 100 }'
}

echo "## top: \`svctl top\` at rest, 1 s interval"
echo
echo "| live slots | svctl top (% of one CPU) | watch -n1 svctl status (% of one CPU) | target |"
echo "|---:|---:|---:|---|"
for n in ${TOP_BENCH_SLOTS:-10 100}; do
  # A server of its own each time: a new one under a name just killed
  # can be refused.
  sock=svkit-bench-top-$$-$n
  sleepers_rootfs "$conf" "$n"
  id=$($sbx run -d --rootfs "$conf" -- sleep 100000)
  # shellcheck disable=SC2016 # expanded inside the sandbox
  $sbx exec "$id" -- sh -c 'i=0; until svctl status >/dev/null 2>&1; do i=$((i + 1)); [ "$i" -lt 300 ] || exit 1; sleep 0.1; done'
  tmux -L "$sock" new-session -d -s top -x 160 -y 50 "$sbx exec --env TERM=xterm $id -- svctl top"
  i=0; until tmux -L "$sock" capture-pane -p -t =top: | grep -q "s-i001"; do i=$((i + 1)); [ "$i" -lt 100 ] || { echo "top never drew:" >&2; tmux -L "$sock" capture-pane -p -t =top: >&2; exit 1; }; sleep 0.1; done
  top=$(cpu_of_session "=top:")
  tmux -L "$sock" kill-server
  sock=$sock-watch
  tmux -L "$sock" new-session -d -s watch -x 160 -y 50 "$sbx exec --env TERM=xterm $id -- sh -c 'while :; do clear; svctl status; sleep 1; done'"
  watch=$(cpu_of_session "=watch:")
  verdict=$(awk -v t="$top" 'BEGIN { print (t < 2 ? "< 2%: met" : "< 2%: **missed**") }')
  echo "| $n | $top | $watch | $verdict |"
  tmux -L "$sock" kill-server 2>/dev/null || true
  $sbx stop "$id" >/dev/null 2>&1 || true; id=
done
echo
echo "CPU of each terminal's whole process tree over ${secs} s (svctl top, or the"
echo "shell loop and every svctl it starts), from /proc, after the first screen."
echo "Each refresh of top takes one snapshot of the slots (one status read each)"
echo "and reads /proc once for their usage."
