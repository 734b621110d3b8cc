#!/bin/sh
# tests/test-binary.sh LOG 'EXE<TAB>PACKAGE_DIR<TAB>LABEL'
#
# One test binary of `cargo test --no-run`, run as cargo runs it (from its
# package's dir, under the `Running LABEL (EXE)` line cargo prints), its
# whole output then appended to LOG and printed in one piece: tests/all.sh
# runs two at a time, and tests/tally.sh reads LOG as cargo's own output.
# Exits with the binary's code.
set -u
log=$1
tab=$(printf '\t')
exe=${2%%"$tab"*}
rest=${2#*"$tab"}
dir=${rest%%"$tab"*}
label=${rest#*"$tab"}
out=$(mktemp) || exit 111
trap 'rm -f "$out"' EXIT
{
  echo "     Running $label (${exe#"$PWD"/})"
  (cd "$dir" && exec "$exe")
} > "$out" 2>&1
rc=$?
# shellcheck disable=SC2016 # expanded by that sh
flock "$log.lock" sh -c 'tee -a "$2" < "$1"' _ "$out" "$log"
exit "$rc"
