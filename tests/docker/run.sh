#!/bin/sh
# awk programs and the in-container shell snippets are single-quoted on
# purpose: their `$` belong to awk or to the container's sh.
# shellcheck disable=SC2016
#
# The reference scenarios (shared/seeds/*) against a real Docker engine and
# the real Dockerfile: build the demo image, then run one container per
# scenario and check what the seeds check, through `docker exec`, `docker
# logs` and `docker inspect` only.
#
#   tests/docker/engine.sh up && tests/docker/run.sh
#                                    build the image, run every scenario
#   tests/docker/run.sh redirect     run only the scenarios named
#
# The image is the shipped Dockerfile built through its offline path
# (`tests/docker/engine.sh image TAG`: s6-overlay built from source and
# checked against its own SHA256SUMS, binaries built on this host, `--target
# prebuilt`), since no registry is reachable here. Containers run with
# `--network none` (the engine has no bridge network).
#
# Environment:
#   SVKIT_TEST_IMAGE      image tag to build and test (default svkit-demo:test);
#                         the scratch scenario builds NAME-scratch:test beside it
#   SVKIT_TEST_NO_BUILD   set to 1 to test an image built beforehand
#   SVKIT_TEST_KEEP_IMAGE set to 1 to keep the image this run built (it is
#                         removed at the end otherwise; an image given with
#                         SVKIT_TEST_NO_BUILD=1 is never removed)
#   SVKIT_TEST_DEADLINE   seconds to wait for a container to get somewhere (60)
#   SVKIT_NO_SKIP         set to 1 (`make test` as root, so CI) to fail, not
#                         skip, when no Docker engine answers
#   SVKIT_SKIP_LOG        a file a skip is recorded in (`make test` counts it)
#
# When no Docker engine answers: a SKIP line and exit 0, or a FAIL line and
# exit 1 with SVKIT_NO_SKIP=1. Otherwise it ends with the line
# `N passed, M failed` (one count per scenario; a failed image build, or no
# engine with SVKIT_NO_SKIP=1, is one failure) and exits 0 when every
# scenario passed, 1 otherwise. Containers are named
# svkit-test-PID-SCENARIO and removed on exit (with their anonymous
# volumes), whatever happens.
#
# The image has no ps (debian:bookworm-slim): processes are read from /proc
# inside the container. Every `docker exec` runs as the image's runtime user
# `app`, like the reference harness, except where root is needed (signals to
# other users' processes). Root in a container has Docker's default
# capabilities, without CAP_SYS_PTRACE: it cannot read another user's
# /proc/PID/environ, so the app's environ is read as `app`.

set -u

ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
IMAGE=${SVKIT_TEST_IMAGE:-svkit-demo:test}
DEADLINE=${SVKIT_TEST_DEADLINE:-60}
PREFIX="svkit-test-$$"

if ! info=$(docker info 2>&1 >/dev/null); then
  if [ "${SVKIT_NO_SKIP:-0}" = 1 ]; then
    echo "FAIL: no Docker engine answers (docker info failed), and SVKIT_NO_SKIP=1:"
    printf '%s\n' "$info" | tail -n 5 | sed 's/^/    /'
    echo "    start one with: tests/docker/engine.sh up"
    echo "failed: docker-engine"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "SKIP: no Docker engine answers (docker info failed; tests/docker/engine.sh up starts one)"
  if [ -n "${SVKIT_SKIP_LOG:-}" ]; then
    echo "tests/docker/run.sh: no Docker engine answers" >> "$SVKIT_SKIP_LOG"
  fi
  exit 0
fi

SCRATCH_IMAGE=${IMAGE%%:*}-scratch:test
BUILT=0
SCRATCH_BUILT=0
PLAIN_BUILT=0
cleanup() {
  ids=$(docker ps -aq --filter "name=^/${PREFIX}-" 2>/dev/null)
  if [ -n "$ids" ]; then
    # -v: their anonymous /data volumes too.
    # shellcheck disable=SC2086 # one word per container id
    docker rm -f -v $ids >/dev/null 2>&1
  fi
  vols=$(docker volume ls -q 2>/dev/null | grep "^${PREFIX}-")
  if [ -n "$vols" ]; then
    # shellcheck disable=SC2086 # one word per volume
    docker volume rm $vols >/dev/null 2>&1
  fi
  if [ "$BUILT" = 1 ] && [ "${SVKIT_TEST_KEEP_IMAGE:-0}" != 1 ]; then
    docker rmi "$IMAGE" >/dev/null 2>&1 || say "note: could not remove the image $IMAGE"
  fi
  if [ "$PLAIN_BUILT" = 1 ] && [ "${SVKIT_TEST_KEEP_IMAGE:-0}" != 1 ]; then
    docker rmi "${IMAGE%%:*}-plain:test" >/dev/null 2>&1 || say "note: could not remove the image ${IMAGE%%:*}-plain:test"
  fi
  if [ "$SCRATCH_BUILT" = 1 ] && [ "${SVKIT_TEST_KEEP_IMAGE:-0}" != 1 ]; then
    docker rmi "$SCRATCH_IMAGE" >/dev/null 2>&1 || say "note: could not remove the image $SCRATCH_IMAGE"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- helpers

say() { printf '%s\n' "$*"; }
err() { printf '    %s\n' "$*" >&2; }

# start NAME [docker run options...] IMAGE-ARGS are given after `--`:
#   start redirect -- gateway run
#   start optout -e APP_GATEWAY_NO_SUPERVISE=1 -- gateway run
# Prints the container name.
start() {
  _name="${PREFIX}-$1"
  shift
  _opts=""
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    _opts="$_opts $(quote "$1")"
    shift
  done
  [ "$#" -gt 0 ] && shift
  _args=""
  for _a in "$@"; do _args="$_args $(quote "$_a")"; done
  eval "docker run -d --network none --name \"\$_name\" $_opts \"\$IMAGE\" $_args" >/dev/null || return 1
  printf '%s\n' "$_name"
}

# quote WORD: WORD single-quoted for eval.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

as_app() { _c=$1; shift; docker exec -u app "$_c" "$@"; }
as_root() { _c=$1; shift; docker exec -u 0 "$_c" "$@"; }

logs() { docker logs "$1" 2>&1; }
state() { docker inspect -f '{{.State.Status}}' "$1" 2>/dev/null; }

# Every process of the container, one line each: PID PPID ARGS...
# (ARGS is the command line with NULs as spaces; kernel threads have none.)
PROCS='for d in /proc/[0-9]*; do
  s=$(cat "$d/stat" 2>/dev/null) || continue
  set -- ${s##*) }
  a=$(tr "\0" " " < "$d/cmdline" 2>/dev/null)
  echo "${d#/proc/} $2 $a"
done'
procs() { docker exec -u 0 "$1" sh -c "$PROCS" 2>/dev/null; }

# pids_matching C AWK-CONDITION: pids of the processes whose line matches.
# In the condition, $1 is the pid, $2 the ppid, $3 argv[0], $0 the line.
pids_matching() { procs "$1" | awk "$2 { print \$1 }"; }
count_matching() { pids_matching "$1" "$2" | wc -l | tr -d ' '; }

# argv0 PID C: the process's argv[0].
argv0() { procs "$2" | awk -v p="$1" '$1 == p { print $3 }'; }

# until_true SECONDS CMD...: retry CMD every half second until it succeeds.
until_true() {
  _end=$(($(date +%s) + $1))
  shift
  while :; do
    "$@" && return 0
    [ "$(date +%s)" -ge "$_end" ] && return 1
    sleep 0.5
  done
}

logs_have() { logs "$1" | grep -qF -- "$2"; }
# The line 50-svkit-stop prints when it stopped every slot (s6-overlay's
# own "running /etc/cont-finish.d/50-svkit-stop" proves only that it began).
STOP_HOOK_DONE="50-svkit-stop: info: every svkit slot is down"
wait_logs() {
  if until_true "$DEADLINE" logs_have "$1" "$2"; then return 0; fi
  err "no '$2' in docker logs of $1 after ${DEADLINE}s; last lines:"
  logs "$1" | tail -n 30 | sed 's/^/      | /' >&2
  return 1
}

# svstat C SLOT FIELDS: `s6-svstat -o FIELDS` of the slot, as app. The -o
# fields are stable across s6 versions (the human line is not). Fails,
# saying why on stderr, when s6-svstat fails (no supervisor, no slot).
# SCANDIR: where the container's slots are (svkit-init picks /tmp/svkit
# when /run is not writable).
SCANDIR=/run/service
svstat() {
  if ! _o=$(as_app "$1" s6-svstat -o "$3" "$SCANDIR/$2" 2>&1); then
    err "s6-svstat -o $3 $SCANDIR/$2 failed: $_o"
    return 1
  fi
  printf '%s\n' "$_o"
}
# wants_up C SLOT: s6's desired state of the slot is up (for polling: an
# s6-svstat error is just "not yet").
wants_up() { [ "$(svstat "$1" "$2" wantedup 2>/dev/null)" = true ]; }
is_up() { [ "$(svstat "$1" "$2" up 2>/dev/null)" = true ]; }
# not_wanted_up C SLOT: s6 answers, and says the slot is NOT wanted up. An
# s6-svstat error is a failure here, never a pass.
not_wanted_up() {
  _w=$(svstat "$1" "$2" wantedup) || return 1
  case $_w in
    false) return 0 ;;
    true) err "$2 is wanted up"; return 1 ;;
    *) err "s6-svstat -o wantedup $SCANDIR/$2 said '$_w'"; return 1 ;;
  esac
}
slot_exists() { as_app "$1" test -d "$SCANDIR/$2/supervise"; }

