#!/bin/sh
# tests/tally.sh CARGO_LOG CARGO_RC DOCKER_LOG DOCKER_RC SKIP_LOG
#
# `make test`'s closing line from what both halves left: each test counted
# once, as passed, failed or skipped. The logs are what `cargo test
# --workspace --no-fail-fast` and tests/docker/run.sh printed; an RC file
# holds a half's exit code (absent: it did not run); SKIP_LOG has one line
# per skip (`TEST: WHY`, or `tests/docker/run.sh: WHY`).
#
# - A skipped cargo test returns early, so libtest counts it passed: it is
#   moved from passed to skipped.
# - A test binary that printed no `test result:` line (it crashed, or was
#   killed) counts as one failure, named; so does a crate that did not
#   compile, and a half that failed without naming a failure (an image build,
#   an engine that did not start, cargo itself).
# Prints `failed: NAME` lines, the skips, then
# `test: P passed, F failed, S skipped`; exits 0 only when both halves passed.
set -u
[ "$#" = 5 ] || { echo "usage: tests/tally.sh CARGO_LOG CARGO_RC DOCKER_LOG DOCKER_RC SKIP_LOG" >&2; exit 100; }
cargo_log=$1 cargo_rc_file=$2 docker_log=$3 docker_rc_file=$4 skip_log=$5

rc_of() { if [ -f "$1" ]; then tr -d ' \n' < "$1"; else echo missing; fi; }
cargo_rc=$(rc_of "$cargo_rc_file")
docker_rc=$(rc_of "$docker_rc_file")

# One binary per `Running`/`Doc-tests` line; its `test result:` line ends
# it. The name: the test target's file and its crate (from the deps path).
cargo_out=$(awk '
  function close_binary() { if (cur != "" && !seen) { f += 1; names = names "failed: " cur " (no test result: crashed or killed)\n" } }
  /^ *Running / || /^ *Doc-tests / {
    close_binary()
    seen = 0
    if ($1 == "Doc-tests") { cur = "doc-tests of " $2 }
    else {
      path = $NF; gsub(/[()]/, "", path); n = split(path, parts, "/"); crate = parts[n]; sub(/-[0-9a-f]+$/, "", crate)
      cur = crate " (" $(NF-1) ")"
      if ($2 == "unittests") cur = crate " (unit tests " $3 ")"
    }
  }
  /^test result: / { p += $4; f += $6; seen = 1 }
  /^error: could not compile / { f += 1; line = $0; sub(/^error: /, "", line); names = names "failed: " line "\n" }
  END { close_binary(); printf "%d %d\n%s", p, f, names }
' "$cargo_log" 2>/dev/null)
cargo_counts=$(printf '%s\n' "$cargo_out" | head -n 1)
cargo_names=$(printf '%s\n' "$cargo_out" | tail -n +2)
docker_counts=$(awk '/^[0-9]+ passed, [0-9]+ failed$/ { p = $1; f = $3 } END { printf "%d %d", p, f }' "$docker_log" 2>/dev/null)
docker_names=$(sed -n 's/^failed: *\(.*\)$/\1/p' "$docker_log" 2>/dev/null | tr ' ' '\n' | sed -n 's/^\(..*\)$/failed: docker scenario \1/p')

skipped=$(grep -c '' "$skip_log" 2>/dev/null || true)
docker_skips=$(grep -c '^tests/docker/run.sh:' "$skip_log" 2>/dev/null || true)
cargo_skips=$((${skipped:-0} - ${docker_skips:-0}))

# shellcheck disable=SC2086 # four numbers, split on purpose
set -- ${cargo_counts:-0 0} ${docker_counts:-0 0}
cargo_passed=$(($1 - cargo_skips))
[ "$cargo_passed" -ge 0 ] || cargo_passed=0
passed=$((cargo_passed + $3))
cargo_failed=$2
docker_failed=$4

status=0
if [ "$cargo_rc" != 0 ]; then
  status=1
  if [ "$cargo_failed" = 0 ]; then
    cargo_failed=1
    cargo_names="failed: cargo test (exit $cargo_rc, no failing test named: see its output above)"
  fi
fi
if [ "$docker_rc" != 0 ]; then
  status=1
  if [ "$docker_failed" = 0 ]; then
    docker_failed=1
    if [ "$docker_rc" = missing ]; then
      docker_names="failed: docker scenarios (not run: tests/docker/engine.sh up failed)"
    else
      docker_names="failed: docker scenarios (exit $docker_rc, no scenario named: see their output above)"
    fi
  fi
fi
failed=$((cargo_failed + docker_failed))

[ -z "$cargo_names" ] || printf '%s\n' "$cargo_names"
[ -z "$docker_names" ] || printf '%s\n' "$docker_names"
if [ "${skipped:-0}" != 0 ]; then
  echo "skipped:"
  sed 's/^/    /' "$skip_log"
fi
echo "test: $passed passed, $failed failed, ${skipped:-0} skipped"
exit "$status"
