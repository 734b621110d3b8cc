#!/bin/bash
# Reconcile of 500 instances in the sandbox, under real s6: a cold apply
# (empty scandir) against `cp -a` of the same rendered tree into an empty dir
# (the I/O floor), and a warm no-op apply (second run: nothing to write)
# against `cat` of every managed file to /dev/null (the floor of reading
# each once, which is what a no-op must do to know). Prints a Markdown
# section on stdout, progress on stderr.
#
# How: one sandbox (PID 1 s6-svscan, like every test). The bench does not
# apply into /run/service: each run gets a fresh scandir under /run (tmpfs,
# as in s6-overlay) watched by a second, private `s6-svscan`, so that
# svkit-reconcile's final `s6-svscanctl -an` is answered as in production and
# a run can be torn down completely (`s6-svscanctl -t`) before the next.
# The warm apply runs once every supervisor (500 slots + 500 loggers) of the
# cold one is up and every logger has started s6-log, i.e. against a live,
# supervised, quiet tree. Slots are
# `autostart: never` so 500 daemons do not compete with the timings; their
# loggers run. Times are wall clock around one process (bash's
# EPOCHREALTIME, no fork to read the clock), medians of the runs.
#
# This file is also its own in-sandbox half (`--inside N RUNS`).
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

N=${APPLY_BENCH_INSTANCES:-500}
RUNS=${APPLY_BENCH_RUNS:-7}

# ---------------------------------------------------------------- inside --

# Every file and dir svkit manages in a scandir, with inode, mtime, ctime, size,
# mode and owner: everything but what s6 itself writes.
snapshot() {
  find "$1" \( -name supervise -o -name event -o -name .s6-svscan \) -prune \
    -o -printf '%p %i %T@ %C@ %s %m %U:%G\n' | sort
}

supervised_count() {
  find "$1" -mindepth 3 -maxdepth 4 -path '*/supervise/status' | wc -l
}

all_supervised() { [ "$(supervised_count "$1")" -ge "$2" ]; }
# s6-log makes `lock` in its dir once its run script (mkdir walk, lock
# probe) is done: until every logger has, 500 shell scripts still compete
# with whatever is timed.
loggers_started() { [ "$(find "$1" -mindepth 2 -maxdepth 2 -name lock | wc -l)" -ge "$2" ]; }
# Quiet again: back to the s6-supervise processes alive before the run.
supervisors_gone() { [ "$(pgrep -c -x s6-supervise || true)" -le "$1" ]; }
svscan_listening() { [ -p "$1/.s6-svscan/control" ]; }

inside() {
  local n=$1 runs=$2
  local base=/run/svkit-bench data=/tmp/svkit-bench cfg=/tmp/svkit-bench/config
  rm -rf "$base" "$data"
  mkdir -p "$base" "$data/profiles" "$cfg"
  (cd "$data/profiles" && seq -f 'p%04g' 1 "$n" | xargs mkdir &&
    seq -f 'p%04g/SOUL.md' 1 "$n" | xargs touch)
  # The demo's gateway slot, one instance a profile directory.
  cat >"$cfg/10-bench.json" <<JSON
{
  "user": "nobody",
  "slots": [
    {
      "name": "gateway-{instance}",
      "instances": { "from_dir": { "path": "$data/profiles", "require_file": "SOUL.md" } },
      "command": ["app", "-p", "{instance}", "gateway", "run", "--replace"],
      "env": { "HOME": "$data" },
      "cwd": "$data",
      "autostart": "never",
      "log": { "dir": "$data/logs/{instance}", "stdout": false, "keep": 10, "max_bytes": 1000000 },
      "restart": { "permanent_exit_codes": [78], "on_clean_exit": "stop", "backoff": { "max_s": 30 } }
    }
  ]
}
JSON
  svctl render --config-dir "$cfg" --to "$base/rendered" >/dev/null
  local slots files
  slots=$(find "$base/rendered" -mindepth 1 -maxdepth 1 -type d | wc -l)
  files=$(find "$base/rendered" -type f | wc -l)
  [ "$slots" -eq "$n" ] || {
    echo "apply.sh: rendered $slots slots, expected $n" >&2
    exit 111
  }
  echo "slots=$slots files=$files"

  local idle r scan t0 t1 svscan warm_us paths
  idle=$(pgrep -c -x s6-supervise || true)
  for r in $(seq 1 "$runs"); do
    echo "apply.sh: run $r/$runs" >&2
    # The floor: the same tree, copied into an empty dir on the same fs.
    mkdir "$base/cp"
    t0=$(now_us)
    cp -a "$base/rendered/." "$base/cp/"
    t1=$(now_us)
    echo "cp_us=$((t1 - t0))"
    rm -rf "$base/cp"

    scan=$base/scan
    rm -rf "$scan" "$data/logs"
    mkdir "$scan"
    s6-svscan "$scan" </dev/null >/dev/null 2>&1 &
    svscan=$!
    wait_for "s6-svscan on $scan" 500 svscan_listening "$scan"

    t0=$(now_us)
    svkit-reconcile --config-dir "$cfg" --scandir "$scan" >"$base/cold.out"
    t1=$(now_us)
    echo "cold_us=$((t1 - t0)) created=$(grep -c 'action=create' "$base/cold.out")"

    wait_for "$((2 * n)) supervisors" 6000 all_supervised "$scan" "$((2 * n))"
    wait_for "$n loggers" 6000 loggers_started "$data/logs" "$n"
    snapshot "$scan" >"$base/before"
    t0=$(now_us)
    svkit-reconcile --config-dir "$cfg" --scandir "$scan" >"$base/warm.out"
    t1=$(now_us)
    warm_us=$((t1 - t0))
    snapshot "$scan" >"$base/after"
    if ! cmp -s "$base/before" "$base/after"; then
      echo "apply.sh: the warm apply changed the scandir:" >&2
      diff "$base/before" "$base/after" | head -n 6 >&2 || true
    fi
    # The floor: every file svkit manages (not s6's supervise/ and event/,
    # nor the lock in .svkit/), read once by one `cat`.
    mapfile -t paths < <(find "$scan" -mindepth 1 \( -name supervise \
      -o -name event -o -path "$scan/.s6-svscan" -o -path "$scan/.svkit" \) \
      -prune -o -type f -print)
    t0=$(now_us)
    cat -- "${paths[@]}" >/dev/null
    t1=$(now_us)
    echo "cat_us=$((t1 - t0)) managed=${#paths[@]}"
    echo "warm_us=$warm_us unchanged=$(grep -c 'action=unchanged' "$base/warm.out")" \
      "changed=$(diff "$base/before" "$base/after" | grep -c '^>' || true)" \
      "entries=$(wc -l <"$base/before")"

    s6-svscanctl -t "$scan"
    wait "$svscan" || true
    wait_for "supervisors of run $r to exit" 6000 supervisors_gone "$idle"
  done
  rm -rf "$base" "$data"
}