running() { [ "$(state "$1")" = running ]; }
exited() { [ "$(state "$1")" = exited ]; }
health() { docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$1" 2>/dev/null; }
healthy() { [ "$(health "$1")" = healthy ]; }
unhealthy() { [ "$(health "$1")" = unhealthy ]; }
# gone C PID: no such process in the container.
gone() { [ -z "$(procs "$1" | awk -v p="$2" '$1 == p')" ]; }
# kill9 C PID: the image has no kill binary (procps); use sh's builtin.
kill9() { docker exec -u 0 "$1" sh -c 'kill -9 "$1"' sh "$2"; }

# The awk conditions for the demo app's processes.
GATEWAY_DEFAULT='$3 ~ /(^|\/)app$/ && / gateway run/'
WRAP='$3 ~ /(^|\/)svkit-wrap$/'
# The keep-alive a redirect leaves: svkit-wrap exec'd s6-overlay's s6-pause.
KEEPALIVE='$3 ~ /(^|\/)s6-pause$/'

# one_keepalive C: exactly one keep-alive, and svkit-wrap itself gone.
one_keepalive() { [ "$(count_matching "$1" "$KEEPALIVE")" = 1 ] && [ "$(count_matching "$1" "$WRAP")" = 0 ]; }

# supervised_by_s6 C PID: the process's parent is s6-supervise.
supervised_by_s6() {
  _pp=$(procs "$1" | awk -v p="$2" '$1 == p { print $2 }')
  [ -n "$_pp" ] && case $(argv0 "$_pp" "$1") in *s6-supervise) true ;; *) false ;; esac
}

one_supervised_gateway() {
  [ "$(count_matching "$1" "$GATEWAY_DEFAULT")" = 1 ] || return 1
  supervised_by_s6 "$1" "$(pids_matching "$1" "$GATEWAY_DEFAULT")"
}

# Foreground gateway up (the CMD itself), or the container exited: the
# reference harness's _wait_for_gateway_or_exit. Prints running|exited;
# fails when neither happened before the deadline.
fg_or_exit() {
  _end=$(($(date +%s) + DEADLINE))
  while :; do
    _s=$(state "$1")
    if [ "$_s" = exited ]; then echo exited; return 0; fi
    if [ "$_s" = running ] && [ "$(count_matching "$1" "$GATEWAY_DEFAULT")" -ge 1 ]; then
      echo running
      return 0
    fi
    [ "$(date +%s)" -ge "$_end" ] && { echo "$_s"; return 1; }
    sleep 0.5
  done
}

uid_of() { as_root "$1" awk '/^Uid:/ { print $2 }' "/proc/$2/status"; }
# environ_of C PID: the process's environment, one variable a line. Read as
# app (the process's own user): root lacks CAP_SYS_PTRACE in a container.
environ_of() { as_app "$1" sh -c 'tr "\0" "\n" < "/proc/$1/environ"' sh "$2"; }
exit_code() { docker inspect -f '{{.State.ExitCode}}' "$1" 2>/dev/null; }
restarted() { [ "$(docker inspect -f '{{.RestartCount}}' "$1" 2>/dev/null)" -ge 1 ]; }
tail_logs() { logs "$1" | tail -n "${2:-20}" | sed 's/^/      | /' >&2; }
# build_image KIND TAG: tests/docker/engine.sh KIND TAG (scratch-image,
# plain-image), its log shown only when it fails.
build_image() {
  say "    building $2 (tests/docker/engine.sh $1)"
  "$ROOT/tests/docker/engine.sh" "$1" "$2" >/dev/null 2>"$ROOT/dist/.$1.log" ||
    { err "tests/docker/engine.sh $1 failed:"; tail -n 20 "$ROOT/dist/.$1.log" >&2; return 1; }
  rm -f "$ROOT/dist/.$1.log"
}

# ---------------------------------------------------------------- scenarios

# seeds: test_gateway_run_redirects_to_supervised,
#        test_supervised_gateway_stdout_reaches_docker_logs
s_redirect() {
  c=$(start redirect -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  l=$(logs "$c")
  for hint in --no-supervise APP_GATEWAY_NO_SUPERVISE=1; do
    case $l in *"$hint"*) ;; *) err "breadcrumb does not name the opt-out $hint"; return 1 ;; esac
  done
  running "$c" || { err "container exited after the redirect: $(state "$c")"; return 1; }
  until_true 30 wants_up "$c" gateway-default || { err "gateway-default is not wanted up"; return 1; }
  # The s6 tools are on the image's PATH (/command first) for a plain
  # `docker exec`, as root, without the symlinks-arch tarball's /usr/bin links.
  out=$(docker exec "$c" s6-svstat /run/service/gateway-default 2>&1) ||
    { err "docker exec $c s6-svstat /run/service/gateway-default failed: $out"; return 1; }
  case $out in up*) ;; *) err "s6-svstat says: $out"; return 1 ;; esac
  # The CMD (its pid unchanged) is the keep-alive svkit-wrap exec'd,
  # s6-overlay's s6-pause: no `sleep`, no child, small.
  until_true 10 one_keepalive "$c" || { err "expected one keep-alive (s6-pause) and no svkit-wrap:"; procs "$c" >&2; return 1; }
  wrap=$(pids_matching "$c" "$KEEPALIVE")
  kids=$(procs "$c" | awk -v p="$wrap" '$2 == p' | wc -l | tr -d ' ')
  [ "$kids" = 0 ] || { err "the keep-alive (pid $wrap) has $kids children"; procs "$c" >&2; return 1; }
  [ "$(count_matching "$c" '$3 ~ /(^|\/)sleep$/')" = 0 ] || { err "a sleep process runs"; return 1; }
  # Under 2 MB while waiting. Judged on its private memory
  # (RssAnon); VmRSS also counts the file-backed pages of the binary and
  # libc that every process maps, and is printed for the record.
  mem=$(as_root "$c" awk '/^(VmRSS|RssAnon):/ { sub(":", "", $1); printf "%s=%s ", $1, $2 }' "/proc/$wrap/status")
  priv=$(as_root "$c" awk '/^Private_(Clean|Dirty):/ { k += $2 } END { print k }' "/proc/$wrap/smaps_rollup")
  say "    keep-alive memory (kB): $mem Private=$priv"
  [ "${priv:-99999}" -le 256 ] || { err "the keep-alive holds ${priv} kB of private memory (issue 16: at most 256)"; return 1; }
  anon=$(printf '%s\n' "$mem" | sed -n 's/.*RssAnon=\([0-9]*\).*/\1/p')
  [ "${anon:-99999}" -lt 2048 ] || { err "the keep-alive holds ${anon} kB of anonymous memory (SPEC: under 2 MB)"; return 1; }
  # The gateway runs under s6-supervise, as app.
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  [ "$(uid_of "$c" "$gw")" = "$(as_app "$c" id -u)" ] || { err "the gateway does not run as app"; return 1; }
  # stdout reaches docker logs (s6-log's `1` directive) and the rotated file.
  wait_logs "$c" "slot gateway-default" || return 1
  until_true 10 as_app "$c" grep -qF "⚕ gateway default up" /data/logs/gateways/default/current ||
    { err "banner missing from /data/logs/gateways/default/current"; return 1; }
  # Without APP_DASHBOARD the dashboard stays down.
  not_wanted_up "$c" dashboard || { err "dashboard: not down as wanted without APP_DASHBOARD"; return 1; }
  # The health check's command: every slot in its wanted state.
  until_true 30 as_app "$c" svctl status >/dev/null || { err "svctl status did not exit 0:"; as_app "$c" svctl status >&2; return 1; }
}

