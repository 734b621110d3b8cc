#!/bin/bash
# Scale: N slots, each with its logger, for N = 10, 100, 250 and 450 (at
# 450: 900 services, s6-overlay's own and svkit's log watcher, under
# s6-svscan's default limit of 1,000), on the real Docker engine: (a) svkit,
# the shipped Dockerfile's offline image with a generated config, against
# (b) the same s6-overlay with the same services written by hand in
# /etc/services.d (the same program, the same s6-log arguments svkit
# writes), in the same run, the two alternated run by run. Per container:
# the boot (docker run -> every slot's program has written its first line
# through its logger to its log file), the supervision's memory
# (bench/cpss.c), then, timed inside it by one docker exec, svctl status
# against s6-svstat on every service dir, and a no-op svctl apply against
# its floor. Prints a Markdown section on stdout, draws docs/scale.svg, and
# removes every container and image it made (the base image stays).
set -eu
export LC_ALL=C
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
prog=scale.sh

HEADING="scale: 10 to 450 slots with loggers, svkit against s6-overlay by hand (Docker)"
RUNS=${SCALE_BENCH_RUNS:-3}
read -r -a SIZES <<<"${SCALE_BENCH_SIZES:-10 100 250 450}"
# Timings of each command inside one container (their median is the run's).
REPS=3
DOCKER=${SVKIT_DOCKER:-docker}
export SVKIT_DOCKER=$DOCKER
SVG=docs/scale.svg
VARIANTS=(svkit plain)
declare -A LABEL=([svkit]="(a) svkit" [plain]="(b) s6-overlay by hand")
# Every slot's program: one line to its logger, then it waits. The
# bench's "up" is that line in the slot's log file.
PROGRAM="echo up; exec sleep infinity"
# Debian's nobody:nogroup, which every program and logger runs as.
NOBODY=65534:65534

skip() {
  printf '## %s\n\nNot measured on this machine: %s.\n' "$HEADING" "$1"
  exit 0
}
fail() {
  echo "$prog: fatal: $*" >&2
  exit 111
}

case $RUNS in '' | *[!0-9]* | 0) fail "SCALE_BENCH_RUNS='$RUNS': want a number of runs, at least 1" ;; esac
[ "$(id -u)" -eq 0 ] || skip "it reads the memory of every process of a container from the host, which needs root (run \`make bench\` as root)"
command -v cc >/dev/null 2>&1 || skip "no C compiler (\`cc\`) for bench/cpss.c, the memory reader"
engine_ready

