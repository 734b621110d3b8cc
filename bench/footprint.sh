#!/bin/sh
# Footprint and start time of what ships: the release tarball `make dist`
# builds (one static multi-call `svkit` and its symlinks), its installed
# size against s6-overlay's own arch tarball, and each program's start
# (`--version` through its symlink) against the fork+exec floor of
# `/bin/true`, timed by the same shell, alternated, in one run.
set -eu
cd "$(dirname "$0")/.."
runs=${FOOTPRINT_BENCH_RUNS:-200}

tarball=$(CARGO=${CARGO:-cargo} dist/build.sh 2>/dev/null)
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
tar -C "$x" -xJf "$tarball"
bin=$x/usr/local/bin
# Installed bytes: regular files only (symlinks cost an inode, no data).
installed=$(find "$x" -type f -exec stat -c %s {} + | awk '{ s += $1 } END { print s }')
s6_arch=""
if [ -n "${SVKIT_S6_OVERLAY:-}" ] && [ -f "$SVKIT_S6_OVERLAY/s6-overlay-x86_64.tar.xz" ]; then
  s6_arch=$(xz -dc "$SVKIT_S6_OVERLAY/s6-overlay-x86_64.tar.xz" | tar -tv 2>/dev/null |
    awk '$1 ~ /^-/ { s += $3 } END { print s }')
fi
static=yes
for f in "$bin"/*; do
  case $(file -L "$f") in *"statically linked"*) ;; *) static=no ;; esac
done

ns() { date +%s%N; }
# median_us CMD...: median wall time of one run, in microseconds.
median_us() {
  i=0
  while [ "$i" -lt "$runs" ]; do
    t0=$(ns); "$@" >/dev/null 2>&1 || true; t1=$(ns)
    echo $(((t1 - t0) / 1000))
    i=$((i + 1))
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
floor=$(median_us /bin/true)
rows=""
worst=0
for p in svctl svkit-wrap svkit-reconcile svkit-lifeline; do
  t=$(median_us "$bin/$p" --version)
  ratio=$(awk -v a="$t" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')
  worst=$(awk -v a="$ratio" -v b="$worst" 'BEGIN { print (a > b) ? a : b }')
  rows="$rows| \`$p --version\` | $t µs | ${ratio}× |
"
done
size_mb=$(awk -v s="$installed" 'BEGIN { printf "%.2f", s / 1000000 }')
verdict_size=$(awk -v s="$installed" 'BEGIN { print (s <= 2500000) ? "met" : "**missed**" }')
verdict_start=$(awk -v w="$worst" 'BEGIN { print (w <= 2) ? "met" : "**missed**" }')

cat <<EOF
## footprint: what \`make dist\` ships, and how fast it starts

\`$(basename "$tarball")\` ($(stat -c %s "$tarball") bytes): one multi-call
binary and $(find "$bin" -type l | wc -l) symlinks to it, plus the two hooks;
static: **$static** (\`file\` on every program). Start time: wall time of
\`PROGRAM --version\` through its symlink (process start, dispatch on the
name, clap, exit), against \`/bin/true\` run by the same shell, median of
$runs runs each.

| measure | value | target |
|---|---:|---|
| installed size (regular files) | $size_mb MB | ≤ 2.5 MB: $verdict_size |
| s6-overlay's own x86_64 tarball, installed (for scale) | ${s6_arch:-?} bytes | |
| \`/bin/true\` (fork+exec floor) | $floor µs | |
${rows}| slowest start against the floor | ${worst}× | ≤ 2×: $verdict_start |

One binary instead of four: each static glibc program carries its own copy
of libc and Rust's std (a static hello-world is about 1 MB), so four
separate binaries could not fit the budget; the release profile builds
with \`opt-level = "z"\`, fat LTO, one codegen unit, \`panic = "abort"\`
and strips (at issue 39: 2.71 MB against 2.95 MB at \`"s"\`). About half
of the binary is not svkit's own: static glibc and std take
about 1.4 MB with their unwind tables, of which glibc's gettext and
iconv (reached by std's strerror), scanf and strtod (its main-thread
stack probe) and std's backtrace printer are about 0.3 MB. \`svctl top\`'s
view (ratatui and crossterm, and its own code) adds 0.32 MB (3.06 MB against
2.73 MB without it, measured 2026-12-03). The same code built for
\`x86_64-unknown-linux-musl\` is 2.36 MB: musl is far smaller than static
glibc. The release stays on glibc because that Rust target is an extra
download (rustup) that an offline build may not be able to make.
EOF
