# svkit demo image: genuine s6-overlay v3 as PID 1, svkit's binaries, the demo
# app, and the demo rootfs (rootfs/ in this repository).
#
#   docker build -t svkit-demo .
#   docker run -d --name demo svkit-demo                 # = `app gateway run`, supervised
#   docker exec demo svctl status
#   docker exec demo s6-svstat /run/service/gateway-default
#   docker run --rm svkit-demo gateway run --no-supervise  # foreground, its exit code is the container's
#
# The default build (no build args, last stage) compiles svkit in a Rust
# builder stage and downloads the pinned s6-overlay release from GitHub. Its
# builder uses `RUN --mount` cache mounts, so it needs BuildKit (Docker's
# default builder since Engine 23; on older engines `DOCKER_BUILDKIT=1 docker
# build .`). BuildKit's built-in Dockerfile frontend supports `RUN --mount`
# and sets TARGETARCH: no `# syntax=` line, so nothing is fetched from a
# registry for the frontend itself.
#
# Offline / air-gapped (docs/image.md, "Building offline"): put the
# s6-overlay tarballs and their SHA256SUMS in dist/s6-overlay/, the two
# prebuilt binaries (`svkit` and the demo's `app`) in dist/bin/, then
#
#   docker build --target prebuilt --build-arg S6_OVERLAY_SOURCE=local -t svkit-demo .
#
# That works with BuildKit and with the legacy builder alike: the `prebuilt`
# stage comes before the Rust `builder` stage, and the legacy builder builds
# only the stages up to its --target, so the rust image is never pulled. The
# checksums stay on in both modes.
#
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 .
# See docs/image.md to add svkit to your own s6-overlay image.

############################################################################
# Stage `base`: the runtime image without svkit's binaries: s6-overlay,
# the runtime user, the rootfs, and the image settings. The other two
# runtime stages add the binaries on top of it.
############################################################################
FROM debian:bookworm-slim AS base

# Where s6-overlay comes from:
#   release (default): the pinned GitHub release, downloaded with curl and
#     checked against the SHA256 values below.
#   local: the tarballs in the build context's dist/s6-overlay/, checked
#     against that directory's own SHA256SUMS (a build from source differs
#     byte-wise from the release, so the pins below cannot apply). A missing
#     SHA256SUMS, or one that does not list a tarball the image needs, fails
#     the build.
ARG S6_OVERLAY_SOURCE=release
# s6-overlay pinned by version and by the SHA256 of every tarball we extract
# (the same values are pinned by two independent public Dockerfiles).
# Changing the version means changing all four hashes; a wrong hash fails the
# build closed instead of extracting an unverified tarball.
ARG S6_OVERLAY_VERSION=3.2.3.0
ARG S6_OVERLAY_NOARCH_SHA256=b720f9d9340efc8bb07528b9743813c836e4b02f8693d90241f047998b4c53cf
ARG S6_OVERLAY_X86_64_SHA256=a93f02882c6ed46b21e7adb5c0add86154f01236c93cd82c7d682722e8840563
ARG S6_OVERLAY_AARCH64_SHA256=0952056ff913482163cc30e35b2e944b507ba1025d78f5becbb89367bf344581
ARG S6_OVERLAY_SYMLINKS_NOARCH_SHA256=a60dc5235de3ecbcf874b9c1f18d73263ab99b289b9329aa950e8729c4789f0e
# s6-overlay-symlinks-arch.tar.xz (links the s6 binaries into /usr/bin): no
# public record gives its 3.2.3.0 SHA256, so in release mode it is not
# extracted unless you pass one you verified yourself; /command first on
# PATH (ENV below) reaches the same binaries. In local mode it is extracted
# when dist/s6-overlay/SHA256SUMS lists it.
ARG S6_OVERLAY_SYMLINKS_ARCH_SHA256=
# Set by BuildKit to the platform being built (amd64, arm64, ...). Empty with
# the legacy builder: the RUN below then falls back to dpkg's architecture,
# which uses the same names.
ARG TARGETARCH

