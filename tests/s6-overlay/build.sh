#!/bin/sh
# Build the s6-overlay release-layout tarballs from the source snapshots in
# <repo>/../shared/third_party (or $SVKIT_THIRD_PARTY), offline, and cache them
# in ${SVKIT_CACHE:-/var/cache/svkit}/s6-overlay/<KEY>/.
#
# stdout: one line, the directory holding the tarballs and their SHA256SUMS.
# stderr: progress messages, prefixed "build.sh: ".
# See README.md next to this script.
set -eu

S6_OVERLAY_VERSION=3.2.3.0
# The skarnet packages to build (s6-overlay Makefile names); s6-dns and
# s6-networking are left out (see shared/third_party/README.md).
SKAWARE="SKALIBS EXECLINE S6 S6_RC S6_LINUX_INIT S6_PORTABLE_UTILS S6_LINUX_UTILS S6_OVERLAY_HELPERS"
TARBALLS="s6-overlay-noarch.tar.xz s6-overlay-x86_64.tar.xz s6-overlay-symlinks-noarch.tar.xz s6-overlay-symlinks-arch.tar.xz"

prog=build.sh
say() { printf '%s: %s\n' "$prog" "$*" >&2; }
fail() { printf '%s: fatal: %s\n' "$prog" "$*" >&2; exit 1; }

