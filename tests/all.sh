#!/bin/sh
# `make test`'s last step: every cargo test on s6-overlay's real /init (the
# sandbox), then the reference scenarios on a real Docker engine, then one
# closing line with the passed, failed and skipped counts of both.
#
# As root nothing may skip (SVKIT_NO_SKIP=1 turns a skip into a failure);
# otherwise each skip is recorded in SVKIT_SKIP_LOG and counted here.
# Exits 0 only when both halves passed.
set -u
cd "$(dirname "$0")/.." || exit 1
CARGO=${CARGO:-cargo}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SVKIT_SKIP_LOG="$work/skips"
: > "$SVKIT_SKIP_LOG"
export SVKIT_SKIP_LOG
SVKIT_S6_OVERLAY=$(tests/s6-overlay/build.sh) || exit 1
export SVKIT_S6_OVERLAY
if [ "$(id -u)" = 0 ]; then export SVKIT_NO_SKIP=1; fi

{ "$CARGO" test --workspace --no-fail-fast 2>&1; echo "$?" > "$work/cargo.rc"; } | tee "$work/cargo.log"

{
  if tests/docker/engine.sh up; then
    tests/docker/run.sh
    echo "$?" > "$work/docker.rc"
    tests/docker/engine.sh down
  fi
} 2>&1 | tee "$work/docker.log"

# cargo: `test result: ok. P passed; F failed; ...` per test binary;
# the scenarios: one closing `P passed, F failed` line.
counts=$(awk '/^test result: / { p += $4; f += $6 } END { printf "%d %d", p, f }' "$work/cargo.log")
docker_counts=$(awk '/^[0-9]+ passed, [0-9]+ failed$/ { p = $1; f = $3 } END { printf "%d %d", p, f }' "$work/docker.log")
skipped=$(wc -l < "$SVKIT_SKIP_LOG" | tr -d ' ')
# shellcheck disable=SC2086 # four numbers, split on purpose
set -- $counts $docker_counts
passed=$(($1 + $3))
failed=$(($2 + $4))

status=0
for half in cargo docker; do
  rc=$(cat "$work/$half.rc" 2>/dev/null || echo missing)
  if [ "$rc" != 0 ]; then
    echo "tests/all.sh: $half tests did not pass (exit $rc)"
    status=1
  fi
done
if [ "$skipped" != 0 ]; then
  echo "tests/all.sh: skipped:"
  sed 's/^/    /' "$SVKIT_SKIP_LOG"
fi
echo "test: $passed passed, $failed failed, $skipped skipped"
exit "$status"