# Always there: dist/s6-overlay/README.md is committed (release mode ignores
# the directory; it is removed below in both modes).
COPY dist/s6-overlay/ /tmp/s6-overlay-local/

# Install s6-overlay:
#  - release: xz-utils for `tar -J`, curl + ca-certificates for the HTTPS
#    download; curl --retry because GitHub's release CDN has transient
#    failures (ADD cannot retry); --fail so an HTTP error page is never saved
#    as a tarball; curl is purged afterwards: the runtime needs no downloader
#    (the health check is `svctl status`, sidecar probes are native in
#    svkit-lifeline).
#  - local: xz-utils only if the base image has no xz; no curl.
#  - apt-get clean: a base image without Debian's docker-clean apt hook (one
#    made with mmdebstrap, say) would otherwise keep apt's ~80 MB package
#    caches in this layer.
#  - both: every tarball is checked with `sha256sum -c` BEFORE anything is
#    extracted (a checksum file, not a pipe, so a failing check fails the
#    RUN); the symlinks-noarch tarball adds /usr/bin links to s6-overlay's
#    own scripts (with-contenv, ...).
# Debian package versions are not pinned (DL3008): bookworm's archive drops
# superseded versions, so a pin breaks the build at the next point release;
# what must be reproducible here (s6-overlay) is pinned by hash above.
# hadolint ignore=DL3008
RUN set -eu; \
    case "${TARGETARCH:-$(dpkg --print-architecture)}" in \
      amd64) s6_arch=x86_64;  s6_arch_sha256="${S6_OVERLAY_X86_64_SHA256}" ;; \
      arm64) s6_arch=aarch64; s6_arch_sha256="${S6_OVERLAY_AARCH64_SHA256}" ;; \
      *) echo "s6-overlay: unsupported TARGETARCH '${TARGETARCH:-}' (amd64 and arm64 are pinned)" >&2; exit 1 ;; \
    esac; \
    dl=/tmp/s6-overlay; \
    local_dir=/tmp/s6-overlay-local; \
    mkdir -p "${dl}"; \
    tarballs="noarch ${s6_arch} symlinks-noarch"; \
    case "${S6_OVERLAY_SOURCE}" in \
      release) \
        apt-get update; \
        apt-get install -y --no-install-recommends xz-utils curl ca-certificates; \
        if [ -n "${S6_OVERLAY_SYMLINKS_ARCH_SHA256}" ]; then tarballs="${tarballs} symlinks-arch"; fi; \
        base="https://github.com/just-containers/s6-overlay/releases/download/v${S6_OVERLAY_VERSION}"; \
        for t in ${tarballs}; do \
          curl --fail --silent --show-error --location \
               --retry 5 --retry-delay 2 --retry-connrefused \
               -o "${dl}/s6-overlay-${t}.tar.xz" "${base}/s6-overlay-${t}.tar.xz"; \
        done; \
        { \
          echo "${S6_OVERLAY_NOARCH_SHA256}  ${dl}/s6-overlay-noarch.tar.xz"; \
          echo "${s6_arch_sha256}  ${dl}/s6-overlay-${s6_arch}.tar.xz"; \
          echo "${S6_OVERLAY_SYMLINKS_NOARCH_SHA256}  ${dl}/s6-overlay-symlinks-noarch.tar.xz"; \
          if [ -n "${S6_OVERLAY_SYMLINKS_ARCH_SHA256}" ]; then \
            echo "${S6_OVERLAY_SYMLINKS_ARCH_SHA256}  ${dl}/s6-overlay-symlinks-arch.tar.xz"; \
          fi; \
        } > "${dl}/SHA256SUMS" ;; \
      local) \
        sums="${local_dir}/SHA256SUMS"; \
        if [ ! -f "${sums}" ]; then \
          echo "s6-overlay: S6_OVERLAY_SOURCE=local needs dist/s6-overlay/SHA256SUMS (refusing unverified tarballs)" >&2; exit 1; \
        fi; \
        if grep -Eq "^[0-9a-f]{64} [ *]s6-overlay-symlinks-arch[.]tar[.]xz\$" "${sums}"; then \
          tarballs="${tarballs} symlinks-arch"; \
        elif [ -e "${local_dir}/s6-overlay-symlinks-arch.tar.xz" ]; then \
          echo "s6-overlay: dist/s6-overlay/s6-overlay-symlinks-arch.tar.xz is not listed in SHA256SUMS (refusing an unverified tarball)" >&2; exit 1; \
        fi; \
        : > "${dl}/SHA256SUMS"; \
        for t in ${tarballs}; do \
          f="s6-overlay-${t}.tar.xz"; \
          sum=$(sed -n -E "s/^([0-9a-f]{64}) [ *]s6-overlay-${t}[.]tar[.]xz\$/\\1/p" "${sums}"); \
          case "${sum}" in \
            ????????????????????????????????????????????????????????????????) ;; \
            *) echo "s6-overlay: dist/s6-overlay/SHA256SUMS must list ${f} exactly once (found: '${sum}')" >&2; exit 1 ;; \
          esac; \
          if [ ! -f "${local_dir}/${f}" ]; then \
            echo "s6-overlay: dist/s6-overlay/${f} is missing" >&2; exit 1; \
          fi; \
          cp "${local_dir}/${f}" "${dl}/${f}"; \
          echo "${sum}  ${dl}/${f}" >> "${dl}/SHA256SUMS"; \
        done; \
        if ! command -v xz >/dev/null 2>&1; then \
          apt-get update; \
          apt-get install -y --no-install-recommends xz-utils; \
        fi ;; \
      *) echo "s6-overlay: S6_OVERLAY_SOURCE must be release or local, not '${S6_OVERLAY_SOURCE}'" >&2; exit 1 ;; \
    esac; \
    sha256sum -c --strict "${dl}/SHA256SUMS"; \
    for t in ${tarballs}; do \
      tar -C / -Jxpf "${dl}/s6-overlay-${t}.tar.xz"; \
    done; \
    rm -rf "${dl}" "${local_dir}"; \
    if [ "${S6_OVERLAY_SOURCE}" = release ]; then apt-get purge -y --auto-remove curl; fi; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*

