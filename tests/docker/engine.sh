#!/bin/sh
# A real Docker engine for the tests and the demo, on a machine without a
# registry, and the offline build of the shipped Dockerfile.
#
#   tests/docker/engine.sh up         make `docker info` answer (start dockerd
#                                     if needed) and make sure the base image
#                                     debian:bookworm-slim exists
#   tests/docker/engine.sh down       stop dockerd, only if `up` started it
#   tests/docker/engine.sh image TAG  build the Dockerfile's offline path
#                                     (--target prebuilt, S6_OVERLAY_SOURCE=local)
#   tests/docker/engine.sh plain-image TAG
#                                     build tests/docker/plain-s6.Dockerfile:
#                                     Debian with its own s6 package, svkit,
#                                     no s6-overlay (svkit-init supervises)
#   tests/docker/engine.sh scratch-image TAG
#                                     build tests/docker/scratch.Dockerfile:
#                                     FROM scratch, busybox-static, s6-overlay,
#                                     `make dist`'s tarball; no libc
#
# `up`, when no engine answers and run as root: installs what is missing of
# Debian's docker.io and mmdebstrap, starts `dockerd --iptables=false
# --bridge=none` in the background (no bridge network: run containers with
# --network none, build with --network host), waits for it, and records its
# pid in /run/svkit-test-dockerd.pid. With no debian:bookworm-slim image it
# makes one with `mmdebstrap --variant=minbase` (from Debian's package
# mirror, cached as $SVKIT_CACHE/debian-bookworm-minbase.tar) and `docker
# import`s it. `down` stops that dockerd and nothing else; images are left
# alone.
#
# `image TAG`: the s6-overlay tarballs from tests/s6-overlay/build.sh (built
# from source, cached) go to dist/s6-overlay/ with their SHA256SUMS, the two
# static release binaries (`svkit`, the multi-call binary, and the demo's
# `app`; cargo build --release on this host) go to dist/bin/, then
#   docker build --force-rm --network host --target prebuilt \
#     --build-arg S6_OVERLAY_SOURCE=local -t TAG .
# With the legacy builder (a client without buildx) that builds the stages
# base and prebuilt only; the rust image is never needed.
#
# `scratch-image TAG`: Debian's busybox-static (`apt-get download`, cached
# as $SVKIT_CACHE/busybox-static_VERSION.deb, VERSION apt's candidate; a
# cached one is used when apt knows no candidate), the s6-overlay tarballs,
# dist/build.sh's tarball and the demo app, built FROM scratch.
#
# Environment:
#   SVKIT_CACHE    cache root (default /var/cache/svkit)
#   SVKIT_DOCKER   the docker client to build with (default: docker on PATH);
#                  e.g. SVKIT_DOCKER=/usr/bin/docker DOCKER_BUILDKIT=1 for
#                  BuildKit with Debian's 20.10 client
#   CARGO          cargo (default cargo)
#
# Errors go to stderr as `engine.sh: fatal: ...` with exit 1; progress as
# `engine.sh: ...`.

set -eu

prog=engine.sh
say() { printf '%s: %s\n' "$prog" "$*" >&2; }
fail() { printf '%s: fatal: %s\n' "$prog" "$*" >&2; exit 1; }

ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
CACHE=${SVKIT_CACHE:-/var/cache/svkit}
DOCKER=${SVKIT_DOCKER:-docker}
CARGO=${CARGO:-cargo}
PIDFILE=/run/svkit-test-dockerd.pid
BASE_IMAGE=debian:bookworm-slim
BASE_TAR=$CACHE/debian-bookworm-minbase.tar
BINARIES="svkit app"

engine_answers() { "$DOCKER" info >/dev/null 2>&1; }

# our_dockerd: the pid in $PIDFILE, if that process is still a dockerd.
our_dockerd() {
  [ -r "$PIDFILE" ] || return 1
  _p=$(cat "$PIDFILE" 2>/dev/null) || return 1
  case $_p in '' | *[!0-9]*) return 1 ;; esac
  [ "$(cat "/proc/$_p/comm" 2>/dev/null)" = dockerd ] || return 1
  printf '%s\n' "$_p"
}

