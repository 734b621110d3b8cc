#!/bin/bash
# Boot, stop and memory of one container running the same three services,
# each with one log, on the real Docker engine: (a) svkit on s6-overlay,
# (b) s6-overlay's services.d written by hand, (c) supervisord, the floor,
# a shell that starts the three and waits, (d) svkit with the shipped stop
# settings, (e) (d) with a foreground CMD whose TERM handler takes 1 s,
# and (g) (d) through svkit-init as PID 1 beside (h) the same under
# `docker run --init` (svkit-init's own supervision). The images are built from
# the same local base (bench/boot/*/Dockerfile; (a) on top of the shipped
# Dockerfile's offline image), runs alternate between them, and everything
# built is removed at the end (the base image stays). Prints a Markdown
# section on stdout.
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

HEADING="boot, stop and memory: svkit, s6-overlay by hand, supervisord (Docker)"
RUNS=${BOOT_BENCH_RUNS:-20}
DOCKER=${SVKIT_DOCKER:-docker}
export SVKIT_DOCKER=$DOCKER
prog=boot.sh
# The variants, in table order, and how the tables name them.
VARIANTS=(svkit s6 supervisord floor fast fg s6fast pid1 tini)
declare -A LABEL=([svkit]="(a) svkit" [s6]="(b) s6-overlay by hand"
  [supervisord]="(c) supervisord" [floor]="floor: no supervisor"
  [fast]="(d) svkit, shipped stop settings" [fg]="(e) (d) + foreground CMD, 1 s TERM handler"
  [s6fast]="(f) (b), S6_KILL_GRACETIME=0"
  [pid1]="(g) (d) through svkit-init, PID 1" [tini]="(h) (g) under --init")
# (f): (b)'s image with no final grace: s6-overlay's own shutdown and
# nothing else, the least any s6-overlay image can take to stop (its
# services get TERM and KILL at once, so their handlers may not finish).
S6FAST_ARGS=(-e S6_KILL_GRACETIME=0)
# (e): (d)'s image with a fourth app as the CMD, through svkit-wrap (no
# redirect matches it: it runs in the foreground), its TERM handler 1 s.
FG_ARGS=(--entrypoint /init)
FG_CMD=(svkit-wrap -- env APP_STOP_MS=1000 app -p fg gateway run)
FG_DONE="⚕ gateway fg stopped after 1000 ms"
# (g) and (h): (d)'s image with the shipped entrypoint, svkit-init, and a
# CMD (`sleep infinity`, in the foreground: no redirect matches it), as
# PID 1 (it hands over to /init) and under tini (it supervises itself).
PID1_ARGS=(--entrypoint svkit-init)
TINI_ARGS=(--init --entrypoint svkit-init)
INIT_CMD=(-- sleep infinity)
# The app processes each variant runs.
declare -A APPS=([svkit]=3 [s6]=3 [supervisord]=3 [floor]=3 [fast]=3 [fg]=4 [s6fast]=3
  [pid1]=3 [tini]=3)
SERVICES=(one two three)
# Debian's nobody:nogroup, which every service and logger runs as.
NOBODY=65534:65534

skip() {
  printf '## %s\n\nNot measured on this machine: %s.\n' "$HEADING" "$1"
  exit 0
}
fail() {
  echo "$prog: fatal: $*" >&2
  exit 111
}

[ "$(id -u)" -eq 0 ] || skip "it reads the memory of every process of a container from the host, which needs root (run \`make bench\` as root)"

engine_ready

command -v cc >/dev/null 2>&1 || skip "no C compiler (\`cc\`) for bench/cpss.c, the memory reader"

tmp=$(mktemp -d)
tag=svkit-bench-boot-$$
declare -A IMAGE=([svkit]=$tag-svkit [s6]=$tag-s6 [supervisord]=$tag-supervisord [floor]=$tag-floor
  [fast]=$tag-fast [fg]=$tag-fast [s6fast]=$tag-s6 [pid1]=$tag-fast [tini]=$tag-fast)
