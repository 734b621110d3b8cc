#!/bin/bash
# Config load at the sizes that once took minutes: `svctl check` (read,
# parse, validate, answer: what the boot hook, plan and apply all do first)
# against `jq . FILE` (parse and print the same JSON once, the floor of
# reading it at all), side by side on the same files. Host only, no
# sandbox. Times are wall clock around one process, medians of the runs.
# Prints a Markdown section on stdout, progress on stderr.
set -eu
export LC_ALL=C
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

RUNS=${CONFIG_BENCH_RUNS:-5}

cd "$(dirname "$0")/.."
REL=target/$(rustc --print host-tuple)/release
heading="config: loading 4 MB configs, svctl check against jq"
for t in jq python3; do
  if ! command -v "$t" >/dev/null 2>&1; then
    printf '## %s\n\nNot measured on this machine: %s missing (apt-get install -y jq python3).\n' "$heading" "$t"
    exit 0
  fi
done
[ -x "$REL/svctl" ] || { cargo build --release -p svkit-cli >&2 && dist/link-tools.sh "$REL"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each case a config dir of one file, just under the 4 MiB limit where it
# is about size.
python3 - "$tmp" <<'PY'
import json, os, sys
out = sys.argv[1]
def put(name, doc):
    os.makedirs(f"{out}/{name}")
    with open(f"{out}/{name}/10.json", "w") as f:
        f.write(json.dumps(doc, indent=1))
env = {f"V{j}": "x" * 20 for j in range(8)}
put("slots", {"slots": [{"name": f"w{i}", "command": ["sleep", "1000"], "env": env}
                        for i in range(10500)]})
put("env", {"slots": [{"name": "a", "command": ["true"],
                       "env": {f"K{i:07d}": "v" for i in range(180000)}}]})
put("errors", {"slots": [{"name": f"w{i}", "command": "not a list", "env": {"A": 1}}
                         for i in range(40000)]})
chain = [{"name": "s0", "command": ["true"]}]
chain += [{"name": f"s{i}", "command": ["true"], "depends_on": {f"s{i-1}": "up"}}
          for i in range(1, 4000)]
put("chain", {"slots": chain})
PY

# time_ms CMD...: median wall time and median CPU time (user + system) of
# RUNS runs, in ms, as "WALL CPU" (output dropped; an exit code other than
# 0 or 1 fails the bench). CPU time shows what the machine's other load
# adds to the wall time.
time_ms() {
  local r=0 rc t runs=()
  local TIMEFORMAT='%R %U %S'
  while [ "$r" -lt "$RUNS" ]; do
    rc=0
    t=$( { time "$@" >/dev/null 2>&1; } 2>&1) || rc=$?
    [ "$rc" -le 1 ] || { echo "$prog: $* exited $rc" >&2; exit 111; }
    runs+=("$t")
    r=$((r + 1))
  done
  printf '%s\n' "${runs[@]}" | awk '{ print $1 * 1000 }' | median | tr '\n' ' '
  printf '%s\n' "${runs[@]}" | awk '{ print ($2 + $3) * 1000 }' | median
}

check() { "$REL/svctl" check --config-dir "$1"; }
answer() { check "$1" >/dev/null 2>&1 && echo accepted || echo refused; }
verdict() { awk -v a="$1" -v m="$2" 'BEGIN { print (a < m) ? "met" : "**missed**" }'; }

echo "## $heading"
echo
echo "| config | size | answer | svctl check: wall (CPU) ms | jq .: wall (CPU) ms | ratio (wall) | target (wall) |"
echo "|---|---:|---|---:|---:|---:|---|"
notes=()
for c in slots env errors chain; do
  echo "timing $c" >&2
  f=$tmp/$c/10.json
  size=$(wc -c <"$f" | awk '{ printf "%.1f MB", $1 / 1e6 }')
  read -r a acpu < <(time_ms check "$tmp/$c")
  read -r j jcpu < <(time_ms jq . "$f")
  case $c in
    slots) what="10,500 slots (over s6-svscan's limit)"; bound=1000 ;;
    env) what="one slot, env of 180,000 keys (over ARG_MAX)"; bound=1000 ;;
    errors) what="40,000 slots, 2 type errors each"; bound=1000 ;;
    chain) what="depends_on chain of 4,000 slots (over s6-svscan's limit)"; bound=1000 ;;
  esac
  printf '| %s | %s | %s | %.0f (%.0f) | %.0f (%.0f) | %sx | < %s ms: %s |\n' "$what" "$size" \
    "$(answer "$tmp/$c")" "$a" "$acpu" "$j" "$jcpu" \
    "$(awk -v a="$a" -v j="$j" 'BEGIN { printf "%.1f", a / (j > 0 ? j : 1) }')" \
    "$bound" "$(verdict "$a" "$bound")"
  if [ "$(verdict "$a" "$bound")" != met ]; then
    notes+=("$what: $(awk -v c="$acpu" -v b="$bound" 'BEGIN { print (c < b) ? "missed on wall time only, its CPU time is under the bound: the machine was busy with other work (load average below)" : "its CPU time is over the bound too" }').")
  fi