if [ "${1:-}" = --inside ]; then
  inside "$2" "$3"
  exit 0
fi

# ------------------------------------------------------------------ host --

host_ready "apply: reconcile of $N instances, cold and warm" svkit-sandbox svkit-reconcile svctl -- unshare nsenter s6-svscan execlineb

echo "apply.sh: booting the sandbox" >&2
in_sandbox -- "$N" "$RUNS"

ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# verdict A B MAX [EXTRA]: "met" when A <= MAX × B and EXTRA (default 1) holds.
verdict() { awk -v a="$1" -v b="$2" -v m="$3" -v x="${4:-1}" 'BEGIN { print (a <= m * b && x) ? "met" : "**missed**" }'; }

slots=$(field slots)
files=$(field files)
cp_med=$(field cp_us | median)
cold_med=$(field cold_us | median)
warm_med=$(field warm_us | median)
cat_med=$(field cat_us | median)
cp_min=$(field cp_us | minimum)
cold_min=$(field cold_us | minimum)
warm_min=$(field warm_us | minimum)
cat_min=$(field cat_us | minimum)
managed=$(field managed | head -n 1)
changed_max=$(field changed | maximum)
created_min=$(field created | minimum)
unchanged_min=$(field unchanged | minimum)
entries=$(field entries | head -n 1)
runs=$(field cold_us | wc -l)
cold_ok=$(verdict "$cold_med" "$cp_med" 1.5)
warm_ok=$(verdict "$warm_med" "$cat_med" 2 "$([ "$changed_max" = 0 ] && echo 1 || echo 0)")

cat <<MD
## apply: reconcile of $slots instances, cold and warm

One templated slot (the demo's \`gateway-{instance}\` with a logger,
\`user: nobody\`), instances from $slots profile directories: $files files
rendered. In the sandbox, on tmpfs, against a private \`s6-svscan\` on the
scandir; wall time of one process (process start included), median and
best of $runs runs, each pair timed side by side in the same run. Cold:
empty scandir (creates $created_min slots, their \`supervise/\`/\`event/\`
and log dirs, then \`s6-svscanctl -an\`). Warm: the same apply again once all
$((2 * slots)) supervisors are up and every logger has started s6-log:
$unchanged_min slots reported unchanged, **$changed_max** of $entries
scandir entries changed (inode, mtime, ctime, size, mode or owner).

| operation | median ms | best ms | ratio | target |
|---|---:|---:|---:|---|
| floor: \`cp -a\` of the tree \`svctl render\` writes, into an empty dir | $(ms "$cp_med") | $(ms "$cp_min") | 1 | |
| cold apply (\`svkit-reconcile\`, empty scandir) | $(ms "$cold_med") | $(ms "$cold_min") | $(ratio "$cold_med" "$cp_med")× cp | ≤ 1.5× cp: $cold_ok |
| floor: one \`cat\` of the $managed managed files to /dev/null | $(ms "$cat_med") | $(ms "$cat_min") | 1 | |
| warm no-op apply (second run) | $(ms "$warm_med") | $(ms "$warm_min") | $(ratio "$warm_med" "$cat_med")× cat | ≤ 2× cat, 0 writes: $warm_ok |

Every apply loads and validates the config, lists the $slots profile
dirs, renders every slot and compares each managed file's bytes, mode and
owner with the disk (nothing is cached between runs); the warm one then
writes nothing. Beyond the \`cat\` floor it pays for that load and render
and for its own start-up.
MD