cleanup() {
  local ids
  ids=$("$DOCKER" ps -aq --filter "name=^$tag-" 2>/dev/null || true)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one word per container id
    "$DOCKER" rm -fv $ids >/dev/null 2>&1 || true
  fi
  for i in $(printf '%s\n' "${IMAGE[@]}" | sort -u) "$tag-base"; do
    "$DOCKER" image rm "$i" >/dev/null 2>&1 || true
  done
  rm -rf "$tmp"
  engine_release
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ images --

cc -O2 -o "$tmp/cpss" bench/cpss.c || fail "cannot compile bench/cpss.c"

echo "$prog: building (a)'s base with tests/docker/engine.sh image" >&2
tests/docker/engine.sh image "$tag-base" >"$tmp/build-base.log" 2>&1 ||
  { tail -n 30 "$tmp/build-base.log" >&2; fail "tests/docker/engine.sh image failed"; }
# The very app (a) ships, wherever its PATH finds it, for the other three.
# shellcheck disable=SC2016 # expanded inside the container
"$DOCKER" run --rm --network none --entrypoint /bin/sh "$tag-base" \
  -c 'cat "$(command -v app)"' >"$tmp/app" || fail "cannot copy app out of $tag-base"
chmod 0755 "$tmp/app"
s6dir=${SVKIT_S6_OVERLAY:-$(tests/s6-overlay/build.sh)}

for v in "${VARIANTS[@]}"; do
  case $v in fg | s6fast | pid1 | tini) continue ;; esac # (d)'s image, (b)'s
  ctx=$tmp/ctx-$v
  if [ "$v" = fast ]; then
    cp -a bench/boot/svkit-fast "$ctx"
    cp bench/boot/svkit/10-bench.json "$ctx/"
  else
    cp -a "bench/boot/$v" "$ctx"
  fi
  case $v in svkit | fast) ;; *) cp "$tmp/app" "$ctx/app" ;; esac
  if [ "$v" = s6 ]; then
    mkdir "$ctx/s6-overlay"
    cp "$s6dir"/s6-overlay-*.tar.xz "$s6dir/SHA256SUMS" "$ctx/s6-overlay/"
  fi
  echo "$prog: building ${LABEL[$v]}" >&2
  "$DOCKER" build --force-rm --network host --build-arg "BASE=$tag-base" \
    -t "${IMAGE[$v]}" "$ctx" >"$tmp/build-$v.log" 2>&1 ||
    { tail -n 30 "$tmp/build-$v.log" >&2; fail "docker build of ${LABEL[$v]} failed"; }
done

# --------------------------------------------------------------- one run --

# all_logged DIR PATTERN: every service's log has a line matching PATTERN
# (a glob). Builtins only: it runs every 5 ms beside what it times.
all_logged() {
  local s line
  for s in "${SERVICES[@]}"; do
    [ -s "$1/$s/current" ] || return 1
    while IFS= read -r line; do
      # shellcheck disable=SC2053 # PATTERN is a glob on purpose
      [[ $line == $2 ]] && continue 2
    done <"$1/$s/current"
    return 1
  done
}
UP_LINE='* up on 127.0.0.1:*'
STOP_LINE='* stopping'