# The runtime user the slots and the foreground CMD run as ("user": "app" in
# /etc/svkit/10-app.json). uid/gid are fixed so files on a reused /data
# volume keep their owner across image rebuilds; override with --build-arg.
# No login shell, no home skeleton: /data is its home and the data volume.
# (Not --system: that range is 100-999 and useradd would warn about 10001;
# --no-log-init keeps a high uid from growing a sparse /var/log/lastlog.)
# /data belongs to app and to group 0, group-writable: a container run
# under an arbitrary uid with gid 0 (`--user 123456:0`, OpenShift's
# restricted policy) can make its state and log dirs there too.
ARG APP_UID=10001
ARG APP_GID=10001
RUN groupadd --gid "${APP_GID}" app \
 && useradd --no-log-init --uid "${APP_UID}" --gid app \
        --home-dir /data --no-create-home --shell /usr/sbin/nologin app \
 && mkdir -p /data \
 && chown app:0 /data \
 && chmod 0775 /data

# The demo rootfs: /etc/svkit/10-app.json (the slots and the redirect),
# /etc/cont-init.d/50-svkit-reconcile (renders the slots at every boot),
# /etc/cont-finish.d/50-svkit-stop (stops them before the final TERM/KILL).
# COPY keeps the executable bits of the hooks as committed.
COPY rootfs/ /