# ---------------------------------------------------------------- locations
case $0 in
  */*) script_path=$0 ;;
  *) script_path=$(command -v -- "$0" 2>/dev/null) || script_path=$0 ;;
esac
[ -r "$script_path" ] || fail "cannot locate this script ($0)"
script_dir=$(cd -P -- "$(dirname -- "$script_path")" && pwd)
script_path=$script_dir/$(basename -- "$script_path")

if [ -n "${SVKIT_THIRD_PARTY:-}" ]; then
  third_party=$SVKIT_THIRD_PARTY
else
  # <repo>/tests/s6-overlay -> <repo>/../shared/third_party
  third_party=$script_dir/../../../shared/third_party
fi
[ -d "$third_party" ] || fail "third_party directory not found: $third_party (set SVKIT_THIRD_PARTY)"
third_party=$(cd -P -- "$third_party" && pwd)

# ---------------------------------------------------------------- 1. sources
[ -f "$third_party/SHA256SUMS" ] || fail "$third_party/SHA256SUMS is missing"
if ! (cd "$third_party" && sha256sum --quiet -c SHA256SUMS) >&2; then
  fail "checksum verification of $third_party/SHA256SUMS failed; refusing to build"
fi

# ---------------------------------------------------------------- arch
machine=$(uname -m)
case $machine in
  x86_64) triplet=x86_64-linux-musl hw=x86_64 asm_dir=/usr/include/x86_64-linux-gnu/asm ;;
  *) fail "unsupported architecture '$machine': only x86_64 is supported" ;;
esac

jobs=${SVKIT_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
case $jobs in
  '' | *[!0-9]* | 0*) fail "SVKIT_JOBS must be a positive integer, not '$jobs'" ;;
  *) ;;
esac

# ---------------------------------------------------------------- 2. cache
key=$(cat "$third_party/SHA256SUMS" "$script_path" | sha256sum | cut -c1-16)
cache_root=${SVKIT_CACHE:-/var/cache/svkit}/s6-overlay
final=$cache_root/$key

# is_complete DIR: true when DIR holds every tarball, each listed in its
# SHA256SUMS, and that file verifies.
is_complete() {
  [ -f "$1/SHA256SUMS" ] || return 1
  for t in $TARBALLS; do
    [ -f "$1/$t" ] || return 1
    grep -q "  $t\$" "$1/SHA256SUMS" || return 1
  done
  (cd "$1" && sha256sum --quiet --strict -c SHA256SUMS) >/dev/null 2>&1
}

if is_complete "$final"; then
  printf '%s\n' "$final"
  exit 0
fi

# ---------------------------------------------------------------- tools
need_tools() {
  for t in musl-gcc git make xz tar sha256sum; do
    command -v "$t" >/dev/null 2>&1 || return 0
  done
  [ -d /usr/include/linux ] && [ -d /usr/include/asm-generic ] && [ -d "$asm_dir" ] && return 1
  return 0
}
if need_tools; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing build tools (musl-tools make git xz-utils linux-libc-dev)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || fail "apt-get update failed"
    apt-get install -y -qq musl-tools make git xz-utils linux-libc-dev >&2 \
      || fail "apt-get install failed"
  fi
  need_tools && fail "missing build tools: need musl-gcc (musl-tools), git, make, xz (xz-utils), tar, sha256sum and kernel headers (linux-libc-dev)"
fi

# ---------------------------------------------------------------- work dirs
mkdir -p "$cache_root" 2>/dev/null || fail "cannot create cache directory $cache_root (set SVKIT_CACHE)"
if [ -e "$final" ]; then
  say "removing incomplete cache entry $final"
  rm -rf "$final"
fi

work=
stage=
cleanup() {
  [ -z "$work" ] || rm -rf "$work"
  [ -z "$stage" ] || rm -rf "$stage"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

work=$(mktemp -d "${TMPDIR:-/tmp}/svkit-s6-overlay.XXXXXX")
work=$(cd -P -- "$work" && pwd)
log=$work/build.log
: >"$log"
stage=$cache_root/$key.tmp.$$
rm -rf "$stage"
mkdir "$stage"

# run CMD...: run with output appended to the log; on failure show its tail.
run() {
  if ! "$@" >>"$log" 2>&1; then
    say "command failed: $*"
    say "last 40 lines of the build log:"
    tail -n 40 "$log" >&2
    fail "build failed"
  fi
}

start=$(date +%s)
say "building s6-overlay $S6_OVERLAY_VERSION for $hw in $work (cache key $key)"

# ---------------------------------------------------------------- unpack
src=$work/s6-overlay-v$S6_OVERLAY_VERSION
out=$work/output
run tar -xzf "$third_party/s6-overlay-v$S6_OVERLAY_VERSION.tar.gz" -C "$work"
if [ ! -f "$src/Makefile" ] || [ ! -f "$src/conf/versions" ]; then
  fail "unexpected layout of s6-overlay-v$S6_OVERLAY_VERSION.tar.gz"
fi

# A deterministic, config-independent git for the source repositories.
GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
GIT_AUTHOR_NAME=svkit GIT_AUTHOR_EMAIL=svkit@localhost
GIT_COMMITTER_NAME=svkit GIT_COMMITTER_EMAIL=svkit@localhost
export GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

mkdir -p "$out/sources"
for pkg in $SKAWARE; do
  name=$(printf '%s' "$pkg" | tr '[:upper:]_' '[:lower:]-')
  tag=$(sed -n "s/^${pkg}_VERSION=//p" "$src/conf/versions")
  [ -n "$tag" ] || fail "no ${pkg}_VERSION in conf/versions"
  tarball=$third_party/$name-$tag.tar.gz
  [ -f "$tarball" ] || fail "missing source tarball $tarball (s6-overlay pins $name $tag)"
  run tar -xzf "$tarball" -C "$out/sources"
  [ -f "$out/sources/$name-$tag/Makefile" ] || fail "unexpected layout of $tarball"
  mv "$out/sources/$name-$tag" "$out/sources/$name"
  run git -C "$out/sources/$name" init -q
  run git -C "$out/sources/$name" add -A
  run git -C "$out/sources/$name" -c commit.gpgsign=false commit -q -m "$name $tag"
  run git -C "$out/sources/$name" tag "$tag"
done

# ---------------------------------------------------------------- toolchain
tc=$work/toolchain
mkdir -p "$tc/bin" "$tc/include"
ln -s /usr/include/linux "$tc/include/linux"
ln -s /usr/include/asm-generic "$tc/include/asm-generic"
ln -s "$asm_dir" "$tc/include/asm"
musl_gcc=$(command -v musl-gcc)
printf '#!/bin/sh\nexec %s -idirafter %s "$@"\n' "$musl_gcc" "$tc/include" >"$tc/bin/$triplet-gcc"
for t in ar ranlib strip; do
  p=$(command -v "$t") || fail "$t not found (binutils)"
  printf '#!/bin/sh\nexec %s "$@"\n' "$p" >"$tc/bin/$triplet-$t"
done
chmod 755 "$tc/bin/"*

# ---------------------------------------------------------------- build
# Keep the caller's compiler settings out of skarnet's configure.
unset CC CFLAGS CPPFLAGS LDFLAGS AR RANLIB STRIP CROSS_COMPILE MAKEFLAGS MFLAGS
say "compiling (make -j$jobs; output goes to a log shown only on failure)"
run make -C "$src" -j"$jobs" \
  OUTPUT="$out" ARCH="$triplet" TOOLCHAIN_PATH="$tc" SKAWARE="$SKAWARE" \
  rootfs-overlay-noarch-tarball rootfs-overlay-arch-tarball \
  symlinks-overlay-noarch-tarball symlinks-overlay-arch-tarball

# ---------------------------------------------------------------- verify
for t in $TARBALLS; do
  [ -s "$out/$t" ] || fail "make did not produce $t"
  tar -tJf "$out/$t" >"$work/$t.list" 2>>"$log" || fail "$t is not a readable tar.xz"
done
grep -qx -e './init' -e 'init' "$work/s6-overlay-noarch.tar.xz.list" \
  || fail "s6-overlay-noarch.tar.xz has no ./init"
grep -q '^\(\./\)\{0,1\}package/admin/s6-overlay-' "$work/s6-overlay-noarch.tar.xz.list" \
  || fail "s6-overlay-noarch.tar.xz has no package/admin/s6-overlay-*"
grep -q -e '^\(\./\)\{0,1\}command/.' -e '^\(\./\)\{0,1\}package/admin/s6-' "$work/s6-overlay-$hw.tar.xz.list" \
  || fail "s6-overlay-$hw.tar.xz has neither command/ entries nor package/admin/s6-*"
for t in s6-overlay-symlinks-noarch.tar.xz s6-overlay-symlinks-arch.tar.xz; do
  grep -q '^\(\./\)\{0,1\}usr/bin/.' "$work/$t.list" || fail "$t has no usr/bin/ links"
done

# ---------------------------------------------------------------- publish
for t in $TARBALLS; do
  mv "$out/$t" "$stage/$t"
done
# shellcheck disable=SC2086 # TARBALLS is a word list
(cd "$stage" && sha256sum $TARBALLS >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
is_complete "$stage" || fail "staged result in $stage does not verify"

if is_complete "$final"; then
  say "a concurrent build already published $final; keeping it"
else
  rm -rf "$final"
  mv "$stage" "$final" || fail "cannot move $stage to $final"
  # If another build created $final between the rm and the mv, mv nested ours.
  rm -rf "${final:?}/$(basename -- "$stage")"
  stage=
fi
is_complete "$final" || fail "cache entry $final does not verify after publishing"

say "done in $(( $(date +%s) - start ))s"
printf '%s\n' "$final"