# seeds: test_gateway_run_no_supervise_flag_preserves_legacy_behavior and
# test_gateway_run_no_supervise_env_var: no breadcrumb, the gateway is the
# CMD (no svkit-wrap left, not under s6-supervise, run as app, the flag
# removed), the slot exists but is not wanted up.
check_foreground() {
  c=$1
  st=$(fg_or_exit "$c") || { err "neither a foreground gateway nor an exit after ${DEADLINE}s ($st)"; return 1; }
  if logs_have "$c" "s6 supervision"; then
    err "opted out, yet the redirect breadcrumb is in docker logs:"
    tail_logs "$c"
    return 1
  fi
  # The foreground gateway serves until stopped: an exit is a failure.
  if [ "$st" != running ]; then
    err "the container exited (code $(exit_code "$c")) instead of running the gateway in the foreground:"
    tail_logs "$c"
    return 1
  fi
  [ "$(count_matching "$c" "$WRAP")" = 0 ] || { err "svkit-wrap is still there (it should have exec'd the gateway)"; return 1; }
  [ "$(count_matching "$c" "$KEEPALIVE")" = 0 ] || { err "a keep-alive runs beside a foreground gateway"; return 1; }
  [ "$(count_matching "$c" "$GATEWAY_DEFAULT")" = 1 ] || { err "expected one gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  if supervised_by_s6 "$c" "$gw"; then err "the gateway runs under s6-supervise"; return 1; fi
  if procs "$c" | awk -v p="$gw" '$1 == p' | grep -qF -- --no-supervise; then
    err "--no-supervise reached the gateway's argv"
    return 1
  fi
  [ "$(uid_of "$c" "$gw")" = "$(as_app "$c" id -u)" ] || { err "the foreground gateway does not run as app"; return 1; }
  until_true 10 slot_exists "$c" gateway-default || { err "reconcile did not create gateway-default"; return 1; }
  not_wanted_up "$c" gateway-default || { err "gateway-default: not down as wanted despite the opt-out"; return 1; }
}

s_no_supervise_flag() {
  c=$(start noflag -- gateway run --no-supervise) || return 1
  check_foreground "$c"
}

s_no_supervise_env() {
  c=$(start noenv -e APP_GATEWAY_NO_SUPERVISE=1 -- gateway run) || return 1
  check_foreground "$c"
}

# Foreground means the CMD's exit code is the container's: a bad config
# exits 78 (EX_CONFIG).
s_foreground_exit_code() {
  c=$(start fgexit -e APP_CONFIG_BAD=1 -- gateway run --no-supervise) || return 1
  until_true "$DEADLINE" exited "$c" || { err "still $(state "$c")"; return 1; }
  code=$(docker inspect -f '{{.State.ExitCode}}' "$c")
  [ "$code" = 78 ] || { err "container exit code $code, want 78"; tail_logs "$c"; return 1; }
}

# seed: test_supervised_gateway_does_not_recurse: the sentinel keeps the
# supervised gateway from redirecting again. One gateway, stable (no
# respawn loop), carrying APP_SUPERVISED_CHILD; one svkit-wrap.
#
# Stable is what s6 itself measured, not a guess from a pause: the slot's
# process has been up STABLE_S seconds in a row with the same pid
# (s6-svstat's updownfor; s6-supervise waits >= 1 s between spawns, so a
# respawn loop can never show that), and its supervisor's death tally
# (s6-svdt) is empty: it never died since the supervisor started.
STABLE_S=5
# stable_since C SLOT PID: the slot is up, as PID, for STABLE_S s or more.
stable_since() {
  _s=$(svstat "$1" "$2" up,pid,updownfor 2>/dev/null) || return 1
  # shellcheck disable=SC2086 # three words: up pid updownfor
  set -- "$3" $_s
  [ "$2" = true ] && [ "$3" = "$1" ] && [ "$4" -ge "$STABLE_S" ] 2>/dev/null
}
s_no_recursion() {
  c=$(start norecurse -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  if ! until_true "$DEADLINE" stable_since "$c" gateway-default "$gw"; then
    err "gateway-default was not up as pid $gw for ${STABLE_S}s in a row (s6-svstat: $(svstat "$c" gateway-default up,pid,updownfor)):"
    tail_logs "$c"
    return 1
  fi
  dt=$(as_app "$c" s6-svdt /run/service/gateway-default 2>&1) || { err "s6-svdt failed: $dt"; return 1; }
  [ -z "$dt" ] || { err "gateway-default died since its supervisor started (s6-svdt): $dt"; return 1; }
  n=$(count_matching "$c" "$GATEWAY_DEFAULT")
  [ "$n" = 1 ] || { err "$n gateway processes (recursion?)"; procs "$c" >&2; return 1; }
  gw2=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  [ "$gw" = "$gw2" ] || { err "the gateway was respawned ($gw -> $gw2): a redirect loop?"; return 1; }
  env=$(environ_of "$c" "$gw") || { err "cannot read /proc/$gw/environ as app"; return 1; }
  printf '%s\n' "$env" | grep -qx 'APP_SUPERVISED_CHILD=gateway-default' ||
    { err "the supervised gateway lacks APP_SUPERVISED_CHILD=gateway-default"; return 1; }
  one_keepalive "$c" || { err "expected exactly one keep-alive"; procs "$c" >&2; return 1; }
  [ "$(logs "$c" | grep -cF "s6 supervision")" = 1 ] || { err "the breadcrumb appeared more than once"; return 1; }
}

# seed: the APP_DASHBOARD=1 test: also_start brings the dashboard up with
# the gateway.
s_dashboard() {
  c=$(start dashboard -e APP_DASHBOARD=1 -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 wants_up "$c" gateway-default || { err "gateway-default is not wanted up"; return 1; }
  until_true 30 wants_up "$c" dashboard || { err "dashboard is not wanted up"; return 1; }
  until_true 30 is_up "$c" dashboard || { err "dashboard is not up"; return 1; }
  d=$(pids_matching "$c" '$3 ~ /(^|\/)app$/ && / dashboard/')
  if [ -z "$d" ] || ! supervised_by_s6 "$c" "$d"; then
    err "no supervised dashboard process"
    procs "$c" >&2
    return 1
  fi
}

# A slot an operator started comes back after `docker restart`
# (desired state persisted under /data/.svkit, on the volume), and the
# cont-finish hook stops slots cleanly without forgetting that.
s_restart_remembers() {
  c=$(start remember -- sleep infinity) || return 1
  until_true 30 slot_exists "$c" gateway-default || { err "reconcile did not create gateway-default"; return 1; }
  not_wanted_up "$c" gateway-default || { err "gateway-default: not down before anyone asked"; return 1; }
  as_app "$c" svctl start gateway-default --wait --timeout 10000 || { err "svctl start failed"; return 1; }
  t0=$(date +%s)
  docker restart -t 30 "$c" >/dev/null || { err "docker restart failed"; return 1; }
  took=$(($(date +%s) - t0))
  [ "$took" -lt 20 ] || { err "restart took ${took}s: shutdown is not bounded"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots:"; tail_logs "$c"; return 1; }
  until_true 30 wants_up "$c" gateway-default || { err "gateway-default not wanted up after docker restart"; return 1; }
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway after docker restart"; return 1; }
}

# Shutdown: `docker stop` runs 50-svkit-stop, slots stop before the
# final TERM/KILL and their loggers flush the last lines. The container
# exits 0 (s6-overlay's default, S6_CMD_RECEIVE_SIGNALS unset: a requested
# stop is a clean stop), and 143 with S6_CMD_RECEIVE_SIGNALS=1 (docs/image.md).
s_clean_stop() {
  c=$(start stop -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway"; return 1; }
  t0=$(date +%s)
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  took=$(($(date +%s) - t0))
  [ "$took" -lt 15 ] || { err "docker stop took ${took}s"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "docker stop: container exit code $code, want 0 (S6_CMD_RECEIVE_SIGNALS unset)"; tail_logs "$c"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots:"; tail_logs "$c"; return 1; }
  logs_have "$c" "⚕ gateway default stopping" || { err "the gateway's last line did not reach docker logs"; return 1; }
  # The volume outlives the container: read the rotated file through a
  # throwaway container on the same volumes.
  docker run --rm --network none --volumes-from "$c" --entrypoint grep "$IMAGE" -qF "⚕ gateway default stopping" /data/logs/gateways/default/current >/dev/null 2>&1 ||
    { err "the gateway's last line is missing from its log file (logger not flushed)"; return 1; }
  # Opting in to the CMD's signal exit code.
  c=$(start stopsig -e S6_CMD_RECEIVE_SIGNALS=1 -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway (S6_CMD_RECEIVE_SIGNALS=1)"; return 1; }
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed (S6_CMD_RECEIVE_SIGNALS=1)"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 143 ] || { err "docker stop with S6_CMD_RECEIVE_SIGNALS=1: exit code $code, want 143"; tail_logs "$c"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots (S6_CMD_RECEIVE_SIGNALS=1):"; tail_logs "$c"; return 1; }
}

# ms since the epoch (GNU date, on the host).
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# `docker stop` of the shipped image in under 1 s: the stop hook stops
# every slot (their TERM handlers' last lines reach docker logs) and the
# image's S6_KILL_GRACETIME=100 leaves no 3 s sleep after it.
s_fast_stop() {
  c=$(start faststop -e APP_DASHBOARD=1 -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway"; return 1; }
  wait_logs "$c" "⚕ dashboard up" || return 1
  stops_fast "$c"
}

# stops_fast C: `docker stop` exits 0 in under 1 s, with the gateway's and
# the dashboard's TERM handlers and the stop hook done.
stops_fast() {
  t0=$(now_ms)
  docker stop -t 30 "$1" >/dev/null || { err "docker stop failed"; return 1; }
  took=$(($(now_ms) - t0))
  say "    docker stop took ${took} ms"
  code=$(exit_code "$1")
  [ "$code" = 0 ] || { err "exit code $code, want 0"; tail_logs "$1"; return 1; }
  for line in "⚕ gateway default stopping" "⚕ dashboard stopping" "$STOP_HOOK_DONE"; do
    logs_have "$1" "$line" || { err "no '$line' in docker logs"; tail_logs "$1" 40; return 1; }
  done
  [ "$took" -lt 1000 ] || { err "docker stop took ${took} ms, want < 1000"; tail_logs "$1"; return 1; }
}

# A foreground CMD (the opt-out) whose TERM handler takes 1 s: the stop hook
# sends it TERM and waits, so the handler completes, and the container
# still exits within 1.5 s, with the command's own exit code (0).
s_slow_foreground_stop() {
  c=$(start slowfg -e APP_STOP_MS=1000 -- gateway run --no-supervise) || return 1
  wait_logs "$c" "⚕ gateway default up" || return 1
  t0=$(now_ms)
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  took=$(($(now_ms) - t0))
  say "    docker stop took ${took} ms"
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "exit code $code, want 0 (the handler's)"; tail_logs "$c"; return 1; }
  logs_have "$c" "⚕ gateway default stopped after 1000 ms" || { err "the handler did not complete"; tail_logs "$c"; return 1; }
  [ "$took" -lt 1500 ] || { err "docker stop took ${took} ms, want < 1500"; tail_logs "$c"; return 1; }
}

# The image's HEALTHCHECK (`svctl status`), with its timing shortened:
# healthy while every slot is in its wanted state, unhealthy when a wanted
# slot failed for good (exit 78 = permanent failure) in a container that
# keeps running (the slot started by an operator, not by a redirect).
s_healthcheck() {
  fast="--health-interval=2s --health-start-period=0s --health-retries=1"
  # shellcheck disable=SC2086 # $fast is several options
  c=$(start healthy $fast -- gateway run) || return 1
  until_true "$DEADLINE" healthy "$c" || { err "not healthy: $(health "$c")"; docker inspect -f '{{json .State.Health}}' "$c" >&2; return 1; }
  # shellcheck disable=SC2086
  c=$(start unhealthy $fast -e APP_CONFIG_BAD=1 -- sleep infinity) || return 1
  until_true "$DEADLINE" running "$c" || { err "not running: $(state "$c")"; return 1; }
  # Once the boot hook made the slot (a start before that would find none).
  until_true "$DEADLINE" as_app "$c" svctl start gateway-default || { err "svctl start gateway-default never worked"; return 1; }
  until_true "$DEADLINE" unhealthy "$c" || { err "not unhealthy with a permanently failed slot: $(health "$c")"; return 1; }
  running "$c" || { err "a slot an operator started is not essential: $(state "$c")"; return 1; }
}

# issue: essential slots. The redirect's slot is essential: when it fails
# for good (exit 78) the container ends with that code, and Docker's
# restart policy takes over.
s_essential() {
  c=$(start essential -e APP_CONFIG_BAD=1 -- gateway run) || return 1
  until_true "$DEADLINE" exited "$c" || { err "the container outlived its essential slot: $(state "$c")"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 78 ] || { err "exit code $code, want the slot's 78"; tail_logs "$c"; return 1; }
  logs_have "$c" "is essential: stopping the container with exit code 78" || { err "no essential message:"; tail_logs "$c"; return 1; }
  c=$(start restarting --restart on-failure:1 -e APP_CONFIG_BAD=1 -- gateway run) || return 1
  until_true "$DEADLINE" restarted "$c" || { err "on-failure did not restart it: $(state "$c")"; return 1; }
}

# A burst on the container's output from every kind of writer at once
# (tests/docker/burst/30-burst.json): the foreground command and a slot
# without a log each print 200,000 lines of 300 bytes, line-buffered (one
# write a line: their own lines are theirs to keep whole), while three
# slots with prefixed loggers print 20,000 each. s6-log makes its stdout
# non-blocking and writes many lines at a time: the container's output
# must stay blocking for the others, and each logger's copy must reach it
# in whole lines (svkit log-stdout). Every line, whole and in order, in
# docker logs and in the files; the command exits 0.
BURST_PAD=$(printf '%0286d' 0 | tr 0 x)
# awk -v pad=PAD -v want="SRC:N ...": every line holding the pad or a
# seq= is `[[SRC] ]SRC seq=NNNNNN PAD` (a prefix on t* sources only), SRC
# one of want's, its seq one more than its last; each SRC ends at N.
BURST_CHECK='
index($0, "xxxxxxxxxx") == 0 && index($0, "seq=") == 0 { next }
{
  n = split($0, w, " "); src = w[n - 2]; ok = 0
  if ((n == 3 || (n == 4 && w[1] == "[" src "]" && src ~ /^t/)) && (src in need) &&
      w[n - 1] ~ /^seq=[0-9][0-9][0-9][0-9][0-9][0-9]$/ && w[n] == pad) {
    rebuilt = src " " w[n - 1] " " pad
    if (n == 4) rebuilt = w[1] " " rebuilt
    ok = rebuilt == $0
  }
  if (!ok) { if (bad++ < 5) print "torn or foreign: " substr($0, 1, 120) "..."; next }
  seq = substr(w[n - 1], 5) + 0
  if (seq != last[src] + 1 && gaps++ < 5) print src ": seq " seq " after " last[src] + 0
  last[src] = seq; count[src]++
}
BEGIN { k = split(want, ws, " "); for (i = 1; i <= k; i++) { split(ws[i], kv, ":"); need[kv[1]] = kv[2] } }
END {
  for (s in need) {
    printf "%s %d of %d", s, count[s], need[s]
    if (count[s] != need[s] || last[s] != need[s]) { printf " (last seq %d)", last[s]; fail = 1 }
    printf "; "
  }
  print bad + 0 " torn, " gaps + 0 " out of order"
  exit fail || bad || gaps
}'
s_output_burst() {
  cfg="$ROOT/tests/docker/burst/30-burst.json"
  # shellcheck disable=SC2016 # expanded by the container's sh
  c=$(start burst -v "$cfg:/etc/svkit/30-burst.json:ro" -- sh -c '
    logs="/data/logs/burst-a/current /data/logs/burst-b/current /data/logs/burst-c/current"
    for f in $logs; do until [ -e "$f" ]; do sleep 0.1; done; done
    touch /tmp/go
    stdbuf -oL seq -f "fg seq=%06g $1" 1 200000 || exit
    for f in $logs; do until tail -n 1 "$f" | grep -q seq=020000; do sleep 0.1; done; done
    until [ -e /tmp/nl-done ]; do sleep 0.1; done' sh "$BURST_PAD") || return 1
  until_true "$DEADLINE" exited "$c" || { err "still $(state "$c")"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "exit code $code, want 0"; tail_logs "$c"; return 1; }
  out=$(docker logs "$c" 2>/dev/null | awk -v pad="$BURST_PAD" -v want="fg:200000 nl:200000 ta:20000 tb:20000 tc:20000" "$BURST_CHECK")
  ok=$?
  say "    docker logs: $(printf '%s\n' "$out" | tail -n 1)"
  [ "$ok" = 0 ] || { printf '%s\n' "$out" | sed 's/^/    /' >&2; return 1; }
  files=$(mktemp -d) || return 1
  docker cp "$c:/data/logs" - | tar -x -C "$files" || { rm -rf "$files"; err "docker cp of /data/logs failed"; return 1; }
  for s in a b c; do
    # The files: `DATE TIME  LINE` (s6-log's T), raw lines (no prefix), never rotated.
    out=$(sed 's/^[-0-9]* [:.0-9]*  *//' "$files/logs/burst-$s/current" | awk -v pad="$BURST_PAD" -v want="t$s:20000" "$BURST_CHECK")
    ok=$?
    say "    burst-$s's file: $out"
    [ "$ok" = 0 ] || { rm -rf "$files"; return 1; }
  done
  rm -rf "$files"
}

# An essential slot's exit code ends that run only: `docker start` of the
# same container (its /run is no tmpfs: it is kept) boots clean, and at
# `docker stop` the foreground command gets its graceful stop again.
# tests/docker/essential-once/30-once.json: a slot that exits 78 the first
# time (a mark on the /data volume), then runs.
count_of() { logs "$1" | grep -cF -- "$2"; }
# at_least C TEXT N: TEXT is in N lines of docker logs, or more.
at_least() { [ "$(count_of "$1" "$2")" -ge "$3" ]; }
s_essential_restart() {
  cfg="$ROOT/tests/docker/essential-once/30-once.json"
  c=$(start essonce -e APP_STOP_MS=500 -v "$cfg:/etc/svkit/30-once.json:ro" -- gateway run --no-supervise) || return 1
  until_true "$DEADLINE" exited "$c" || { err "the container outlived its essential slot: $(state "$c")"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 78 ] || { err "first run: exit code $code, want the slot's 78"; tail_logs "$c"; return 1; }
  decided=$(count_of "$c" "as an essential slot decided")
  handled=$(count_of "$c" "⚕ gateway default stopped after 500 ms")
  docker start "$c" >/dev/null || { err "docker start failed"; return 1; }
  until_true "$DEADLINE" at_least "$c" "⚕ gateway default up" 2 || { err "the second run's gateway never came up"; tail_logs "$c"; return 1; }
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "second run: docker stop gave exit code $code, want 0"; tail_logs "$c" 40; return 1; }
  [ "$(count_of "$c" "as an essential slot decided")" = "$decided" ] ||
    { err "the second run's stop took the first run's exit code for its own:"; tail_logs "$c" 40; return 1; }
  [ "$(count_of "$c" "⚕ gateway default stopped after 500 ms")" = $((handled + 1)) ] ||
    { err "the second run's foreground command did not get its graceful stop:"; tail_logs "$c" 40; return 1; }
}

# issue: lifecycle. tests/docker/lifecycle/20-lifecycle.json as a layer:
# db (ready when its port listens), a migrate oneshot after `db: ready`, web
# after `migrate: completed` start in that order; a hung web (SIGSTOP) is
# restarted by its liveness check; `docker stop` stops web before db.
line_of() { logs "$1" | grep -nF -- "$2" | head -n 1 | cut -d: -f1; }
# pid_changed C SLOT OLD: the slot runs a process other than OLD.
pid_changed() { _p=$(svstat "$1" "$2" pid) && [ "$_p" != "$3" ] && [ "$_p" != -1 ]; }
s_lifecycle() {
  cfg="$ROOT/tests/docker/lifecycle/20-lifecycle.json"
  c=$(start lifecycle -v "$cfg:/etc/svkit/20-lifecycle.json:ro" -- sleep infinity) || return 1
  until_true "$DEADLINE" logs_have "$c" "⚕ web up" || { err "web never started:"; tail_logs "$c"; return 1; }
  db=$(line_of "$c" "⚕ db up"); mig=$(line_of "$c" "⚕ migrate done"); web=$(line_of "$c" "⚕ web up")
  { [ -n "$db" ] && [ -n "$mig" ] && [ "$db" -lt "$mig" ] && [ "$mig" -lt "$web" ]; } ||
    { err "start order db=$db migrate=$mig web=$web, want db < migrate < web"; tail_logs "$c" 40; return 1; }
  logs_have "$c" "svkit: slot web waits for migrate (completed)" || { err "web did not say what it waits for"; return 1; }
  as_app "$c" svctl status >/dev/null || { err "not healthy once started: $(as_app "$c" svctl status 2>&1)"; return 1; }
  old=$(svstat "$c" web pid) || return 1
  as_root "$c" sh -c "kill -STOP $old" || { err "cannot stop web ($old)"; return 1; }
  until_true "$DEADLINE" logs_have "$c" "liveness check of web failed 3 times" || { err "no liveness restart:"; tail_logs "$c"; return 1; }
  until_true "$DEADLINE" pid_changed "$c" web "$old" || { err "web not restarted (pid $old)"; return 1; }
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  ws=$(line_of "$c" "⚕ web stopping"); ds=$(line_of "$c" "⚕ db stopping")
  { [ -n "$ws" ] && [ -n "$ds" ] && [ "$ws" -lt "$ds" ]; } ||
    { err "stop order web=$ws db=$ds, want web before db"; tail_logs "$c" 40; return 1; }
}

# seed: reference-sidecar-lifecycle-tests: a stale sidecar squatting its
# port is reaped (identity-checked), a foreign holder is not, and the sidecar
# never outlives its parent (kill -9 of the parent, or of lifeline itself).
port_held() { as_app "$1" svkit-lifeline --which-port "$2" >/dev/null 2>&1; }
port_free() { ! port_held "$1" "$2"; }
sidecar_pids() { pids_matching "$1" "\$3 ~ /(^|\\/)app\$/ && / sidecar --port $2( |\$)/"; }
no_sidecar() { [ -z "$(sidecar_pids "$1" "$2")" ]; }

s_sidecar() {
  c=$(start sidecar -- sleep infinity) || return 1
  until_true 30 running "$c" || return 1

  # 1. A stale instance squats 18787 (orphaned: its parent is gone).
  docker exec -d -u app "$c" app sidecar --port 18787
  until_true 10 port_held "$c" 18787 || { err "squatter did not listen"; return 1; }
  stale=$(sidecar_pids "$c" 18787)
  # lifeline reaps it and starts ours, bound to a parent shell.
  docker exec -d -u app "$c" sh -c 'svkit-lifeline --port 18787 --match --ready tcp -- app sidecar --port 18787 & wait'
  until_true 15 gone "$c" "$stale" || { err "stale sidecar $stale was not reaped"; return 1; }
  until_true 15 port_held "$c" 18787 || { err "our sidecar did not come up"; return 1; }
  ours=$(sidecar_pids "$c" 18787)
  if [ -z "$ours" ] || [ "$ours" = "$stale" ]; then err "unexpected holder: '$ours'"; return 1; fi
  ll=$(procs "$c" | awk -v p="$ours" '$1 == p { print $2 }')
  case $(argv0 "$ll" "$c") in *svkit-lifeline) ;; *) err "sidecar's parent is not lifeline"; return 1 ;; esac
  parent=$(procs "$c" | awk -v p="$ll" '$1 == p { print $2 }')

  # 2. The parent dies hard: lifeline (PR_SET_PDEATHSIG) stops the sidecar.
  kill9 "$c" "$parent"
  until_true 10 no_sidecar "$c" 18787 || { err "sidecar outlived its parent (kill -9)"; procs "$c" >&2; return 1; }
  until_true 10 port_free "$c" 18787 || { err "port 18787 still held"; return 1; }

  # 3. lifeline itself dies hard: the sidecar (PR_SET_PDEATHSIG) goes too.
  docker exec -d -u app "$c" svkit-lifeline --port 18789 --match -- app sidecar --port 18789
  until_true 10 port_held "$c" 18789 || { err "sidecar on 18789 did not listen"; return 1; }
  s=$(sidecar_pids "$c" 18789)
  ll=$(procs "$c" | awk -v p="$s" '$1 == p { print $2 }')
  kill9 "$c" "$ll"
  until_true 10 no_sidecar "$c" 18789 || { err "sidecar outlived lifeline (kill -9)"; return 1; }

  # 4. A holder that is not a stale instance is named, never killed.
  docker exec -d -u app "$c" app dashboard --port 18788
  until_true 10 port_held "$c" 18788 || { err "foreign holder did not listen"; return 1; }
  foreign=$(pids_matching "$c" '$3 ~ /(^|\/)app$/ && / dashboard --port 18788/')
  out=$(as_app "$c" svkit-lifeline --port 18788 --match -- app sidecar --port 18788 2>&1)
  rc=$?
  [ "$rc" = 101 ] || { err "lifeline exited $rc on a foreign holder, want 101: $out"; return 1; }
  case $out in *"$foreign"*) ;; *) err "lifeline's error does not name pid $foreign: $out"; return 1 ;; esac
  if gone "$c" "$foreign"; then err "the foreign holder was killed"; return 1; fi
}

# Portable: `make dist`'s tarball (static binaries) boots FROM scratch,
# with busybox-static as the only other binary and no libc
# (tests/docker/scratch.Dockerfile), redirects `gateway run` into its slot
# as the user `app` (resolved from /etc/passwd with no NSS config), and
# answers `svctl status`. The same tarball, its sum checked, extracts over
# the Debian image and runs there.
s_scratch() {
  build_image scratch-image "$SCRATCH_IMAGE" || return 1
  SCRATCH_BUILT=1
  tarball=$(cd "$ROOT/dist" && ls svkit-*-x86_64.tar.xz) || { err "no dist/svkit-*-x86_64.tar.xz"; return 1; }
  # Static, every binary the tarball ships (file(1) on the host).
  x=$(mktemp -d)
  tar -C "$x" -xJf "$ROOT/dist/$tarball" || { rm -rf "$x"; err "cannot extract $tarball"; return 1; }
  for b in "$x"/usr/local/bin/*; do
    f=$(file -L "$b")
    case $f in *"statically linked"*) ;; *) rm -rf "$x"; err "not static: $f"; return 1 ;; esac
  done
  rm -rf "$x"
  debian=$IMAGE
  IMAGE=$SCRATCH_IMAGE
  c=$(start scratch -- gateway run)
  IMAGE=$debian
  [ -n "$c" ] || return 1
  as_root "$c" test ! -e /lib/x86_64-linux-gnu/libc.so.6 || { err "the scratch image has a libc"; return 1; }
  wait_logs "$c" "s6 supervision" || return 1
  until_true 30 wants_up "$c" gateway-default || { err "gateway-default is not wanted up"; tail_logs "$c"; return 1; }
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  [ "$(uid_of "$c" "$gw")" = 10001 ] || { err "the gateway does not run as app (uid 10001)"; return 1; }
  until_true 30 as_app "$c" svctl status >/dev/null || { err "svctl status did not exit 0:"; as_app "$c" svctl status >&2; return 1; }
  # The Debian image: sums checked, then extracted over it, at /.
  out=$(docker run --rm --network none -v "$ROOT/dist:/dist:ro" --entrypoint sh "$IMAGE" -c \
    'set -e; cd /dist; sha256sum -c --strict SHA256SUMS; tar -C / -xJf "$1"; svctl --version; svkit-wrap --version' sh "$tarball" 2>&1) ||
    { err "the tarball did not check, extract or run on $IMAGE: $out"; return 1; }
  case $out in *"svctl "*"svkit-wrap "*) ;; *) err "unexpected output on $IMAGE: $out"; return 1 ;; esac
}

# ------------------------------------------- non-root and read-only (docs/kubernetes.md)

# The flags docs/kubernetes.md gives for a read-only root: /run a tmpfs
# that allows exec (Docker's --tmpfs is noexec unless told), and
# S6_READ_ONLY_ROOT=1 for s6-overlay's preinit.
RO_FLAGS="--read-only --tmpfs /run:exec -e S6_READ_ONLY_ROOT=1"
FAST_HEALTH="--health-interval=2s --health-start-period=0s --health-retries=1"

# as_self C CMD...: docker exec as the container's own user (the tree's).
as_self() { _c=$1; shift; docker exec "$_c" "$@"; }

# check_nonroot C UID: the container C, started with --user UID, runs the
# whole redirect story as UID, on a read-only root.
check_nonroot() {
  c=$1
  uid=$2
  wait_logs "$c" "s6 supervision" || return 1
  running "$c" || { err "exited: $(state "$c")"; tail_logs "$c"; return 1; }
  if as_self "$c" sh -c ': > /etc/svkit-ro-probe' 2>/dev/null; then err "the root filesystem is writable"; return 1; fi
  [ "$(uid_of "$c" 1)" = "$uid" ] || { err "s6-svscan (pid 1) does not run as uid $uid"; return 1; }
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  [ "$(uid_of "$c" "$gw")" = "$uid" ] || { err "the gateway runs as uid $(uid_of "$c" "$gw"), not $uid"; return 1; }
  if as_self "$c" grep -q s6-setuidgid /run/service/gateway-default/run; then err "a non-root tree's run script drops privileges"; return 1; fi
  wait_logs "$c" "slot gateway-default" || return 1
  until_true 10 as_self "$c" grep -qF "⚕ gateway default up" /data/logs/gateways/default/current ||
    { err "banner missing from /data/logs/gateways/default/current"; return 1; }
  as_self "$c" svctl logs gateway-default -n 100 | grep -qF "⚕ gateway default up" ||
    { err "svctl logs gateway-default lacks the banner"; return 1; }
  until_true 30 as_self "$c" svctl status >/dev/null || { err "svctl status did not exit 0:"; as_self "$c" svctl status >&2; return 1; }
  until_true "$DEADLINE" healthy "$c" || { err "HEALTHCHECK: $(health "$c")"; docker inspect -f '{{json .State.Health}}' "$c" >&2; return 1; }
  # Steering as the tree's user: remembered state, apply, an instance.
  as_self "$c" svctl stop gateway-default --wait --timeout 10000 || { err "svctl stop failed"; return 1; }
  as_self "$c" svctl start gateway-default --wait --timeout 10000 || { err "svctl start failed"; return 1; }
  [ "$(as_self "$c" cat /data/.svkit/desired/gateway-default)" = up ] || { err "the desired state was not persisted"; return 1; }
  out=$(as_self "$c" svctl apply 2>&1) || { err "svctl apply as uid $uid failed: $out"; return 1; }
  out=$(as_self "$c" svctl register eve 2>&1) || { err "svctl register as uid $uid failed: $out"; return 1; }
  until_true 10 slot_exists "$c" gateway-eve || { err "register made no gateway-eve"; return 1; }
  out=$(as_self "$c" svctl unregister eve 2>&1) || { err "svctl unregister as uid $uid failed: $out"; return 1; }
  # Root changing the tree is refused, naming the tree's user, and
  # changes nothing: s6 still writes its status (svctl status exits 0).
  out=$(as_root "$c" svctl apply 2>&1)
  rc=$?
  [ "$rc" = 111 ] || { err "svctl apply as root exited $rc, want 111: $out"; return 1; }
  case $out in *"runs as uid $uid, not root"*) ;; *) err "root's refusal does not name uid $uid: $out"; return 1 ;; esac
  # Root may stop and start; the state it persists stays the tree's.
  as_root "$c" svctl stop gateway-default --wait --timeout 10000 || { err "svctl stop as root failed"; return 1; }
  out=$(as_self "$c" svctl start gateway-default --wait --timeout 10000 2>&1) ||
    { err "svctl start as uid $uid after root's stop failed: $out"; return 1; }
  until_true 30 as_self "$c" svctl status >/dev/null || { err "svctl status did not exit 0 after root's stop:"; as_self "$c" svctl status >&2; return 1; }
  # docker stop: the cont-finish hook as uid $uid, a clean exit, the last
  # line in the log file.
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "docker stop: exit code $code, want 0"; tail_logs "$c"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots:"; tail_logs "$c"; return 1; }
  docker run --rm --network none --volumes-from "$c" --entrypoint grep "$IMAGE" -qF "⚕ gateway default stopping" /data/logs/gateways/default/current >/dev/null 2>&1 ||
    { err "the gateway's last line is missing from its log file"; return 1; }
}

# docs/kubernetes.md: `--read-only --tmpfs /run:exec -e S6_READ_ONLY_ROOT=1
# --user 10001`; and plain --tmpfs /run (noexec) ends as it says.
s_nonroot() {
  # A noexec /run: svkit-init does not start /init, which would die there
  # (exit 126); on a read-only root nothing else will do: one line that
  # names the fix, exit 1.
  # shellcheck disable=SC2086 # flag lists
  c=$(start noexec --read-only --tmpfs /run -e S6_READ_ONLY_ROOT=1 --user 10001 -- gateway run) || return 1
  until_true "$DEADLINE" exited "$c" || { err "on a noexec /run still $(state "$c")"; return 1; }
  logs_have "$c" "s6-overlay's /init cannot run: /run is mounted noexec" || { err "no word of the noexec /run:"; tail_logs "$c"; return 1; }
  logs_have "$c" "svkit-init: fatal: no directory to run the slots from" || { err "no fatal line:"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 1 ] || { err "on a noexec /run: exit code $code, want 1"; tail_logs "$c"; return 1; }
  # shellcheck disable=SC2086
  c=$(start nonroot $RO_FLAGS $FAST_HEALTH --user 10001 -- gateway run) || return 1
  check_nonroot "$c" 10001
}

# docs/kubernetes.md's hardened Docker line, read from the page and run as
# written (with this run's image): supervised, healthy, stopped cleanly.
s_hardened() {
  line=$(sed -n 's/^docker run -d \(.*--security-opt no-new-privileges.*\) svkit-demo gateway run$/\1/p' "$ROOT/docs/kubernetes.md")
  [ -n "$line" ] || { err "docs/kubernetes.md has no hardened docker run line"; return 1; }
  uid=$(printf '%s\n' "$line" | sed -n 's/.*--user \([0-9]*\).*/\1/p')
  # shellcheck disable=SC2086 # the page's flags, one word each
  c=$(start hardened $line -- gateway run) || return 1
  wait_logs "$c" "no-new-privileges disables its setuid helper: $PORTABLE_LINE" || return 1
  SCANDIR=/tmp/svkit/service
  rc=0
  check_supervised_as "$c" "$uid" || rc=1
  SCANDIR=/run/service
  [ "$rc" = 0 ] || return 1
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "docker stop: exit code $code, want 0"; tail_logs "$c"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots:"; tail_logs "$c"; return 1; }
}

# OpenShift: an arbitrary uid without a passwd entry, gid 0; the config's
# user (app) cannot be applied, and the boot says so.
s_arbitrary_uid() {
  # shellcheck disable=SC2086
  c=$(start anyuid $RO_FLAGS $FAST_HEALTH --user 123456:0 -- gateway run) || return 1
  check_nonroot "$c" 123456 || return 1
  logs_have "$c" "user app not applied to gateway-default, dashboard" || { err "no warning about the user app"; tail_logs "$c"; return 1; }
  # An essential slot failing for good ends the container with its code.
  # shellcheck disable=SC2086
  c=$(start anyuid-ess $RO_FLAGS --user 123456:0 -e APP_CONFIG_BAD=1 -- gateway run) || return 1
  until_true "$DEADLINE" exited "$c" || { err "the container outlived its essential slot: $(state "$c")"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 78 ] || { err "exit code $code, want the slot's 78"; tail_logs "$c"; return 1; }
}

# docs/kubernetes.md's pod spec, read from the doc: VALUE KEY prints the
# first `KEY: VALUE` of its YAML.
K8S_DOC=$ROOT/docs/kubernetes.md
# (the first ```yaml block; the later ones show the HTTP probes and a scrape).
k8s_yaml() { awk '/^```yaml$/ { n++; y = (n == 1); next } /^```$/ { y = 0 } y' "$K8S_DOC"; }
k8s_value() { k8s_yaml | sed -n "s/^ *$1: *\([^ ]*\) *\$/\1/p" | head -n 1; }
# k8s_probe NAME: the probe's command, one word a line.
k8s_probe() {
  k8s_yaml | awk -v p="$1Probe:" '$1 == p { f = 1; next } f && /command:/ { print; exit }' |
    sed 's/.*\[\(.*\)\].*/\1/' | tr ',' '\n' | sed 's/^ *"//; s/" *$//'
}
# probe C NAME: runs the probe's command as the kubelet does (as the
# container's user); prints its exit code.
probe() {
  # shellcheck disable=SC2046 # one word a line, no spaces in them
  docker exec "$1" $(k8s_probe "$2") >/dev/null 2>&1
  echo $?
}
probe_is() { [ "$(probe "$1" "$2")" = "$3" ]; }

s_kubernetes() {
  uid=$(k8s_value runAsUser)
  gid=$(k8s_value runAsGroup)
  fsgroup=$(k8s_value fsGroup)
  grace=$(k8s_value terminationGracePeriodSeconds)
  for v in "$uid" "$gid" "$fsgroup" "$grace"; do
    case $v in '' | *[!0-9]*) err "$K8S_DOC: runAsUser, runAsGroup, fsGroup or terminationGracePeriodSeconds unreadable"; return 1 ;; esac
  done
  [ "$uid" != 0 ] || { err "runAsUser 0"; return 1; }
  for k in "readOnlyRootFilesystem: true" "allowPrivilegeEscalation: false" 'capabilities: { drop: ["ALL"] }' "medium: Memory" "runAsNonRoot: true"; do
    k8s_yaml | grep -qF "$k" || { err "$K8S_DOC: the pod spec lacks '$k'"; return 1; }
  done
  envs=$(k8s_yaml | sed -n 's/.*- { name: \([A-Z0-9_]*\), value: "\([^"]*\)" }.*/-e \1=\2/p' | tr '\n' ' ')
  args=$(k8s_yaml | sed -n 's/^ *args: *\[\(.*\)\]/\1/p' | tr -d '",')
  for p in startup readiness liveness; do
    [ -n "$(k8s_probe "$p")" ] || { err "$K8S_DOC: no ${p}Probe command"; return 1; }
  done
  # The volumes as the kubelet makes them: the emptyDir a tmpfs of mode
  # 0777, chgrp'd to fsGroup with setgid (2777); the claim's root owned by
  # root, made group-writable for fsGroup (2770 here: nothing else can
  # write it). volume-nocopy: Kubernetes copies nothing from the image.
  vrun=${PREFIX}-k8s-run
  vdata=${PREFIX}-k8s-data
  docker volume create --driver local --opt type=tmpfs --opt device=tmpfs --opt "o=mode=2777,gid=$fsgroup" "$vrun" >/dev/null || return 1
  docker volume create --driver local --opt type=tmpfs --opt device=tmpfs --opt "o=mode=2770,gid=$fsgroup" "$vdata" >/dev/null || return 1
  pod="--read-only --user $uid:$gid --group-add $fsgroup --security-opt no-new-privileges --cap-drop ALL
    --mount type=volume,src=$vrun,dst=/run,volume-nocopy --mount type=volume,src=$vdata,dst=/data,volume-nocopy $envs"
  # shellcheck disable=SC2086 # flag lists, the args words
  c=$(start k8s $pod -- $args) || return 1
  # The kubelet: startup until it passes, then readiness and liveness.
  until_true "$DEADLINE" probe_is "$c" startup 0 || { err "startup probe: exit $(probe "$c" startup)"; tail_logs "$c"; return 1; }
  until_true 30 probe_is "$c" readiness 0 || { err "readiness probe: exit $(probe "$c" readiness)"; return 1; }
  probe_is "$c" liveness 0 || { err "liveness probe: exit $(probe "$c" liveness)"; return 1; }
  [ "$(uid_of "$c" "$(pids_matching "$c" "$GATEWAY_DEFAULT")")" = "$uid" ] || { err "the gateway does not run as uid $uid"; return 1; }
  # Stopped by an operator: not ready, yet alive (its wanted state).
  as_self "$c" svctl stop gateway-default --wait --timeout 10000 || { err "svctl stop failed"; return 1; }
  probe_is "$c" readiness 1 || { err "readiness of a stopped slot: exit $(probe "$c" readiness), want 1"; return 1; }
  probe_is "$c" liveness 0 || { err "liveness of a slot stopped on purpose: exit $(probe "$c" liveness), want 0"; return 1; }
  as_self "$c" svctl start gateway-default --wait --timeout 10000 || { err "svctl start failed"; return 1; }
  until_true 30 probe_is "$c" readiness 0 || { err "readiness after start: exit $(probe "$c" readiness)"; return 1; }
  # A typo in a probe fails it for ever.
  rc=0
  as_self "$c" svctl status gateway-defualt >/dev/null 2>&1 || rc=$?
  [ "$rc" = 4 ] || { err "svctl status of an unknown slot exited $rc, want 4"; return 1; }
  # Deleted within the grace period: the cont-finish hook, then exit 0.
  docker stop -t "$grace" "$c" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "docker stop -t $grace: exit code $code, want 0 (137 = killed at the end of the grace period)"; tail_logs "$c"; return 1; }
  logs_have "$c" "$STOP_HOOK_DONE" || { err "the cont-finish hook did not stop the slots:"; tail_logs "$c"; return 1; }
  docker rm -f -v "$c" >/dev/null 2>&1
  # A slot failed for good (exit 78), in a container that keeps running
  # (not the redirect: nothing essential): startup 2, readiness 2, liveness 3.
  docker volume rm "$vrun" "$vdata" >/dev/null 2>&1
  docker volume create --driver local --opt type=tmpfs --opt device=tmpfs --opt "o=mode=2777,gid=$fsgroup" "$vrun" >/dev/null || return 1
  docker volume create --driver local --opt type=tmpfs --opt device=tmpfs --opt "o=mode=2770,gid=$fsgroup" "$vdata" >/dev/null || return 1
  # shellcheck disable=SC2086
  c=$(start k8s-failed $pod -e APP_CONFIG_BAD=1 -- sleep infinity) || return 1
  until_true "$DEADLINE" slot_exists_self "$c" gateway-default || { err "no gateway-default slot"; tail_logs "$c"; return 1; }
  as_self "$c" svctl start gateway-default >/dev/null 2>&1
  until_true "$DEADLINE" probe_is "$c" liveness 3 || { err "liveness of a failed slot: exit $(probe "$c" liveness), want 3"; return 1; }
  probe_is "$c" readiness 2 || { err "readiness of a failed slot: exit $(probe "$c" readiness), want 2"; return 1; }
  probe_is "$c" startup 2 || { err "startup of a failed slot: exit $(probe "$c" startup), want 2"; return 1; }
  running "$c" || { err "the container exited: $(state "$c")"; return 1; }
}
slot_exists_self() { as_self "$1" test -d "/run/service/$2/supervise"; }