# PATH: /command first, so the s6 tools (s6-svstat, s6-svc, ...) are found by
#   `docker exec C s6-svstat ...`, health checks and scripts, with or without
#   the symlinks-arch tarball. /init hands this PATH on to the cont-init
#   hooks, the CMD and the slots' run scripts, so svkit's binaries in
#   /usr/local/bin are found there too.
# s6-overlay settings (all read by /init from the container environment):
#  S6_BEHAVIOUR_IF_STAGE2_FAILS=2: a failing cont-init hook (e.g. an invalid
#    /etc/svkit config: svkit-reconcile exits non-zero and changes nothing)
#    stops the container loudly instead of starting it half-configured.
#  S6_KEEP_ENV=0 (s6-overlay's default, set to say so): /init gives hooks, the
#    CMD and run scripts a minimal env. svkit copes: run scripts use
#    with-contenv, svkit-wrap and svkit-reconcile read
#    /run/s6/container_environment for opt-outs and if_env autostart.
#  S6_KILL_FINISH_MAXTIME=8000: a hard bound (ms) on each cont-finish hook;
#    50-svkit-stop bounds itself at 7.5 s (the foreground command and the
#    slots share a 5 s budget, as the shipped config declares no
#    stop_timeout_ms; the slots get at least 0.5 s,
#    svctl is cut 1 s after; then at most 0.5 s for the stopped slots'
#    loggers and 0.5 s for strays), this is the backstop. A worst-case
#    shutdown (8 s) fits in `docker stop`'s default 10 s.
#  S6_KILL_GRACETIME=0: after the hooks, s6-overlay sends TERM to every
#    process left and sleeps this long in full (3000 ms by default), then
#    KILL. 50-svkit-stop has already stopped the foreground command and
#    every slot, each with its own signal and timeout, then the slots'
#    loggers once they had written everything, then sent TERM to the
#    strays (a slot's double-forked child) and waited up to 0.5 s while
#    any still ran. Nothing svkit knows of needs this grace, so none is
#    slept: `docker stop` takes about the slots' own stop time.
#    What still gets TERM then KILL at once: s6's own processes, the CMD's
#    stage 2 and svkit-wrap's keep-alive, `docker exec` sessions, and a
#    stray still running 0.5 s after its TERM.
#  S6_CMD_RECEIVE_SIGNALS is left unset (s6-overlay's default): `docker stop`
#    makes PID 1 run the shutdown (cont-finish hooks, then TERM/KILL) and
#    the container exits 0 — a requested stop is a clean stop, also when the
#    CMD is svkit-wrap's keep-alive. A foreground CMD (an opt-out) is
#    stopped by 50-svkit-stop, and its own exit code is the container's. With `-e S6_CMD_RECEIVE_SIGNALS=1` the
#    stop signal goes to the CMD instead and the container exits with its
#    128+N (143 for docker stop's SIGTERM).
ENV PATH=/command:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    S6_BEHAVIOUR_IF_STAGE2_FAILS=2 \
    S6_KEEP_ENV=0 \
    S6_KILL_FINISH_MAXTIME=8000 \
    S6_KILL_GRACETIME=0

# Everything the app writes: profiles, per-profile logs, svkit's remembered
# desired states (state_dir /data/.svkit). Declared after the chown above so
# a new anonymous or named volume starts owned by app.
VOLUME /data

# No USER instruction, on purpose: s6-overlay's /init runs as root (it mounts
# and chowns /run, and svkit-reconcile must create log dirs owned by `app`
# and prepare supervise/ so `app` can steer its slots). The app never runs
# as root: every slot drops to `app` through s6-setuidgid, and svkit-wrap
# drops to `app` before exec'ing a foreground command. What stays root is
# s6 itself (svscan, supervise) and svkit-wrap's keep-alive, which spawns
# nothing.
# The image also runs with no root at all (`--user 10001`, an arbitrary
# uid with gid 0, `--read-only --tmpfs /run:exec -e S6_READ_ONLY_ROOT=1`):
# the whole tree then runs as that user; docs/kubernetes.md.
# svkit-init: as PID 1 it execs s6-overlay's /init with `svkit-wrap --
# CMD` (the same process tree as ENTRYPOINT ["/init", "svkit-wrap", "--"],
# which still works); where /init cannot run (docker run --init, a shared
# pid namespace, a non-root uid without a writable /run) it supervises the
# same slots itself with s6's tools (docs/image.md, "Where it runs").
# svkit-wrap routes the CMD: `gateway run` becomes `app gateway run`, which
# the redirect in /etc/svkit/10-app.json lands in the gateway-default slot.
ENTRYPOINT ["svkit-init", "--"]
CMD ["gateway", "run"]