# measure V ROUND: one container of V: run, wait for the three "up on"
# lines, let its process set settle, read every process's memory, stop.
# Appends "boot ret stop pss priv nproc clean" to $tmp/V.runs and the
# per-process profile to $tmp/V.profile (the last run's is kept).
measure() {
  local v=$1 r=$2 name=$tag-$1-$2 logs=$tmp/logs-$1-$2 t0 t_up t_ret deadline
  mkdir -p "$logs"
  for s in "${SERVICES[@]}"; do mkdir "$logs/$s"; done
  chown "$NOBODY" "$logs"/*
  chmod 0755 "$logs"
  rm -f "$tmp/run.ret"
  local pre=() post=()
  if [ "$v" = fg ]; then pre=("${FG_ARGS[@]}") post=("${FG_CMD[@]}"); fi
  if [ "$v" = s6fast ]; then pre=("${S6FAST_ARGS[@]}"); fi
  if [ "$v" = pid1 ]; then pre=("${PID1_ARGS[@]}") post=("${INIT_CMD[@]}"); fi
  if [ "$v" = tini ]; then pre=("${TINI_ARGS[@]}") post=("${INIT_CMD[@]}"); fi
  t0=$(now_us)
  (
    "$DOCKER" run -d --network none --name "$name" -v "$logs:/var/log/bench" \
      "${pre[@]}" "${IMAGE[$v]}" "${post[@]}" >/dev/null 2>"$tmp/run.err" && now_us >"$tmp/run.ret"
  ) &
  local runner=$!
  deadline=$((t0 + 30000000))
  until all_logged "$logs" "$UP_LINE"; do
    # Gone without its timestamp (written before it ends): docker run failed.
    if ! kill -0 "$runner" 2>/dev/null && [ ! -e "$tmp/run.ret" ]; then
      cat "$tmp/run.err" >&2
      fail "docker run ${IMAGE[$v]} failed"
    fi
    if [ "$(now_us)" -gt "$deadline" ]; then
      "$DOCKER" logs "$name" >&2 || cat "$tmp/run.err" >&2
      fail "${LABEL[$v]}: the three services were not up 30 s after docker run (logs in $logs)"
    fi
    tick
  done
  t_up=$(now_us)
  if [ "$v" = fg ]; then
    # The foreground app logs to docker logs (not timed: polled by forks).
    until "$DOCKER" logs "$name" 2>&1 | grep -qF "⚕ gateway fg up"; do
      [ "$(now_us)" -lt "$deadline" ] || fail "${LABEL[$v]}: the foreground app was not up 30 s after docker run"
      tick
    done
  fi
  wait "$runner" || { cat "$tmp/run.err" >&2; fail "docker run ${IMAGE[$v]} failed"; }
  t_ret=$(cat "$tmp/run.ret")

  # The processes once the boot is over.
  local pids started_iso started stage
  started_iso=$("$DOCKER" inspect -f '{{.State.StartedAt}}' "$name")
  started=$(date -d "$started_iso" +%s%6N)
  pids=$(settled_pids "$name" "${LABEL[$v]}")
  # The services are the three app processes; everything else in the
  # container is the supervision (init, supervisors, loggers, shells).
  # shellcheck disable=SC2086 # one word per pid
  supervision_memory "$tmp/cpss" app "$tmp/$v.profile.new" $pids
  local pss=$SM_PSS anon=$SM_ANON nproc=$SM_NPROC apps=$SM_PROGS
  [ "$apps" = "${APPS[$v]}" ] || fail "${LABEL[$v]}: $apps app processes in the container, not ${APPS[$v]}"
  # Read once the process set settled: stage 2 is over by then.
  stage=$(stages "$name" "$started_iso")
  mv "$tmp/$v.profile.new" "$tmp/$v.profile"

  # docker stop in the background; meanwhile, when the three services have
  # logged their "stopping" line (TERM handled, about to exit).
  local s0 t_down='' t_exit clean=0 stopper
  rm -f "$tmp/stop.ret"
  s0=$(now_us)
  (
    "$DOCKER" stop "$name" >/dev/null 2>"$tmp/stop.err" && now_us >"$tmp/stop.ret"
  ) &
  stopper=$!
  deadline=$((s0 + 30000000))
  while kill -0 "$stopper" 2>/dev/null; do
    if [ -z "$t_down" ] && all_logged "$logs" "$STOP_LINE"; then t_down=$(now_us); fi
    [ "$(now_us)" -lt "$deadline" ] || fail "${LABEL[$v]}: docker stop still runs after 30 s"
    tick
  done
  [ -e "$tmp/stop.ret" ] || { cat "$tmp/stop.err" >&2; fail "docker stop $name failed"; }
  t_exit=$(cat "$tmp/stop.ret")
  for s in "${SERVICES[@]}"; do
    if grep -q ' stopping$' "$logs/$s/current"; then clean=$((clean + 1)); fi
  done
  # (e)'s foreground app counts when its whole 1 s handler ran.
  if [ "$v" = fg ] && "$DOCKER" logs "$name" 2>&1 | grep -qF "$FG_DONE"; then clean=$((clean + 1)); fi
  # A service that never logged its end ended no sooner than the container.
  if [ -z "$t_down" ] || [ "$clean" != "${APPS[$v]}" ]; then t_down=$t_exit; fi
  "$DOCKER" rm -v "$name" >/dev/null || fail "docker rm $name failed"
  echo "$((t_up - t0)) $((t_ret - t0)) $((t_exit - s0)) $pss $anon $nproc $clean $((t_down - s0))" \
    "$((started - t0)) $((t_up - started)) $stage" >>"$tmp/$v.runs"
  [ "$r" = warmup ] || echo "$prog: ${LABEL[$v]} run $r: up $(((t_up - t0) / 1000)) ms, stop $(((t_exit - s0) / 1000)) ms, $pss KiB" >&2
  rm -rf "$logs"
}

# One unrecorded run of each first (page cache, checks), then the rounds,
# each starting with the next variant so none always follows the same one.
for v in "${VARIANTS[@]}"; do
  measure "$v" warmup
  rm -f "$tmp/$v.runs"
done
n=${#VARIANTS[@]}
for ((r = 1; r <= RUNS; r++)); do
  for ((i = 0; i < n; i++)); do
    measure "${VARIANTS[$(((r + i) % n))]}" "$r"
  done
done

# -------------------------------------------------------------- report --

# col V K: the K-th column of V's runs, one a line.
col() { awk -v k="$2" '{ print $k }' "$tmp/$1.runs"; }
ms() { awk -v u="$1" 'BEGIN { printf "%.0f", u / 1000 }'; }
declare -A BOOT BOOT_MIN RET STOP STOP_MIN DOWN DOWN_MIN PSS ANON NPROC CLEAN SIZE
for v in "${VARIANTS[@]}"; do
  BOOT[$v]=$(col "$v" 1 | median)
  BOOT_MIN[$v]=$(col "$v" 1 | minimum)
  RET[$v]=$(col "$v" 2 | median)
  STOP[$v]=$(col "$v" 3 | median)
  STOP_MIN[$v]=$(col "$v" 3 | minimum)
  PSS[$v]=$(col "$v" 4 | median)
  ANON[$v]=$(col "$v" 5 | median)
  DOWN[$v]=$(col "$v" 8 | median)
  DOWN_MIN[$v]=$(col "$v" 8 | minimum)
  NPROC[$v]=$(col "$v" 6 | median)
  CLEAN[$v]=$(col "$v" 7 | awk '{ s += $1 } END { print s }')
  SIZE[$v]=$("$DOCKER" image inspect -f '{{.Size}}' "${IMAGE[$v]}")
done
base_size=$("$DOCKER" image inspect -f '{{.Size}}' debian:bookworm-slim)
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1000000 }'; }

row() {
  local title=$1 v
  shift
  printf '| %s |' "$title"
  for v in "${VARIANTS[@]}"; do printf ' %s |' "$("$@" "$v")"; done
  echo
}
boot_cell() { echo "$(ms "${BOOT[$1]}") ($(ms "${BOOT_MIN[$1]}"))"; }
ret_cell() { ms "${RET[$1]}"; }
stop_cell() { echo "$(ms "${STOP[$1]}") ($(ms "${STOP_MIN[$1]}"))"; }
pss_cell() { echo "${PSS[$1]}"; }
anon_cell() { echo "${ANON[$1]}"; }
down_cell() { echo "$(ms "${DOWN[$1]}") ($(ms "${DOWN_MIN[$1]}"))"; }
nproc_cell() { echo "${NPROC[$1]}"; }
clean_cell() { echo "${CLEAN[$1]} / $((RUNS * APPS[$1]))"; }
size_cell() { mb "${SIZE[$1]}"; }
over_cell() { mb "$((SIZE[$1] - base_size))"; }

# profile V: the supervision's processes by name in V's last run, then the
# services, "name ×count PSS" (KiB).
profile() {
  awk '{ k = ($1 == "app") ? "~" : $1; n[k]++; p[k] += $2 }
    END { for (k in n) print k, n[k], p[k] }' "$tmp/$1.profile" | LC_ALL=C sort |
    awk '{ name = ($1 == "~") ? "*the services: app*" : "`" $1 "`"
      printf "%s%s ×%d %d", (NR > 1 ? ", " : ""), name, $2, $3 }'
}

# span V A [B]: median of column A minus column B (0: none) of V's runs,
# in ms; "–" when a column holds no figure (no s6-overlay stages).
span() {
  awk -v a="$2" -v b="${3:-0}" '$a == "-" || (b && $b == "-") { print "-"; next }
    { print $a - (b ? $b : 0) }' "$tmp/$1.runs" >"$tmp/span"
  if grep -qx -- - "$tmp/span"; then echo "–"; else ms "$(median <"$tmp/span")"; fi
}
engine_cell() { span "$1" 9; }
inside_cell() { span "$1" 10; }
stage1_cell() { span "$1" 11; }
continit_cell() { span "$1" 12 11; }
legacy_cell() { span "$1" 13 12; }
rest_cell() { span "$1" 10 13; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
boot_ab=$(ratio "${BOOT[svkit]}" "${BOOT[s6]}")
boot_ac=$(ratio "${BOOT[svkit]}" "${BOOT[supervisord]}")
mem_ac=$(ratio "${PSS[svkit]}" "${PSS[supervisord]}")
stop_dc=$(ratio "${STOP[fast]}" "${STOP[supervisord]}")
stop_db=$(ratio "${STOP[fast]}" "${STOP[s6]}")
stop_e=$(ms "${STOP[fg]}")
boot_hg=$(ratio "${BOOT[tini]}" "${BOOT[pid1]}")
stop_hg=$(ratio "${STOP[tini]}" "${STOP[pid1]}")
stop_fc=$(ratio "${STOP[s6fast]}" "${STOP[supervisord]}")
# What the target leaves svkit above s6-overlay's own stop (f), and what
# it takes: (d) - (f).
stop_room=$(ms "$((STOP[supervisord] / 2 - STOP[s6fast]))")
stop_svkit=$(ms "$((STOP[fast] - STOP[s6fast]))")
s6fast_total=$((RUNS * APPS[s6fast]))
stop_e_max=$(ms "$(col fg 3 | sort -n | tail -n 1)")
# verdict RATIO LIMIT: met when RATIO <= LIMIT.
verdict() { awk -v r="$1" -v l="$2" 'BEGIN { print (r + 0 <= l + 0) ? "met" : "**missed**" }'; }
v_ab=$(verdict "$boot_ab" 1.1)
v_ac=$(verdict "$boot_ac" 0.99)
v_mem=$(verdict "$mem_ac" 0.2)
v_dc=$(verdict "$stop_dc" 0.5)
v_db=$(verdict "$stop_db" 0.1)
v_e=$(verdict "$stop_e_max" 1500)
v_hg_boot=$(verdict "$boot_hg" 1.1)
v_hg_stop=$(verdict "$stop_hg" 1.1)
clean_all() { [ "${CLEAN[$1]}" = "$((RUNS * APPS[$1]))" ]; }
v_clean=met
for v in fast fg; do clean_all "$v" || v_clean="**missed**"; done

volume_note=
if [ "$("$DOCKER" image inspect -f '{{json .Config.Volumes}}' "${IMAGE[svkit]}")" != null ]; then
  volume_note="
  (a)'s image declares a \`VOLUME\` (the shipped Dockerfile's): the engine
  also creates an anonymous volume at each of its runs."
fi
grace_a=$(ms "$((STOP[svkit] - DOWN[svkit]))")
grace_b=$(ms "$((STOP[s6] - DOWN[s6]))")
grace_d=$(ms "$((STOP[fast] - DOWN[fast]))")
size_ab=$(mb "$((SIZE[svkit] - SIZE[s6]))")
# The s6-linux-init that s6-overlay was built with, for the stop's why.
linit=$(for d in "$s6dir"/.rootfs-*/package/admin/s6-linux-init-[0-9]*; do [ -d "$d" ] && basename "$d"; done | head -n 1)
linit=${linit:-s6-linux-init}
server=$("$DOCKER" version -f '{{.Server.Version}}' 2>/dev/null || echo unknown)
supervisor_ver=$("$DOCKER" run --rm --network none "${IMAGE[supervisord]}" supervisord --version 2>/dev/null || echo unknown)
python_ver=$("$DOCKER" run --rm --network none "${IMAGE[supervisord]}" python3 --version 2>/dev/null | awk '{ print $2 }')

