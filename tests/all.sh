#!/bin/sh
# `make test`'s last step: every cargo test on s6-overlay's real /init (the
# sandbox), then the reference scenarios on a real Docker engine, then one
# closing line with the passed, failed and skipped counts of both
# (tests/tally.sh: each test once; a crash or a failed build is a failure).
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

tests/tally.sh "$work/cargo.log" "$work/cargo.rc" "$work/docker.log" "$work/docker.rc" "$SVKIT_SKIP_LOG"