# Healthy = every slot is in the state it is wanted in (svctl status exits 0;
# 3 = some slot is not, e.g. crash-looping or permanently failed; 4 = unknown
# slot). Docker defines only 0 (healthy) and 1 (unhealthy) and reserves 2,
# so every failure is mapped to 1; the exec form with an explicit sh keeps
# that mapping and keeps svctl's table in `docker inspect`'s health log.
# The start period covers boot: cont-init, reconcile, the first spawn.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/bin/sh", "-c", "svctl status || exit 1"]

############################################################################
# Stage `prebuilt` (offline path, `--target prebuilt`): base + the binaries
# from the build context's dist/bin/, built beforehand (static: any Linux
# host of the image's architecture will do) with
#   cargo build --release --locked -p svkit-cli -p svkit-demo-app
# It sits BEFORE the builder stage on purpose: the legacy builder builds every
# stage up to the target, and must not need the rust image for this one.
############################################################################
FROM base AS prebuilt
# svkit (one static multi-call binary) and the demo app. /usr/local/bin is
# on the PATH that /init hands to cont-init hooks, the CMD and the slots'
# run scripts. `svkit --list` names the programs; a symlink of that name
# runs each (svkit-wrap, svctl, ...), as in the release tarball.
COPY dist/bin/svkit dist/bin/app /usr/local/bin/
RUN for p in $(svkit --list); do ln -s svkit "/usr/local/bin/${p}"; done

############################################################################
# Stage `builder`: build only the release binaries the image ships.
############################################################################
FROM rust:1-slim-bookworm AS builder

# Set by BuildKit; used only to give each platform its own target/ cache.
ARG TARGETARCH
WORKDIR /src

# The whole workspace is copied because cargo resolves every member listed in
# Cargo.toml (crates/*) against Cargo.lock even when building a few packages;
# .dockerignore keeps target/, .git and the docs out of the context.
COPY Cargo.toml Cargo.lock ./
COPY crates/ crates/
# Static binaries (crt-static), built for the host tuple named explicitly.
COPY .cargo/ .cargo/

# --locked: build exactly the versions in Cargo.lock, fail if it is stale.
# -p ...: only what the image needs (`svkit`, the multi-call binary of the
# four svkit programs, and the demo app `app`); the dev-only crates are
# never built. .cargo/config.toml puts them in target/HOST-TUPLE/release/.
# The cache mounts keep the crates.io download cache and target/ between
# builds. target/ is a cache mount, so the binaries are copied out to /out in
# the same step (the mount is not part of the image layer); it is keyed by
# TARGETARCH and locked so that a multi-platform build never copies out
# another platform's binary.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,id=svkit-target-${TARGETARCH},sharing=locked \
    cargo build --release --locked -p svkit-cli -p svkit-demo-app \
 && rel="target/$(rustc --print host-tuple)/release" \
 && mkdir -p /out \
 && install -m 0755 "${rel}/svkit" "${rel}/app" /out/ \
 && for p in $(/out/svkit --list); do ln -s svkit "/out/${p}"; done

############################################################################
# The default target: base + the binaries of the builder stage.
############################################################################
FROM base
# svkit, its symlinks and the demo app. /usr/local/bin is on the PATH that
# /init hands to cont-init hooks, the CMD and the slots' run scripts.
COPY --from=builder /out/ /usr/local/bin/