install_missing() {
  missing=""
  command -v dockerd >/dev/null 2>&1 || missing="$missing docker.io"
  command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
  [ -n "$missing" ] || return 0
  command -v apt-get >/dev/null 2>&1 || fail "missing:$missing, and there is no apt-get to install it"
  say "installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || fail "apt-get update failed"
  # shellcheck disable=SC2086 # one word per package
  apt-get install -y -qq --no-install-recommends $missing >&2 || fail "apt-get install$missing failed"
}

start_dockerd() {
  if p=$(our_dockerd); then
    fail "the dockerd started earlier (pid $p, $PIDFILE) does not answer; see its log, or run '$prog down' first"
  fi
  if pidof dockerd >/dev/null 2>&1; then
    fail "a dockerd runs (pid $(pidof dockerd)) but 'docker info' fails; not starting a second one"
  fi
  log=$(mktemp "${TMPDIR:-/tmp}/svkit-dockerd.XXXXXX.log")
  say "starting dockerd --iptables=false --bridge=none (log: $log)"
  # Its own session, stdin closed: it outlives this script.
  setsid dockerd --iptables=false --bridge=none </dev/null >"$log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"$PIDFILE"
  i=0
  until [ -S /var/run/docker.sock ] && engine_answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      say "last lines of $log:"
      tail -n 20 "$log" >&2
      fail "dockerd exited during startup"
    fi
    i=$((i + 1))
    if [ "$i" -ge 120 ]; then
      say "last lines of $log:"
      tail -n 20 "$log" >&2
      stop_dockerd
      fail "dockerd did not answer within 60 s"
    fi
    sleep 0.5
  done
  # dockerd's own pid file names the daemon itself (should setsid have forked).
  if p=$(cat /var/run/docker.pid 2>/dev/null) && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dockerd ]; then
    pid=$p
    printf '%s\n' "$pid" >"$PIDFILE"
  fi
  say "dockerd answers (pid $pid)"
}

