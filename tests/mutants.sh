#!/bin/sh
# Mutation testing of the modules that decide behaviour: `make mutants`
# (all groups) or `make mutants FILES="crates/svkit/src/s6/status.rs"`
# (the groups holding those files). Not part of `make test`: it takes hours.
#
# Each group is tried in up to three passes, each only on the mutants the
# one before missed (cargo-mutants --iterate), from the fastest tests to the
# slowest, so a mutant costs a full sandbox run only when nothing quicker
# catches it:
#   1. the library's unit tests of the group's modules (`--lib FILTER`);
#   2. the library's integration tests named for the group (goldens, the
#      status decoder against s6-svstat, ...);
#   3. the tool tests on the real /init (crates/svkit-cli/tests) named for
#      the group; as root, nothing may skip (SVKIT_NO_SKIP=1).
# Mutants are made in the working tree itself (--in-place: the incremental
# build is what makes a mutant cost seconds), so run it on a clean checkout
# you are not editing; cargo-mutants puts every file back when it ends.
#
# Results: target/mutants/GROUP/mutants.out (caught.txt, missed.txt,
# timeout.txt, unviable.txt), and one summary row a group on stdout, the
# table docs/TESTING.md keeps.
set -eu
cd "$(dirname "$0")/.."

# group | files (space-separated) | unit test filter | library tests | tool tests
GROUPS_TABLE='
finish|crates/svkit/src/render/finish.rs crates/svkit/src/slot/end.rs|render::|render_golden render_supervised render_s6log|restart_policy render_behaviour svctl_defaults essential fork_failure
run|crates/svkit/src/render/run.rs|render::|render_golden render_supervised|render_behaviour slot_env svctl_features
health|crates/svkit/src/slot/health.rs crates/svkit/src/slot/snapshot.rs|slot::|health|svctl_status failing_slots restart_policy svctl_wait_boot svctl_defaults svctl_loghealth svctl_stray svctl_remember_plan svctl_lifecycle svctl_liveness
redirect|crates/svkit/src/redirect/mod.rs|redirect::||wrap opt_out wrap_messages
validate|crates/svkit/src/config/validate.rs|config::|config_load config_one_cause|check_corpus
desired|crates/svkit/src/state/mod.rs|state::|registered|svctl_remember_plan svctl_control
depends|crates/svkit/src/config/depends/mod.rs|config::depends|config_load config_one_cause|check_corpus svctl_order essential_oneshot
liveness|crates/svkit/src/liveness.rs crates/svkit/src/slot/liveness.rs|liveness||svctl_liveness svctl_lifecycle svctl_features
slotenv|crates/svkit/src/slotenv/dotenv.rs crates/svkit/src/slotenv/mod.rs|slotenv::||slot_env_cli slot_env svctl_exec
status|crates/svkit/src/s6/status.rs|s6::status|status_decode status_differential status_svstat|svctl_status
'

want="${FILES:-}"
out=target/mutants
mkdir -p "$out"
export SVKIT_S6_OVERLAY="${SVKIT_S6_OVERLAY:-$(tests/s6-overlay/build.sh)}"
[ "$(id -u)" = 0 ] && export SVKIT_NO_SKIP=1

count() { cat "$@" 2>/dev/null | sort -u | grep -c . || true; }
# Timed out once and caught by a later pass: caught.
timeouts() {
  sort -u "$1/all-timeout.txt" 2>/dev/null | comm -23 - "$2" | grep -c . || true
}
# Missed by the last pass, less what an earlier pass timed out on (a hang
# the tests noticed: counted under timed out, not twice); kept in
# missed-now.txt, the list docs/TESTING.md must explain.
missed() {
  sort -u "$1/all-timeout.txt" -o "$1/all-timeout.txt" 2>/dev/null || : >"$1/all-timeout.txt"
  sort -u "$1/mutants.out/missed.txt" 2>/dev/null | comm -23 - "$1/all-timeout.txt" >"$1/missed-now.txt"
  count "$1/missed-now.txt"
}

# Each pass replaces mutants.out (the one before becomes mutants.out.old):
# what it caught, timed out on or could not build is kept in all-*.txt.
keep() {
  for k in caught timeout unviable; do
    cat "$1/mutants.out/$k.txt" >>"$1/all-$k.txt" 2>/dev/null || true
  done
  sweep_sandboxes
}

# A test killed on its timeout cannot stop its sandbox: the container
# lives on, and a mutant looping in its boot hook takes a core from every
# mutant after it (slower tests, more time-outs counted as caught). Its
# monitor and namespace are ended after each pass.
sweep_sandboxes() {
  pkill -KILL -f "^unshare .* $PWD/target/[^ ]*/svkit-sandbox __boot " || true
  pkill -KILL -f "^$PWD/target/[^ ]*/svkit-sandbox __monitor " || true
}

# The library's integration tests and the tool tests boot the sandbox:
# its binary and the tool links must be this tree's.
make build >/dev/null

echo "| group | files | mutants | caught | missed | timed out | unviable |"
echo "|---|---|---:|---:|---:|---:|---:|"
echo "$GROUPS_TABLE" | while IFS='|' read -r group files filter libtests tooltests; do
  [ -n "$group" ] || continue
  if [ -n "$want" ]; then
    hit=""
    for f in $want; do
      case " $files " in *" $f "*) hit=1 ;; esac
    done
    [ -n "$hit" ] || continue
  fi
  dir="$out/$group"
  rm -rf "$dir"
  fargs=""
  for f in $files; do fargs="$fargs -f $f"; done
  # Pass 1. cargo-mutants exits 2 when mutants were missed: that is a
  # result here, not a failure of the run.
  # shellcheck disable=SC2086
  cargo mutants --in-place --no-shuffle -p svkit $fargs -o "$dir" \
    --cargo-arg=--lib -- -- "$filter" >"$dir.log" 2>&1 || true
  keep "$dir"
  if [ -n "$libtests" ] && [ "$(count "$dir/mutants.out/missed.txt")" != 0 ]; then
    targs=""
    for t in $libtests; do targs="$targs --cargo-arg=--test=$t"; done
    # shellcheck disable=SC2086
    cargo mutants --in-place --no-shuffle --iterate -p svkit $fargs -o "$dir" \
      $targs >>"$dir.log" 2>&1 || true
    keep "$dir"
  fi
  if [ -n "$tooltests" ] && [ "$(count "$dir/mutants.out/missed.txt")" != 0 ]; then
    targs=""
    for t in $tooltests; do targs="$targs --cargo-arg=--test=$t"; done
    # shellcheck disable=SC2086
    # No baseline here: cargo-mutants would build it from the mutated
    # package (svkit), which has none of these tests; `make test` is the
    # baseline. Hence explicit timeouts, long enough for a boot or two.
    cargo mutants --in-place --no-shuffle --iterate -p svkit --test-package svkit-cli \
      --baseline skip --timeout 300 --build-timeout 300 \
      $fargs -o "$dir" $targs >>"$dir.log" 2>&1 || true
    keep "$dir"
  fi
  sort -u "$dir/all-caught.txt" -o "$dir/all-caught.txt" 2>/dev/null || : >"$dir/all-caught.txt"
  # shellcheck disable=SC2086
  total=$(cargo mutants --list -p svkit $fargs 2>/dev/null | grep -c .)
  echo "| $group | $(echo "$files" | sed 's#crates/svkit/src/##g') | $total | $(count "$dir/all-caught.txt") | $(missed "$dir") | $(timeouts "$dir" "$dir/all-caught.txt") | $(count "$dir/all-unviable.txt") |"
done