done
for n in "${notes[@]}"; do
  echo
  echo "Missed: $n"
done
echo
echo "Release build. jq parses and prints the JSON once; svctl check parses it,"
echo "finds every value's line and column, validates every slot and prints"
echo "its answer (for \`errors\`, 80,000 lines). Each took minutes or more before"
echo "config load was made linear (an env of 80,000 keys: 18 s; a chain of 4,000: 10-20 s)."
echo "Load average when this section ended: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs."

# svctl import of a supervisord config with a thousand programs, each in
# the shape real images write them (command, environment, log, restart and
# stop keys), against `svctl check` of the config it makes: reading the
# result back, the floor of what any config tool does with it. 997 programs
# are the most s6-svscan takes beside s6-overlay's own 3 (the import checks
# that, as svctl check does); 1,000 are refused, located, once mapped: the
# count is known from the slot list, before the render and the check.
imp="import: a supervisord config of 1,000 programs, svctl import against svctl check"
python3 - "$tmp" <<'PY'
import os, sys
out = sys.argv[1]
def put(name, n):
    with open(f"{out}/{name}.conf", "w") as f:
        f.write("[supervisord]\nnodaemon=true\n\n")
        for i in range(n):
            f.write(f"""[program:worker{i}]
command=php /srv/app/artisan queue:work --queue=q{i} --sleep=3 --tries=3
directory=/srv/app
user=www-data
autorestart=true
startsecs=5
stopwaitsecs=60
stopsignal=QUIT
stdout_logfile=/dev/stdout
stdout_logfile_maxbytes=0
redirect_stderr=true
environment=APP_ENV="production",QUEUE="q{i}",LOG_CHANNEL="stderr"

""")
put("p997", 997)
put("p1000", 1000)
PY
mkdir "$tmp/p997.d"
"$REL/svctl" import -o "$tmp/p997.d/10.json" "$tmp/p997.conf" 2>/dev/null
echo
echo "## $imp"
echo
echo "| supervisord config | size | answer | svctl import: wall (CPU) ms | svctl check of the result: wall (CPU) ms | ratio (wall) | target (wall) |"
echo "|---|---:|---|---:|---:|---:|---|"
imp_notes=()
# A migration aid run once on a build host: a cold path, held to a bound
# a person waiting notices (1 s), not to a speed target.
imp_bound=1000
for n in 997 1000; do
  echo "timing import of $n programs" >&2
  f=$tmp/p$n.conf
  size=$(wc -c <"$f" | awk '{ printf "%.1f MB", $1 / 1e6 }')
  read -r a acpu < <(time_ms "$REL/svctl" import "$f")
  answer=imported
  "$REL/svctl" import "$f" >/dev/null 2>&1 || answer="refused (over s6-svscan's 1,000)"
  if [ "$n" = 997 ]; then
    read -r c ccpu < <(time_ms check "$tmp/p997.d")
    base=$(printf '%.0f (%.0f)' "$c" "$ccpu")
    ratio=$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.1fx", a / (c > 0 ? c : 1) }')
  else
    base="-"
    ratio="-"
  fi
  printf '| %s programs | %s | %s | %.0f (%.0f) | %s | %s | < %s ms: %s |\n' "$n" "$size" "$answer" \
    "$a" "$acpu" "$base" "$ratio" "$imp_bound" "$(verdict "$a" "$imp_bound")"
  if [ "$(verdict "$a" "$imp_bound")" != met ]; then
    imp_notes+=("$n programs: $(awk -v c="$acpu" -v b="$imp_bound" 'BEGIN { print (c < b) ? "missed on wall time only, its CPU time is under the bound: the machine was busy with other work (load average below)" : "its CPU time is over the bound too" }').")
  fi
done
for n in "${imp_notes[@]}"; do
  echo
  echo "Missed: $n"
done
echo
echo "Release build; the same medians of $RUNS runs as above. The import reads"
echo "the INI, maps every key, renders the JSON and then validates it as"
echo "svctl check does (so its time includes one check of its own result);"
echo "over s6-svscan's limit, it refuses once the keys are mapped, from the"
echo "slot count, without the render and the check that would refuse the same."
echo "Load average when this section ended: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs."