stop_dockerd() {
  if ! p=$(our_dockerd); then
    rm -f "$PIDFILE"
    say "no dockerd started by $prog runs; leaving the engine alone"
    return 0
  fi
  say "stopping dockerd (pid $p)"
  kill -TERM "$p" 2>/dev/null || true
  i=0
  while [ -d "/proc/$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dockerd ]; do
    i=$((i + 1))
    if [ "$i" -ge 60 ]; then
      say "dockerd (pid $p) still runs after 30 s; sending KILL"
      kill -KILL "$p" 2>/dev/null || true
      break
    fi
    sleep 0.5
  done
  rm -f "$PIDFILE"
}

ensure_base_image() {
  if "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    return 0
  fi
  if [ ! -s "$BASE_TAR" ]; then
    command -v mmdebstrap >/dev/null 2>&1 || fail "no $BASE_IMAGE image and no mmdebstrap to make one (apt-get install mmdebstrap)"
    mkdir -p "$CACHE" || fail "cannot create $CACHE (set SVKIT_CACHE)"
    say "making $BASE_IMAGE with mmdebstrap --variant=minbase bookworm (about 30 s)"
    tmp=$BASE_TAR.tmp.$$
    if ! mmdebstrap --quiet --variant=minbase --format=tar bookworm "$tmp" >&2; then
      rm -f "$tmp"
      fail "mmdebstrap failed (is Debian's package mirror reachable?)"
    fi
    mv "$tmp" "$BASE_TAR"
  else
    say "reusing $BASE_TAR"
  fi
  "$DOCKER" import --change 'CMD ["bash"]' "$BASE_TAR" "$BASE_IMAGE" >/dev/null ||
    fail "docker import $BASE_TAR $BASE_IMAGE failed"
  say "imported $BASE_IMAGE from $BASE_TAR"
}

cmd_up() {
  if ! engine_answers; then
    [ "$(id -u)" = 0 ] || fail "no Docker engine answers, and starting one needs root"
    install_missing
    start_dockerd
  fi
  ensure_base_image
}

cmd_image() {
  tag=$1
  engine_answers || fail "no Docker engine answers ('$prog up' first)"

  say "s6-overlay tarballs: tests/s6-overlay/build.sh"
  s6dir=$("$ROOT/tests/s6-overlay/build.sh") || fail "tests/s6-overlay/build.sh failed"
  [ -f "$s6dir/SHA256SUMS" ] || fail "$s6dir has no SHA256SUMS"
  dst=$ROOT/dist/s6-overlay
  mkdir -p "$dst"
  rm -f "$dst"/s6-overlay-*.tar.xz "$dst/SHA256SUMS"
  for f in "$s6dir"/s6-overlay-*.tar.xz; do
    [ -f "$f" ] || fail "no s6-overlay-*.tar.xz in $s6dir"
    cp "$f" "$dst/"
  done
  cp "$s6dir/SHA256SUMS" "$dst/SHA256SUMS"
  (cd "$dst" && sha256sum --quiet --strict -c SHA256SUMS) >&2 || fail "the tarballs copied to $dst do not match their SHA256SUMS"

  # The whole workspace, as `make release` builds it: the same features,
  # so what make built is reused instead of built again for a subset.
  say "binaries: $CARGO build --release --workspace"
  (cd "$ROOT" && "$CARGO" build --release --workspace) >&2 || fail "cargo build failed"
  rel=$ROOT/target/$(rustc --print host-tuple)/release
  mkdir -p "$ROOT/dist/bin"
  rm -f "$ROOT/dist/bin/svkit-reconcile" "$ROOT/dist/bin/svkit-wrap" "$ROOT/dist/bin/svctl" "$ROOT/dist/bin/svkit-lifeline"
  for b in $BINARIES; do
    install -m 0755 "$rel/$b" "$ROOT/dist/bin/$b" || fail "cannot copy $rel/$b to dist/bin/"
  done

  say "$DOCKER build --force-rm --network host --target prebuilt --build-arg S6_OVERLAY_SOURCE=local -t $tag $ROOT"
  t0=$(date +%s)
  "$DOCKER" build --force-rm --network host --target prebuilt --build-arg S6_OVERLAY_SOURCE=local -t "$tag" "$ROOT" >&2 ||
    fail "docker build of $tag failed"
  say "built $tag in $(($(date +%s) - t0)) s"
}

# busybox_static DIR: Debian's static busybox binary, copied to DIR/busybox.
busybox_static() {
  ver=$(apt-cache policy busybox-static 2>/dev/null | sed -n 's/^ *Candidate: //p')
  case $ver in '' | '(none)') ver= ;; esac
  if [ -n "$ver" ]; then
    # A version may carry an epoch (1:1.35.0-...): not in a file name.
    deb=$CACHE/busybox-static_$(printf '%s' "$ver" | tr ':' '_').deb
    if [ ! -s "$deb" ]; then
      mkdir -p "$CACHE" || fail "cannot create $CACHE (set SVKIT_CACHE)"
      say "apt-get download busybox-static=$ver"
      tmp=$(mktemp -d)
      (cd "$tmp" && apt-get download -q "busybox-static=$ver" >&2) ||
        { rm -rf "$tmp"; fail "apt-get download busybox-static failed (apt-get update first?)"; }
      mv "$tmp"/busybox-static_*.deb "$deb" || { rm -rf "$tmp"; fail "apt-get download left no .deb"; }
      rm -rf "$tmp"
    fi
  else
    deb=$(find "$CACHE" -maxdepth 1 -name "busybox-static_*.deb" 2>/dev/null | sort | tail -n 1)
    [ -n "$deb" ] || fail "apt knows no busybox-static and none is cached in $CACHE (apt-get update?)"
  fi
  x=$(mktemp -d)
  dpkg-deb -x "$deb" "$x" || { rm -rf "$x"; fail "dpkg-deb -x $deb failed"; }
  install -m 0755 "$x/bin/busybox" "$1/busybox" || { rm -rf "$x"; fail "no bin/busybox in $deb"; }
  rm -rf "$x"
}

# The .debs of Debian's s6 and the libraries it needs beyond a minbase
# system, downloaded once (apt's candidates) into $CACHE/debs, copied to DIR.
S6_DEBS="s6 libs6-2.11 libskarnet2.13 libexecline2.9"
s6_debs() {
  mkdir -p "$CACHE/debs" || fail "cannot create $CACHE/debs (set SVKIT_CACHE)"
  for p in $S6_DEBS; do
    if ! ls "$CACHE/debs/${p}_"*.deb >/dev/null 2>&1; then
      say "apt-get download $p"
      (cd "$CACHE/debs" && apt-get download -q "$p" >&2) || fail "apt-get download $p failed (apt-get update first?)"
    fi
    cp "$CACHE/debs/${p}_"*.deb "$1/" || fail "no $p .deb in $CACHE/debs"
  done
}