tmp=$(mktemp -d)
tag=svkit-bench-scale-$$
cleanup() {
  local ids
  ids=$("$DOCKER" ps -aq --filter "name=^$tag-" 2>/dev/null || true)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one word per container id
    "$DOCKER" rm -fv $ids >/dev/null 2>&1 || true
  fi
  for v in "${VARIANTS[@]}"; do "$DOCKER" image rm "$tag-$v" >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
  engine_release
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ images --

cc -O2 -o "$tmp/cpss" bench/cpss.c || fail "cannot compile bench/cpss.c"
echo "$prog: building (a) with tests/docker/engine.sh image" >&2
tests/docker/engine.sh image "$tag-svkit" >"$tmp/build-svkit.log" 2>&1 ||
  { tail -n 30 "$tmp/build-svkit.log" >&2; fail "tests/docker/engine.sh image failed"; }
# (b): boot.sh's (b) image with no service of its own: each run mounts its
# services.d. The app it copies is not run here.
REL=target/$(rustc --print host-tuple)/release
s6dir=${SVKIT_S6_OVERLAY:-$(tests/s6-overlay/build.sh)}
ctx=$tmp/ctx-plain
cp -a bench/boot/s6 "$ctx"
rm -rf "$ctx/services.d"
mkdir "$ctx/services.d" "$ctx/s6-overlay"
cp "$REL/app" "$ctx/app"
cp "$s6dir"/s6-overlay-*.tar.xz "$s6dir/SHA256SUMS" "$ctx/s6-overlay/"
echo "$prog: building (b)" >&2
"$DOCKER" build --force-rm --network host -t "$tag-plain" "$ctx" >"$tmp/build-plain.log" 2>&1 ||
  { tail -n 30 "$tmp/build-plain.log" >&2; fail "docker build of (b) failed"; }

# ---------------------------------------------- the services, per size --

# names N: the instance names, 001 to N.
names() { seq -f '%03g' 1 "$1"; }
for n in "${SIZES[@]}"; do
  mkdir -p "$tmp/n$n/svkit" "$tmp/n$n/plain"
  list=$(names "$n" | sed 's/.*/"&"/' | paste -sd, -)
  cat >"$tmp/n$n/svkit/10-scale.json" <<JSON
{
  "user": "nobody",
  "slots": [
    {
      "name": "s-{instance}",
      "instances": { "names": [$list] },
      "command": ["sh", "-c", "$PROGRAM"],
      "log": { "dir": "/var/log/scale/s-{instance}", "stdout": false, "keep": 10, "max_bytes": 1000000 }
    }
  ]
}
JSON
  for i in $(names "$n"); do
    d=$tmp/n$n/plain/s-$i
    mkdir -p "$d/log"
    printf '#!/bin/sh\nexec 2>&1\nexec s6-setuidgid nobody sh -c '\''%s'\''\n' "$PROGRAM" >"$d/run"
    # The s6-log arguments svkit's logger writes (tests/golden/log).
    printf '#!/bin/sh\nexec s6-setuidgid nobody s6-log -b -l 1048576 -- n10 s1000000 T /var/log/scale/s-%s\n' "$i" >"$d/log/run"
    chmod 0755 "$d/run" "$d/log/run"
  done
done

# ------------------------------------------------ inside the container --

# Run by `docker exec C bash -c "$INSIDE" - VARIANT N REPS`: one warm-up
# of each command, then REPS timings of each in turn, in µs; prints
# "STATUS APPLY FLOOR" (medians; "-" for what VARIANT has not).
# shellcheck disable=SC2016 # expanded inside the container
INSIDE='
set -eu
v=$1 n=$2 reps=$3
t() {
  local a=$EPOCHREALTIME b
  "$@" >/dev/null 2>&1 || { echo "inside: $* failed" >&2; exit 1; }
  b=$EPOCHREALTIME
  echo $((${b/./} - ${a/./}))
}
median() { sort -n | awk "{ a[NR] = \$1 } END { print a[int((NR + 1) / 2)] }"; }
cd /run/service
if [ "$v" = svkit ]; then
  status() { svctl status; }
  apply() { svctl apply; }
  # The floor of a no-op apply: reading once every file it manages.
  mapfile -t files < <(find s-* \( -name supervise -o -name event \) -prune -o -type f -print)
  floor() { cat -- "${files[@]}"; }
  # A no-op: every slot unchanged, nothing else.
  out=$(svctl apply) || { echo "inside: svctl apply failed" >&2; exit 1; }
  same=$(grep -c " action=unchanged " <<<"$out" || true)
  [ "$same" = "$n" ] && [ "$(wc -l <<<"$out")" = "$n" ] ||
    { echo "inside: svctl apply was no no-op:" >&2; echo "$out" >&2; exit 1; }
  status >/dev/null; floor >/dev/null
  cmds="status apply floor"
else
  # What an operator of plain s6 runs: s6-svstat on every service dir,
  # each slot and its logger, one process a dir.
  status() { for d in s-*; do s6-svstat "$d"; s6-svstat "$d/log"; done; }
  status >/dev/null
  cmds=status
fi
for c in $cmds; do : >"/tmp/t.$c"; done
for _ in $(seq "$reps"); do
  for c in $cmds; do t "$c" >>"/tmp/t.$c"; done
done
for c in status apply floor; do
  if [ -e "/tmp/t.$c" ]; then median <"/tmp/t.$c"; else echo -; fi
done | paste -sd " " -
'

# ------------------------------------------------------------ one run --

# measure V N ROUND: one container of V with N slots: boot, memory, then
# the timings inside; appends "V N boot status apply floor pss nproc
# engine inside cont-init-start cont-init-end legacy-services-end" to
# $tmp/runs (µs, KiB; the engine's part up to the container's start, the
# rest from that start) and keeps the last profile of V at N ("comm PSS
# Pss_Anon" a process).
measure() {
  local v=$1 n=$2 r=$3 name=$tag-$1-$2-$3 logs=$tmp/logs t0 t_up deadline runner
  rm -rf "$logs"
  mkdir -p "$logs"
  (cd "$logs" && names "$n" | sed 's/^/s-/' | xargs mkdir && chown "$NOBODY" s-*)
  chmod 0755 "$logs"
  local pending=() left=() f
  for i in $(names "$n"); do pending+=("$logs/s-$i/current"); done
  local mount=(-v "$tmp/n$n/svkit:/etc/svkit:ro" --entrypoint /init)
  [ "$v" = svkit ] || mount=(-v "$tmp/n$n/plain:/etc/services.d:ro")
  rm -f "$tmp/run.ret"
  t0=$(now_us)
  (
    "$DOCKER" run -d --network none --name "$name" --tmpfs /data -v "$logs:/var/log/scale" \
      "${mount[@]}" "$tag-$v" >/dev/null 2>"$tmp/run.err" && : >"$tmp/run.ret"
  ) &
  runner=$!
  deadline=$((t0 + 120000000))
  while [ "${#pending[@]}" -gt 0 ]; do
    left=()
    for f in "${pending[@]}"; do [ -s "$f" ] || left+=("$f"); done
    pending=("${left[@]}")
    [ "${#pending[@]}" -gt 0 ] || break
    if ! kill -0 "$runner" 2>/dev/null && [ ! -e "$tmp/run.ret" ]; then
      cat "$tmp/run.err" >&2
      fail "docker run of ${LABEL[$v]} with $n slots failed"
    fi
    if [ "$(now_us)" -gt "$deadline" ]; then
      "$DOCKER" logs "$name" 2>&1 | tail -n 20 >&2
      fail "${LABEL[$v]}: ${#pending[@]} of $n slots not up 120 s after docker run"
    fi
    tick 0.01
  done
  t_up=$(now_us)
  wait "$runner" || { cat "$tmp/run.err" >&2; fail "docker run of ${LABEL[$v]} failed"; }

  local pids started_iso started stage
  started_iso=$("$DOCKER" inspect -f '{{.State.StartedAt}}' "$name")
  started=$(date -d "$started_iso" +%s%6N)
  pids=$(settled_pids "$name" "${LABEL[$v]} with $n slots")
  # Read once the process set settled: stage 2 is over by then.
  stage=$(stages "$name" "$started_iso")
  # The slots' programs (sleep) are not the supervision.
  # shellcheck disable=SC2086 # one word per pid
  supervision_memory "$tmp/cpss" sleep "$tmp/profile.new" $pids
  local pss=$SM_PSS nproc=$SM_NPROC progs=$SM_PROGS
  [ "$progs" = "$n" ] || fail "${LABEL[$v]}: $progs programs running, not $n"
  mv "$tmp/profile.new" "$tmp/profile-$v-$n"

  local timed
  timed=$("$DOCKER" exec "$name" bash -c "$INSIDE" - "$v" "$n" "$REPS") ||
    fail "${LABEL[$v]} with $n slots: the timings inside failed"
  # What one slot with its logger made on the container's /run (its
  # dirs, files and FIFOs, the supervisors' own included; (b)'s link in
  # /run/service too): the boot pays for each one.
  # shellcheck disable=SC2016 # expanded inside the container
  "$DOCKER" exec "$name" sh -c 'd=/run/service/s-001; n=$(find -H "$d" | wc -l); [ -L "$d" ] && n=$((n + 1)); echo "$n"' \
    >"$tmp/files-$v-$n" || fail "${LABEL[$v]} with $n slots: counting a slot's files failed"
  "$DOCKER" rm -fv "$name" >/dev/null || fail "docker rm $name failed"
  echo "$v $n $((t_up - t0)) $timed $pss $nproc $((started - t0)) $((t_up - started)) $stage" >>"$tmp/runs"
}

: >"$tmp/runs"
echo "$prog: warm-up, one container of each with ${SIZES[0]} slots" >&2
for v in "${VARIANTS[@]}"; do measure "$v" "${SIZES[0]}" warmup; done
: >"$tmp/runs"
for r in $(seq "$RUNS"); do
  for n in "${SIZES[@]}"; do
    # Alternated: (a) first in odd runs, (b) first in even ones.
    order=(svkit plain)
    [ $((r % 2)) = 1 ] || order=(plain svkit)
    for v in "${order[@]}"; do
      echo "$prog: run $r/$RUNS, ${LABEL[$v]}, $n slots" >&2
      measure "$v" "$n" "$r"
    done
  done
done

# -------------------------------------------------------------- report --

# shellcheck source=bench/scale-report.sh
. bench/scale-report.sh
