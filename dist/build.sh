#!/bin/sh
# `make dist`: the release tarball, laid out like s6-overlay's own to be
# extracted at / (beside them, in any order):
#
#   usr/local/bin/svkit                       the multi-call binary (static)
#   usr/local/bin/svctl, svkit-init,          symlinks to it; the name it
#     svkit-lifeline, svkit-reconcile,          is run as picks the program
#     svkit-wrap
#   etc/cont-init.d/50-svkit-reconcile        the boot hook (rootfs/)
#   etc/cont-finish.d/50-svkit-stop           the stop hook (rootfs/)
#   etc/services.d/svkit-log-watch/run        the loggers' watcher (rootfs/)
#
# as dist/svkit-VERSION-ARCH.tar.xz, with dist/SHA256SUMS beside it. No
# config (/etc/svkit/*.json is the image's own) and no directory entries:
# extracting never changes the owner or mode of /etc, /usr or /usr/local.
# Files are root:root, dated from the last commit (SOURCE_DATE_EPOCH), in
# name order: the same tree gives the same bytes.
#
#   dist/build.sh                 build for this host (x86_64 here)
#   TARGET=aarch64-unknown-linux-gnu dist/build.sh
#                                 cross-build: needs that Rust target and a
#                                 linker for it (docs/image.md, "aarch64")
#
# Prints the tarball's path on stdout; progress on stderr.
set -eu
prog=dist/build.sh
fail() { printf '%s: fatal: %s\n' "$prog" "$*" >&2; exit 1; }

ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
cd "$ROOT"
CARGO=${CARGO:-cargo}
TARGET=${TARGET:-$(rustc --print host-tuple)}
ARCH=${TARGET%%-*}
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$VERSION" ] || fail "no version in Cargo.toml's [workspace.package]"
PROGRAMS="svctl svkit-init svkit-lifeline svkit-reconcile svkit-wrap"
NAME=svkit-$VERSION-$ARCH

"$CARGO" build --release --locked --target "$TARGET" -p svkit-cli >&2 ||
  fail "cargo build failed"
bin=target/$TARGET/release/svkit
# The link table in the binary and the one here must agree.
listed=$("$bin" --list | tr '\n' ' ') || fail "$bin --list failed"
[ "$listed" = "$PROGRAMS " ] || fail "$bin --list says '$listed', this script ships '$PROGRAMS'"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/usr/local/bin" "$stage/etc/cont-init.d" "$stage/etc/cont-finish.d" \
  "$stage/etc/services.d/svkit-log-watch"
install -m 0755 "$bin" "$stage/usr/local/bin/svkit"
for p in $PROGRAMS; do ln -s svkit "$stage/usr/local/bin/$p"; done
install -m 0755 rootfs/etc/cont-init.d/50-svkit-reconcile "$stage/etc/cont-init.d/"
install -m 0755 rootfs/etc/cont-finish.d/50-svkit-stop "$stage/etc/cont-finish.d/"
install -m 0755 rootfs/etc/services.d/svkit-log-watch/run "$stage/etc/services.d/svkit-log-watch/"

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
mkdir -p dist
out=dist/$NAME.tar.xz
# Files and links only (find ! -type d), no ./ prefix: s6-overlay's layout.
(cd "$stage" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) > "$stage.list"
trap 'rm -rf "$stage" "$stage.list"' EXIT
tar -C "$stage" --no-recursion --owner=0 --group=0 --numeric-owner \
  --mtime="@$epoch" -T "$stage.list" -cf - | xz -9 -T1 > "$out.tmp" ||
  fail "tar | xz failed"
mv "$out.tmp" "$out"
(cd dist && sha256sum "$NAME.tar.xz" > SHA256SUMS) || fail "sha256sum failed"
printf '%s: %s (%s bytes), dist/SHA256SUMS\n' "$prog" "$out" "$(wc -c < "$out" | tr -d ' ')" >&2
printf '%s\n' "$out"