cmd_plain_image() {
  tag=$1
  engine_answers || fail "no Docker engine answers ('$prog up' first)"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  mkdir -p "$ctx/debs" "$ctx/bin"
  s6_debs "$ctx/debs"
  (cd "$ROOT" && "$CARGO" build --release --workspace) >&2 || fail "cargo build failed"
  rel=$ROOT/target/$(rustc --print host-tuple)/release
  install -m 0755 "$rel/svkit" "$rel/app" "$ctx/bin/"
  cp -a "$ROOT/rootfs" "$ctx/rootfs"
  cp "$ROOT/tests/docker/plain-s6.Dockerfile" "$ctx/Dockerfile"
  say "$DOCKER build --force-rm -t $tag (Debian's s6, no s6-overlay)"
  "$DOCKER" build --force-rm --network host -t "$tag" "$ctx" >&2 || fail "docker build of $tag failed"
  rm -rf "$ctx"
  trap - EXIT
}

cmd_scratch_image() {
  tag=$1
  engine_answers || fail "no Docker engine answers ('$prog up' first)"
  s6dir=$("$ROOT/tests/s6-overlay/build.sh") || fail "tests/s6-overlay/build.sh failed"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  mkdir -p "$ctx/s6" "$ctx/svkit" "$ctx/etc/svkit"
  busybox_static "$ctx"
  for t in noarch x86_64 symlinks-noarch; do
    cp "$s6dir/s6-overlay-$t.tar.xz" "$ctx/s6/" || fail "no s6-overlay-$t.tar.xz in $s6dir"
  done
  cp "$s6dir/SHA256SUMS" "$ctx/s6/"
  # Only the lines of the tarballs copied: sha256sum -c checks each listed.
  grep -E ' [ *]?s6-overlay-(noarch|x86_64|symlinks-noarch)[.]tar[.]xz$' "$s6dir/SHA256SUMS" > "$ctx/s6/SHA256SUMS"
  say "svkit: dist/build.sh"
  tarball=$(CARGO=$CARGO "$ROOT/dist/build.sh") || fail "dist/build.sh failed"
  cp "$ROOT/$tarball" "$ROOT/dist/SHA256SUMS" "$ctx/svkit/"
  (cd "$ROOT" && "$CARGO" build --release -p svkit-demo-app) >&2 || fail "cargo build -p svkit-demo-app failed"
  install -m 0755 "$ROOT/target/$(rustc --print host-tuple)/release/app" "$ctx/app"
  printf 'root:x:0:0:root:/root:/bin/sh\napp:x:10001:10001::/data:/bin/false\n' > "$ctx/etc/passwd"
  printf 'root:x:0:\napp:x:10001:\n' > "$ctx/etc/group"
  cp "$ROOT/rootfs/etc/svkit/"*.json "$ctx/etc/svkit/"
  cp "$ROOT/tests/docker/scratch.Dockerfile" "$ctx/Dockerfile"
  say "$DOCKER build --force-rm --network host -t $tag (FROM scratch)"
  "$DOCKER" build --force-rm --network host -t "$tag" "$ctx" >&2 || fail "docker build of $tag failed"
  rm -rf "$ctx"
  trap - EXIT
}

case ${1:-} in
  up) [ "$#" = 1 ] || fail "usage: $prog up"; cmd_up ;;
  down) [ "$#" = 1 ] || fail "usage: $prog down"; stop_dockerd ;;
  image)
    if [ "$#" != 2 ] || [ -z "$2" ]; then fail "usage: $prog image TAG"; fi
    cmd_image "$2"
    ;;
  plain-image)
    [ "$#" = 2 ] || fail "usage: $prog plain-image TAG"
    cmd_plain_image "$2"
    ;;
  scratch-image)
    if [ "$#" != 2 ] || [ -z "$2" ]; then fail "usage: $prog scratch-image TAG"; fi
    cmd_scratch_image "$2"
    ;;
  -h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" ;;
  *) fail "usage: $prog up | down | image TAG | scratch-image TAG" ;;
esac
