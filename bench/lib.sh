# shellcheck shell=bash
# Shared by the bench scripts. Sourced, never run. Those that time things
# inside the sandbox (apply.sh, wrap.sh) copy themselves and this file into
# the sandbox and source it on both sides; those on the real Docker engine
# (boot.sh, scale.sh) use its host half.

BENCH_DIR=/usr/local/lib/svkit-bench
prog=${0##*/}

# --------------------------------------------------------- both sides --

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
minimum() { sort -n | head -n 1; }
maximum() { sort -n | tail -n 1; }

# ------------------------------------------------------------- inside --

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

# wait_for WHAT TRIES CMD...: polls CMD every 10 ms, bounded.
wait_for() {
  local what=$1 tries=$2
  shift 2
  until "$@"; do
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then
      echo "$prog: timed out waiting for $what" >&2
      exit 111
    fi
    sleep 0.01
  done
}

# --------------------------------------------------------------- host --

# host_ready HEADING BIN... -- TOOL...: to the repo root, $REL set and the
# BINs built; when not root or a TOOL is missing, prints HEADING's section
# saying why it was not measured, and exits 0.
host_ready() {
  local heading=$1 built=1 why=
  shift
  cd "$(dirname "$0")/.." || exit 111
  # .cargo/config.toml builds for the host tuple, named: target/TUPLE/.
  REL=target/$(rustc --print host-tuple)/release
  while [ "$1" != -- ]; do
    [ -x "$REL/$1" ] || built=0
    shift
  done
  shift
  [ "$built" = 1 ] || { cargo build --release --workspace >&2 && dist/link-tools.sh "$REL"; }
  [ "$(id -u)" -eq 0 ] || why="the sandbox needs root"
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || why=${why:-"$t missing (apt-get install -y s6 execline util-linux python3)"}
  done
  [ -z "$why" ] && return 0
  printf '## %s\n\nNot measured on this machine: %s.\n' "$heading" "$why"
  exit 0
}

# in_sandbox LAYER... -- ARGS...: boots a sandbox of the --rootfs LAYERs
# plus this script and this file, and runs `SCRIPT --inside ARGS` in it;
# its stdout is left in $tmp/out. The sandbox and $tmp go when the script
# exits. Needs $REL (the dir of the built binaries).
in_sandbox() {
  tmp=$(mktemp -d)
  export SVKIT_SANDBOX_DIR="$tmp/reg"
  mkdir -p "$SVKIT_SANDBOX_DIR" "$tmp/rootfs$BENCH_DIR"
  cp "$0" "$tmp/rootfs$BENCH_DIR/$prog"
  cp "$(dirname "$0")/lib.sh" "$(dirname "$0")"/*.c "$tmp/rootfs$BENCH_DIR/"
  chmod 0755 "$tmp/rootfs$BENCH_DIR/$prog"
  id=
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  local layers=()
  while [ "$1" != -- ]; do
    layers+=(--rootfs "$1")
    shift
  done
  shift
  id=$("$REL/svkit-sandbox" run --detach "${layers[@]}" --rootfs "$tmp/rootfs")
  "$REL/svkit-sandbox" exec "$id" -- "$BENCH_DIR/$prog" --inside "$@" >"$tmp/out"
}

bench_cleanup() {
  if [ -n "${id:-}" ]; then
    "$REL/svkit-sandbox" stop "$id" >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}

# field NAME: every NAME=value the inside half printed, one a line.
field() {
  awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$tmp/out"
}

# ------------------------------------------------- host, Docker engine --
# For the scripts that run containers on the real engine (boot.sh,
# scale.sh): each defines skip WHY (prints its section saying why it was
# not measured, exits 0) and fail WHAT before using these.

# engine_ready: a Docker engine answers (`tests/docker/engine.sh up`
# starts a dockerd only when none answers, and records it in its pid
# file); else skips. Sets started_engine=1 when this call started it:
# engine_release then stops it (`engine.sh down`); any other engine is
# left alone.
engine_ready() {
  local pidfile=/run/svkit-test-dockerd.pid before after up_log why
  before=$(cat "$pidfile" 2>/dev/null || true)
  if ! up_log=$(tests/docker/engine.sh up 2>&1); then
    why=$(printf '%s\n' "$up_log" | tail -n 1)
    skip "no Docker engine answers, and none could be started (\`tests/docker/engine.sh up\`: ${why:-no output})"
  fi
  after=$(cat "$pidfile" 2>/dev/null || true)
  started_engine=0
  if [ -n "$after" ] && [ "$after" != "$before" ]; then started_engine=1; fi
}
engine_release() {
  if [ "${started_engine:-0}" = 1 ]; then
    tests/docker/engine.sh down >&2 || true
  fi
}

# tick [SECONDS]: a wait (5 ms by default) without a fork: a read that
# times out on a pipe nobody writes to.
tick() {
  [ -n "${tick_fd:-}" ] || exec {tick_fd}<> <(:)
  read -r -t "${1:-0.005}" -u "$tick_fd" _ || true
}

# procs_of NAME: the cgroup.procs file of container NAME (its pids).
procs_of() {
  local pid cg
  pid=$("$DOCKER" inspect -f '{{.State.Pid}}' "$1")
  cg=$(awk -F: '$1 == "0" && $2 == "" { print "/sys/fs/cgroup" $3; exit }
    $2 ~ /(^|,)pids(,|$)/ { print "/sys/fs/cgroup/pids" $3; exit }' "/proc/$pid/cgroup")
  [ -r "$cg/cgroup.procs" ] || fail "no cgroup.procs for container $1 (pid $pid, cgroup '$cg')"
  echo "$cg/cgroup.procs"
}

# settled_pids NAME WHAT: the pids of container NAME, one line, once its
# process set is the same over 5 reads 100 ms apart (s6-overlay's stage 2
# ends after the services start); fails after 10 s (WHAT names it).
settled_pids() {
  local procs pids last='' same=0 tries=0
  procs=$(procs_of "$1")
  while [ "$same" -lt 5 ]; do
    pids=$(sort -n "$procs" | tr '\n' ' ')
    if [ "$pids" = "$last" ]; then same=$((same + 1)); else same=1; last=$pids; fi
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || fail "$2: its processes did not settle within 10 s"
    tick 0.1
  done
  echo "$pids"
}

# stages NAME STARTED: from the container's `docker logs -t`, when
# s6-overlay's stage 2 began its cont-init.d step, ended it, and had
# started the legacy services, in us after STARTED (its RFC 3339 start
# time); "- - -" without s6-overlay.
stages() {
  "$DOCKER" logs -t "$1" 2>&1 | awk -v started="$2" '
    function us(iso,   t, h) {
      t = substr(iso, index(iso, "T") + 1); sub(/Z$/, "", t); split(t, h, ":")
      return (h[1] * 3600 + h[2] * 60 + h[3]) * 1000000
    }
    function rel(iso,   d) {
      d = us(iso) - us(started)
      if (d < -43200e6) d += 86400e6   # past midnight
      return sprintf("%.0f", d)
    }
    /s6-rc: info: service legacy-cont-init: starting/ { c0 = rel($1) }
    /s6-rc: info: service legacy-cont-init successfully started/ { c1 = rel($1) }
    /s6-rc: info: service legacy-services successfully started/ { l1 = rel($1) }
    END { if (c0 == "" || c1 == "" || l1 == "") print "- - -"; else print c0, c1, l1 }'
}

# supervision_memory CPSS PROGRAM PROFILE PID...: the PSS of each pid (CPSS,
# bench/cpss.c compiled) and its anonymous part, one "comm kib anon" line a
# process into PROFILE. Processes named PROGRAM are the services, not the
# supervision: counted in SM_PROGS; every other one is summed into SM_PSS,
# SM_ANON (KiB) and SM_NPROC. A process gone meanwhile is skipped.
supervision_memory() {
  local cpss=$1 program=$2 profile=$3 p kib comm k val _u panon
  shift 3
  SM_PSS=0 SM_ANON=0 SM_NPROC=0 SM_PROGS=0
  : >"$profile"
  while read -r p kib; do
    { read -r comm <"/proc/$p/comm"; } 2>/dev/null || continue
    panon=0
    while read -r k val _u; do
      if [ "$k" = Pss_Anon: ]; then panon=$val; fi
    done 2>/dev/null <"/proc/$p/smaps_rollup" || continue
    echo "$comm $kib $panon" >>"$profile"
    if [ "$comm" = "$program" ]; then
      SM_PROGS=$((SM_PROGS + 1))
    else
      SM_PSS=$((SM_PSS + kib)) SM_ANON=$((SM_ANON + panon)) SM_NPROC=$((SM_NPROC + 1))
    fi
  done < <("$cpss" "$@")
}
