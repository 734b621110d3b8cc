#!/bin/sh
# `make test`'s last step: every cargo test on s6-overlay's real /init (the
# sandbox; two test binaries at a time, tests/test-binary.sh), then the reference scenarios on a real Docker engine, then one
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

# Every test binary is built once, then run two at a time
# (SVKIT_TEST_JOBS): most of their time is spent waiting on s6-overlay's
# boot and on s6, so two use 2 cores better than one. cargo would run
# them one by one: it holds the build dir for as long as it runs tests.
# Doc-tests go through cargo (rustdoc builds them).
{
  {
    "$CARGO" test --workspace --no-run --message-format=json-render-diagnostics > "$work/built.json" &&
      "$CARGO" test --workspace --doc --no-fail-fast
  } 2>&1
  echo "$?" > "$work/build.rc"
} | tee "$work/cargo.log"
# EXE, its package's dir, and cargo's label: `unittests src/lib.rs`,
# `tests/x.rs`, the path in the package.
sed -n '/"test":true},"features"/s/.*"manifest_path":"\([^"]*\)\/Cargo.toml".*"kind":\["\([a-z-]*\)"\].*"src_path":"\([^"]*\)".*"executable":"\([^"]*\)".*/\4	\1	\2	\3/p' "$work/built.json" |
  while IFS="$(printf '\t')" read -r exe dir kind src; do
    label=${src#"$dir"/}
    case $kind in test) ;; *) label="unittests $label" ;; esac
    printf '%s\t%s\t%s\n' "$exe" "$dir" "$label"
  done > "$work/binaries"
xargs -d '\n' -n 1 -P "${SVKIT_TEST_JOBS:-2}" tests/test-binary.sh "$work/cargo.log" < "$work/binaries"
rc=$?
[ "$(cat "$work/build.rc")" = 0 ] || rc=$(cat "$work/build.rc")
echo "$rc" > "$work/cargo.rc"

{
  if tests/docker/engine.sh up; then
    tests/docker/run.sh
    echo "$?" > "$work/docker.rc"
    tests/docker/engine.sh down
  fi
} 2>&1 | tee "$work/docker.log"

tests/tally.sh "$work/cargo.log" "$work/cargo.rc" "$work/docker.log" "$work/docker.rc" "$SVKIT_SKIP_LOG"
