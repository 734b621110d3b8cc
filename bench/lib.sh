# shellcheck shell=bash
# Shared by the bench scripts that time things inside the sandbox (apply.sh,
# wrap.sh). Sourced, never run: each script copies itself and this file into
# the sandbox and sources it on both sides.

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