# ------------------------------------------- svkit-init where /init cannot be PID 1

# The boot line of svkit-init's own supervision, after its reason.
PORTABLE_LINE="supervising with s6-svscan under svkit-init"
# A oneshot that leaves an orphan (`sleep 8`, its parent gone) and prints
# its pid: svkit-init must adopt it (not the PID 1 above it) and reap it.
ORPHAN_CFG=$ROOT/tests/docker/portable/30-orphan.json
PLAIN_IMAGE=${IMAGE%%:*}-plain:test

# parent_comm C PID: the name of the process's parent.
parent_comm() {
  _pp=$(procs "$1" | awk -v p="$2" '$1 == p { print $2 }')
  [ -n "$_pp" ] && as_root "$1" cat "/proc/$_pp/comm"
}
adopted_by_init() { [ "$(parent_comm "$1" "$2")" = svkit-init ]; }

# check_portable LABEL WHY DOCKER-RUN-OPTIONS...: as root, the reference
# scenarios under svkit-init's own supervision (WHY: its boot line's
# reason): the redirect lands in its slot and stays up, with no recursion;
# the dashboard runs with its env var; stdout reaches docker logs; an
# orphan is reaped; docker stop exits 0 in under 1 s with every slot's TERM
# handler done; the opt-outs run in the foreground (and get their graceful
# stop); an essential slot's crash ends the container with its code.
check_portable() {
  label=$1
  why=$2
  shift 2
  c=$(start "$label" "$@" -e APP_DASHBOARD=1 -v "$ORPHAN_CFG:/etc/svkit/30-orphan.json:ro" -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  logs_have "$c" "$why: $PORTABLE_LINE" || { err "no boot line '$why: $PORTABLE_LINE'"; tail_logs "$c"; return 1; }
  wait_logs "$c" "orphan left behind: pid " || return 1
  orphan=$(logs "$c" | sed -n 's/^orphan left behind: pid \([0-9]*\)$/\1/p' | head -n 1)
  until_true 3 adopted_by_init "$c" "$orphan" || { err "orphan $orphan: its parent is $(parent_comm "$c" "$orphan"), not svkit-init"; procs "$c" >&2; return 1; }
  running "$c" || { err "container exited after the redirect: $(state "$c")"; tail_logs "$c"; return 1; }
  until_true 30 wants_up "$c" gateway-default || { err "gateway-default is not wanted up"; return 1; }
  until_true 30 one_supervised_gateway "$c" || { err "no supervised gateway:"; procs "$c" >&2; return 1; }
  gw=$(pids_matching "$c" "$GATEWAY_DEFAULT")
  [ "$(uid_of "$c" "$gw")" = "$(as_app "$c" id -u)" ] || { err "the gateway does not run as app"; return 1; }
  environ_of "$c" "$gw" | grep -qx 'APP_SUPERVISED_CHILD=gateway-default' ||
    { err "the supervised gateway lacks APP_SUPERVISED_CHILD=gateway-default"; return 1; }
  [ "$(logs "$c" | grep -cF "s6 supervision")" = 1 ] || { err "the breadcrumb appeared more than once"; return 1; }
  until_true 30 is_up "$c" dashboard || { err "dashboard is not up"; return 1; }
  d=$(pids_matching "$c" '$3 ~ /(^|\/)app$/ && / dashboard/')
  { [ -n "$d" ] && supervised_by_s6 "$c" "$d"; } || { err "no supervised dashboard"; procs "$c" >&2; return 1; }
  environ_of "$c" "$d" | grep -qx 'APP_DASHBOARD=1' || { err "the dashboard lacks APP_DASHBOARD=1"; return 1; }
  wait_logs "$c" "⚕ gateway default up" || return 1
  until_true 30 as_app "$c" svctl status >/dev/null || { err "svctl status did not exit 0:"; as_app "$c" svctl status >&2; return 1; }
  as_app "$c" svctl status | grep -qF "supervised by svkit-init" || { err "svctl status does not name svkit-init"; return 1; }
  [ "$(as_app "$c" svctl status --json | sed -n 's/.*"supervision":"\([^"]*\)".*/\1/p')" = svkit-init ] ||
    { err "svctl status --json: supervision is not svkit-init"; return 1; }
  # It ends 8 s after it started; reaped, it leaves no zombie behind.
  until_true 20 gone "$c" "$orphan" || { err "orphan $orphan still there (a zombie?):"; procs "$c" >&2; return 1; }
  stops_fast "$c" || return 1
  # One container at a time: in a shared pid namespace each sees the others.
  docker rm -f -v "$c" >/dev/null 2>&1
  c=$(start "$label-noflag" "$@" -- gateway run --no-supervise) || return 1
  check_foreground "$c" || return 1
  docker rm -f -v "$c" >/dev/null 2>&1
  c=$(start "$label-noenv" "$@" -e APP_GATEWAY_NO_SUPERVISE=1 -e APP_STOP_MS=300 -- gateway run) || return 1
  check_foreground "$c" || return 1
  # Its TERM handler runs at docker stop, and its code is the container's.
  docker stop -t 30 "$c" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 0 ] || { err "foreground: docker stop gave exit code $code, want the handler's 0"; tail_logs "$c"; return 1; }
  logs_have "$c" "⚕ gateway default stopped after 300 ms" || { err "the foreground command's TERM handler did not run"; tail_logs "$c"; return 1; }
  docker rm -f -v "$c" >/dev/null 2>&1
  c=$(start "$label-ess" "$@" -e APP_CONFIG_BAD=1 -- gateway run) || return 1
  until_true "$DEADLINE" exited "$c" || { err "the container outlived its essential slot: $(state "$c")"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 78 ] || { err "essential slot: exit code $code, want the slot's 78"; tail_logs "$c"; return 1; }
  logs_have "$c" "is essential: stopping the container with exit code 78" || { err "no essential message:"; tail_logs "$c"; return 1; }
}

# `docker run --init`: tini (docker-init) is PID 1.
s_init_tini() {
  check_portable init-tini "not PID 1 (PID 1 is docker-init)" --init
}

# Another container's process is PID 1 (Kubernetes' shareProcessNamespace,
# `--pid container:X`).
s_init_pidns() {
  host=$(start pidns-host --entrypoint sleep -- infinity) || return 1
  check_portable init-pidns "not PID 1 (PID 1 is sleep)" --pid "container:$host"
}

# An image without s6-overlay: Debian's s6 package and svkit, as PID 1 and
# under --init.
s_plain_s6() {
  build_image plain-image "$PLAIN_IMAGE" || return 1
  PLAIN_BUILT=1
  shipped=$IMAGE
  IMAGE=$PLAIN_IMAGE
  rc=0
  check_portable plain-pid1 "no s6-overlay in this image (no /init)" || rc=1
  [ "$rc" = 0 ] && { check_portable plain-tini "no s6-overlay in this image (no /init)" --init || rc=1; }
  IMAGE=$shipped
  return "$rc"
}

# check_supervised_as C UID: the gateway runs under s6-supervise as UID and
# `svctl status`, as the container's user, exits 0.
check_supervised_as() {
  wait_logs "$1" "s6 supervision" || return 1
  until_true 30 one_supervised_gateway "$1" || { err "no supervised gateway:"; procs "$1" >&2; return 1; }
  gw=$(pids_matching "$1" "$GATEWAY_DEFAULT")
  [ "$(uid_of "$1" "$gw")" = "$2" ] || { err "the gateway runs as uid $(uid_of "$1" "$gw"), not $2"; return 1; }
  until_true 30 as_self "$1" svctl status >/dev/null || { err "svctl status did not exit 0:"; as_self "$1" svctl status >&2; return 1; }
}

# `--init --read-only --user 12345:0 --tmpfs /run` (noexec, root's mode):
# nowhere to run the slots from: one line naming the fix, exit 1, once.
# With the fix it names (`--tmpfs /tmp:exec`): supervised.
s_init_readonly() {
  c=$(start ro --init --read-only --user 12345:0 --tmpfs /run -- gateway run) || return 1
  until_true "$DEADLINE" exited "$c" || { err "still $(state "$c")"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 1 ] || { err "exit code $code, want 1"; tail_logs "$c"; return 1; }
  [ "$(logs "$c" | grep -c "svkit-init: fatal: no directory to run the slots from")" = 1 ] ||
    { err "not one fatal line about the run dir:"; tail_logs "$c"; return 1; }
  logs_have "$c" "--tmpfs /tmp:exec" || { err "the fatal line names no fix"; tail_logs "$c"; return 1; }
  c=$(start ro-fixed --init --read-only --user 12345:0 --tmpfs /run --tmpfs /tmp:exec -- gateway run) || return 1
  SCANDIR=/tmp/svkit/service
  rc=0
  check_supervised_as "$c" 12345 || rc=1
  SCANDIR=/run/service
  return "$rc"
}

# `--user 10000:10000 --group-add 999` on the shipped image: supervised as
# 10000, and the slots keep the supplementary group 999: through /init (its
# setuid helper makes /run the user's), and under svkit-init when
# no-new-privileges disables that helper (/run stays root's: the run dir is
# /tmp/svkit).
check_groups() {
  check_supervised_as "$1" 10000 || return 1
  gw=$(pids_matching "$1" "$GATEWAY_DEFAULT")
  groups=$(as_root "$1" awk '/^Groups:/ { $1 = ""; print }' "/proc/$gw/status")
  case " $groups " in *" 999 "*) ;; *) err "the gateway's groups are '$groups', without 999"; return 1 ;; esac
  docker stop -t 30 "$1" >/dev/null || { err "docker stop failed"; return 1; }
  code=$(exit_code "$1")
  [ "$code" = 0 ] || { err "docker stop: exit code $code, want 0"; tail_logs "$1"; return 1; }
}
s_init_groups() {
  vdata=${PREFIX}-groups-data
  docker volume create --driver local --opt type=tmpfs --opt device=tmpfs --opt o=mode=1777 "$vdata" >/dev/null || return 1
  data="type=volume,src=$vdata,dst=/data,volume-nocopy"
  c=$(start groups --user 10000:10000 --group-add 999 --mount "$data" -- gateway run) || return 1
  wait_logs "$c" "PID 1 with s6-overlay: handing over to /init" || return 1
  check_groups "$c" || return 1
  docker rm -f -v "$c" >/dev/null 2>&1
  c=$(start groups-nnp --user 10000:10000 --group-add 999 --security-opt no-new-privileges --mount "$data" -- gateway run) || return 1
  wait_logs "$c" "s6-overlay's /init cannot run as uid 10000: /run is not writable, and no-new-privileges disables its setuid helper: $PORTABLE_LINE" || return 1
  SCANDIR=/tmp/svkit/service
  rc=0
  check_groups "$c" || rc=1
  SCANDIR=/run/service
  return "$rc"
}

# kill -9 of s6-svscan under svkit-init: the container ends, saying so
# (never a silent unsupervised state).
s_init_svscan_killed() {
  c=$(start svkilled --init -- gateway run) || return 1
  wait_logs "$c" "s6 supervision" || return 1
  svscan=$(pids_matching "$c" '$3 ~ /(^|\/)s6-svscan$/')
  [ -n "$svscan" ] || { err "no s6-svscan:"; procs "$c" >&2; return 1; }
  kill9 "$c" "$svscan"
  until_true "$DEADLINE" exited "$c" || { err "still $(state "$c") after kill -9 of s6-svscan"; tail_logs "$c"; return 1; }
  code=$(exit_code "$c")
  [ "$code" = 111 ] || { err "exit code $code, want 111"; tail_logs "$c"; return 1; }
  logs_have "$c" "svkit-init: fatal: s6-svscan (pid $svscan) ended (killed by SIGKILL)" || { err "no line about s6-svscan's end"; tail_logs "$c"; return 1; }
}

# ---------------------------------------------------------------- main

ALL="redirect no_supervise_flag no_supervise_env foreground_exit_code no_recursion dashboard healthcheck essential essential_restart output_burst lifecycle restart_remembers clean_stop fast_stop slow_foreground_stop sidecar scratch nonroot arbitrary_uid hardened kubernetes init_tini init_pidns init_readonly init_groups init_svscan_killed plain_s6"
if [ "$#" -gt 0 ]; then SELECTED=$*; else SELECTED=$ALL; fi
for scn in $SELECTED; do
  case " $ALL " in *" $scn "*) ;; *) say "unknown scenario: $scn (known: $ALL)" >&2; exit 100 ;; esac
done

if [ "${SVKIT_TEST_NO_BUILD:-0}" != 1 ]; then
  say "=== tests/docker/engine.sh image $IMAGE (the Dockerfile's offline path)"
  t0=$(date +%s)
  # A build that fails is one failure, named, in the closing count.
  "$ROOT/tests/docker/engine.sh" image "$IMAGE" || { say "FAIL: tests/docker/engine.sh image $IMAGE"; say "failed: image-build"; say "0 passed, 1 failed"; exit 1; }
  BUILT=1
  say "    built in $(($(date +%s) - t0)) s"
fi

passed=0
failed=0
failures=""
for scn in $SELECTED; do
  say "=== $scn"
  if "s_$scn"; then
    say "PASS $scn"
    passed=$((passed + 1))
  else
    say "FAIL $scn"
    failed=$((failed + 1))
    failures="$failures $scn"
  fi
done

[ -z "$failures" ] || say "failed:$failures"
say "$passed passed, $failed failed"
[ "$failed" = 0 ]