header="| measure |$(for v in "${VARIANTS[@]}"; do printf ' %s |' "${LABEL[$v]}"; done)"
align="|---|$(for _ in "${VARIANTS[@]}"; do printf -- '---:|'; done)"
cat <<MD
## $HEADING

One container with three services, each a demo \`app\` (\`app -p NAME
gateway run\`, the same binary in every image, run as \`nobody\`) that prints
an "up on 127.0.0.1:PORT" line once it listens, and each with one log file
of its own (10 archives of 1 MB): (a) the shipped Dockerfile's offline
image with a config of three slots with logs (\`bench/boot/svkit/\`); (b)
the same s6-overlay tarballs with \`/etc/services.d/NAME/run\` and
\`log/run\` (\`s6-log\`, the arguments svkit writes) by hand; (c) Debian's
\`supervisor\` $supervisor_ver (Python $python_ver), stock config plus
three \`[program:…]\` with \`stdout_logfile\`; the floor: \`sh\` starts the
three with \`&\` and waits. (a) runs \`/init\` with no CMD, as (b)
does: \`svkit-wrap\`'s keep-alive is not among its processes (the wrap
section measures it). All from the same \`debian:bookworm-slim\`;
Docker $server, \`--network none\`, the log dirs a bind mount read from the
host. Median (and best) of $RUNS runs of each, alternated, after one
warm-up each.

- **up**: from \`docker run -d\` to the moment the host sees all three "up"
  lines in the log files (polled every 5 ms; the logger's write included).
- **stop**: from \`docker stop\` (default 10 s timeout) to the moment all
  three services have logged their "stopping" line (their TERM handler
  ran; polled the same way), and to its return (the container has
  exited). (a) and (b) run with the same s6-overlay settings: the shipped
  image's \`S6_KILL_FINISH_MAXTIME=8000\`, \`S6_BEHAVIOUR_IF_STAGE2_FAILS=2\`
  and \`S6_KEEP_ENV=0\`, and s6-overlay's defaults for the rest, among them
  \`S6_SERVICES_GRACETIME=3000\` and \`S6_KILL_GRACETIME=3000\` (ms); (a)
  also runs its \`cont-finish.d\` hook (\`svctl stop --all --wait\`).
  (d) is (a) with the shipped image's \`S6_KILL_GRACETIME=0\`; (e) is
  (d) with a fourth \`app\` as its CMD (\`svkit-wrap -- env
  APP_STOP_MS=1000 app -p fg gateway run\`: no redirect matches, so it
  runs in the foreground) whose TERM handler takes 1 s; the stop hook
  sends it TERM and waits for it before the slots. Its handler counts as
  completed when its "stopped after 1000 ms" line is in \`docker logs\`.
- **supervision memory**: once the boot is over (the container's process
  set unchanged over 0.5 s), every process of the container except the
  three \`app\` services — PID 1, supervisors, loggers, shells, whatever
  stays — summed: its PSS counted within the container (each resident page
  split among the container's processes that map it, from
  \`/proc/PID/pagemap\` by \`bench/cpss.c\`; the kernel's \`Pss\` would also
  split the pages of files that another container from the same image
  layers maps, and shrink with every such container), and the anonymous
  part of it (\`Pss_Anon\` of \`/proc/PID/smaps_rollup\`: heap and stacks).

$header
$align
$(row "\`docker run -d\` returned, ms" ret_cell)
$(row "all three services up, ms" boot_cell)
$(row "\`docker stop\` → the three services ended, ms" down_cell)
$(row "\`docker stop\` → container exited, ms" stop_cell)
$(row "services that ended by their TERM handler" clean_cell)
$(row "supervision memory, PSS KiB" pss_cell)
$(row "of which anonymous, KiB" anon_cell)
$(row "supervision processes" nproc_cell)
$(row "image size, MB" size_cell)
$(row "over the base image, MB" over_cell)

| target | measured | verdict |
|---|---:|---|
| boot: (a) ≤ 1.1 × (b) | ${boot_ab}× | $v_ab |
| boot: (a) faster than (c) | ${boot_ac}× | $v_ac |
| supervision memory (PSS): (a) ≤ 1/5 of (c) | ${mem_ac}× | $v_mem |
| \`docker stop\` → exited: (d) ≤ 0.5 × (c) | ${stop_dc}× | $v_dc |
| \`docker stop\` → exited: (d) ≤ 1/10 of (b) | ${stop_db}× | $v_db |
| \`docker stop\` → exited: (e) ≤ 1500 ms in every run, its 1 s handler included | ${stop_e} ms (worst ${stop_e_max}) | $v_e |
| (d) and (e): every service's TERM handler completed in every run | ${CLEAN[fast]} + ${CLEAN[fg]} | $v_clean |
| boot under \`--init\`: (h) ≤ 1.1 × (g) | ${boot_hg}× | $v_hg_boot |
| \`docker stop\` → exited under \`--init\`: (h) ≤ 1.1 × (g) | ${stop_hg}× | $v_hg_stop |

The floor under the stop targets: (f), s6-overlay stopping with no final
grace and nothing of svkit, takes $(ms "${STOP[s6fast]}") ms, ${stop_fc}× (c). Half of
(c) leaves svkit ${stop_room} ms above it to stop every slot with its own
signal and timeout and have each logger write its last lines; (d) takes
${stop_svkit} ms more than (f). (f)'s services ended by their handler ${CLEAN[s6fast]}
times out of ${s6fast_total}: TERM and KILL come at once, so only a handler
that ends at once can finish.

Where the boot goes (median ms of each step over the same runs, so the
steps need not add up to the total): the engine's part, up to the
container's start (\`State.StartedAt\`, stamped once the engine has
started PID 1, which may already have run a little: hence the floor's
figure near zero or below), then inside the container; for (a) and (b),
the steps s6-overlay stamps in \`docker logs -t\`.

$header
$align
$(row "\`docker run\` → container started (engine)" engine_cell)
$(row "container started → all three services up" inside_cell)
$(row "… → s6-overlay's \`legacy-cont-init\` starts" stage1_cell)
$(row "… \`cont-init.d\` ((a): \`svkit-reconcile\`; (b): none)" continit_cell)
$(row "… \`legacy-services\` ((b): \`services-up\` copies \`services.d\`)" legacy_cell)
$(row "… → all three up, after \`legacy-services\`" rest_cell)

What the supervision is made of (the last run of each; PSS KiB by process
name, the services last):

- ${LABEL[svkit]}: $(profile svkit)
- ${LABEL[s6]}: $(profile s6)
- ${LABEL[supervisord]}: $(profile supervisord)
- ${LABEL[floor]}: $(profile floor)

Why the figures are what they are:

- **Boot.** (a) and (b) go through the same s6-overlay stages and differ
  in one step each: (a)'s \`cont-init.d\` hook runs \`svkit-reconcile\`,
  which reads the config, looks the user up and writes the three slots
  (run, finish, logger) into \`/run/service\` ($(continit_cell svkit) ms here); (b)'s
  \`legacy-services\` step has s6-overlay's \`services-up\` copy each
  \`/etc/services.d\` dir there ($(legacy_cell s6) ms). (a)'s run scripts also
  start with \`with-contenv\` (every slot gets the container's
  environment; (b)'s, like s6-overlay's README examples, do without). The
  engine's part, before PID 1 runs, is most of every figure and what
  varies most from run to run on this shared machine.$volume_note
  (c) starts a Python interpreter and loads supervisord before its first
  spawn. The floor is what \`docker run\` and the three apps cost with no
  supervision at all: the supervision's own share of boot is the
  difference.
- **Stop.** Both s6-overlay images exit about $grace_a and $grace_b ms after
  their services ended: that is \`S6_KILL_GRACETIME\` (3000 ms by default).
  After the services are down, $linit's
  \`s6-linux-init-shutdownd\` sends TERM to whatever is left and then
  sleeps out the whole grace time before KILL, whether anything is left
  or not. It is the same in (a) and (b). (d) sets it to 0, as the
  shipped image does: svkit's stop hook has already stopped every slot
  (and (e)'s foreground CMD) with its own signal and timeout, then the
  slots' loggers once they had read everything (each s6-log syncs its
  file to disk as it exits), and has sent strays TERM and waited only
  while one ran, so nothing is left that needs a grace ($grace_d ms from
  the services' end to \`docker stop\`'s return here: the hook's end,
  s6-overlay's stage 4, and the engine's part once PID 1 is gone).
  supervisord stops its programs itself and exits once they are gone.
- **svkit-init.** (g) runs the shipped entrypoint as PID 1: it execs
  \`/init svkit-wrap -- sleep infinity\` at once, so (g) is (d) with a
  foreground CMD. (h) is the same container under \`docker run --init\`:
  tini is PID 1, \`/init\` cannot run, and svkit-init starts s6-svscan,
  runs the cont-init hook and the CMD itself, with no s6-rc and no
  s6-linux-init stages (so no stage stamps: "–" above); at \`docker
  stop\` it runs the same stop hook, then stops the tree, and sends TERM
  and KILL only to what is left (nothing, here).
- **Memory.** s6's supervision is small static C programs: one
  \`s6-supervise\` per service, per logger and per s6-overlay internal
  service, one \`s6-log\` per log, \`s6-svscan\` as PID 1. svkit adds
  one process that stays, its log watcher (\`svkit log-watch\`, under its
  own \`s6-supervise\`; \`svkit-reconcile\` exits once the slots are
  made): that is the difference between (a) and (b) (${PSS[svkit]} and
  ${PSS[s6]} KiB).
  (c) is one Python process that also does the logging: the interpreter and supervisord's modules,
  ${ANON[supervisord]} KiB of it anonymous (heap).
- **Image.** (a) is $size_ab MB larger than (b): svkit's binaries
  as the shipped Dockerfile installs them, the demo app's rootfs
  files and its user. (c) adds Python to the base.
MD
