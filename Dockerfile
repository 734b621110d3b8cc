# syntax=docker/dockerfile:1
# ^ BuildKit frontend: needed for RUN --mount (cargo caches) and for the
#   automatic TARGETARCH build argument. BuildKit is Docker's default builder
#   since Engine 23; on older engines run `DOCKER_BUILDKIT=1 docker build .`.
#
# svkit demo image: genuine s6-overlay v3 as PID 1, svkit's binaries, the demo
# app, and the demo rootfs (rootfs/ in this repository).
#
#   docker build -t svkit-demo .
#   docker run -d --name demo svkit-demo                 # = `app gateway run`, supervised
#   docker exec demo svctl status
#   docker run --rm svkit-demo gateway run --no-supervise  # foreground, its exit code is the container's
#
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 .
# See docs/image.md to add svkit to your own s6-overlay image.

############################################################################
# Stage 1: build only the release binaries the image ships.
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

# --locked: build exactly the versions in Cargo.lock, fail if it is stale.
# -p ...: only what the image needs (the four svkit binaries and the demo app
# `app`); the dev-only crates (svkit-sandbox, svkit-testkit, image-tests) are
# never built.
# The cache mounts keep the crates.io download cache and target/ between
# builds. target/ is a cache mount, so the binaries are copied out to /out in
# the same step (the mount is not part of the image layer); it is keyed by
# TARGETARCH and locked so that a multi-platform build never copies out
# another platform's binary.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,id=svkit-target-${TARGETARCH},sharing=locked \
    cargo build --release --locked \
        -p svkit-reconcile -p svkit-wrap -p svctl -p svkit-lifeline -p svkit-demo-app \
 && mkdir -p /out \
 && install -m 0755 \
        target/release/svkit-reconcile \
        target/release/svkit-wrap \
        target/release/svctl \
        target/release/svkit-lifeline \
        target/release/app \
        /out/

############################################################################
# Stage 2: the runtime image.
############################################################################
FROM debian:bookworm-slim

# s6-overlay pinned by version and by the SHA256 of every tarball we extract
# (SPEC §11: the same values are pinned by two independent public Dockerfiles).
# Changing the version means changing all four hashes; a wrong hash fails the
# build closed instead of extracting an unverified tarball.
ARG S6_OVERLAY_VERSION=3.2.3.0
ARG S6_OVERLAY_NOARCH_SHA256=b720f9d9340efc8bb07528b9743813c836e4b02f8693d90241f047998b4c53cf
ARG S6_OVERLAY_X86_64_SHA256=a93f02882c6ed46b21e7adb5c0add86154f01236c93cd82c7d682722e8840563
ARG S6_OVERLAY_AARCH64_SHA256=0952056ff913482163cc30e35b2e944b507ba1025d78f5becbb89367bf344581
ARG S6_OVERLAY_SYMLINKS_NOARCH_SHA256=a60dc5235de3ecbcf874b9c1f18d73263ab99b289b9329aa950e8729c4789f0e
# Set by BuildKit to the platform being built (amd64, arm64, ...). Empty with
# the legacy builder: the RUN below then falls back to dpkg's architecture,
# which uses the same names.
ARG TARGETARCH

# Install s6-overlay:
#  - xz-utils for `tar -J`, curl + ca-certificates for the HTTPS download;
#  - curl --retry because GitHub's release CDN has transient failures (ADD
#    cannot retry); --fail so an HTTP error page is never saved as a tarball;
#  - every tarball is checked with `sha256sum -c` BEFORE anything is
#    extracted (a checksum file, not a pipe, so a failing check fails the RUN);
#  - the symlinks tarball adds /usr/bin links to /command, so s6 tools are on
#    the default PATH for scripts and `docker exec`;
#  - curl is purged afterwards: the runtime needs no downloader (the health
#    check is `svctl status`, sidecar probes are native in svkit-lifeline).
# Debian package versions are not pinned (DL3008): bookworm's archive drops
# superseded versions, so a pin breaks the build at the next point release;
# what must be reproducible here (s6-overlay) is pinned by hash above.
# hadolint ignore=DL3008
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends xz-utils curl ca-certificates; \
    case "${TARGETARCH:-$(dpkg --print-architecture)}" in \
      amd64) s6_arch=x86_64;  s6_arch_sha256="${S6_OVERLAY_X86_64_SHA256}" ;; \
      arm64) s6_arch=aarch64; s6_arch_sha256="${S6_OVERLAY_AARCH64_SHA256}" ;; \
      *) echo "s6-overlay: unsupported TARGETARCH '${TARGETARCH:-}' (amd64 and arm64 are pinned)" >&2; exit 1 ;; \
    esac; \
    base="https://github.com/just-containers/s6-overlay/releases/download/v${S6_OVERLAY_VERSION}"; \
    dl=/tmp/s6-overlay; \
    mkdir -p "${dl}"; \
    for t in noarch "${s6_arch}" symlinks-noarch; do \
      curl --fail --silent --show-error --location \
           --retry 5 --retry-delay 2 --retry-connrefused \
           -o "${dl}/s6-overlay-${t}.tar.xz" "${base}/s6-overlay-${t}.tar.xz"; \
    done; \
    { \
      echo "${S6_OVERLAY_NOARCH_SHA256}  ${dl}/s6-overlay-noarch.tar.xz"; \
      echo "${s6_arch_sha256}  ${dl}/s6-overlay-${s6_arch}.tar.xz"; \
      echo "${S6_OVERLAY_SYMLINKS_NOARCH_SHA256}  ${dl}/s6-overlay-symlinks-noarch.tar.xz"; \
    } > "${dl}/SHA256SUMS"; \
    sha256sum -c "${dl}/SHA256SUMS"; \
    for t in noarch "${s6_arch}" symlinks-noarch; do \
      tar -C / -Jxpf "${dl}/s6-overlay-${t}.tar.xz"; \
    done; \
    rm -rf "${dl}"; \
    apt-get purge -y --auto-remove curl; \
    rm -rf /var/lib/apt/lists/*

# The runtime user the slots and the foreground CMD run as ("user": "app" in
# /etc/svkit/10-app.json). uid/gid are fixed so files on a reused /data
# volume keep their owner across image rebuilds; override with --build-arg.
# No login shell, no home skeleton: /data is its home and the data volume.
# (Not --system: that range is 100-999 and useradd would warn about 10001;
# --no-log-init keeps a high uid from growing a sparse /var/log/lastlog.)
ARG APP_UID=10001
ARG APP_GID=10001
RUN groupadd --gid "${APP_GID}" app \
 && useradd --no-log-init --uid "${APP_UID}" --gid app \
        --home-dir /data --no-create-home --shell /usr/sbin/nologin app \
 && mkdir -p /data \
 && chown app:app /data

# svkit and the demo app. /usr/local/bin is on the PATH that /init hands to
# cont-init hooks, the CMD and the slots' run scripts.
COPY --from=builder /out/ /usr/local/bin/

# The demo rootfs: /etc/svkit/10-app.json (the slots and the redirect),
# /etc/cont-init.d/50-svkit-reconcile (renders the slots at every boot),
# /etc/cont-finish.d/50-svkit-stop (stops them before the final TERM/KILL).
# COPY keeps the executable bits of the hooks as committed.
COPY rootfs/ /

# s6-overlay settings (all read by /init from the container environment):
#  S6_BEHAVIOUR_IF_STAGE2_FAILS=2: a failing cont-init hook (e.g. an invalid
#    /etc/svkit config: svkit-reconcile exits non-zero and changes nothing)
#    stops the container loudly instead of starting it half-configured.
#  S6_KEEP_ENV=0 (s6-overlay's default, set to say so): /init gives hooks, the
#    CMD and run scripts a minimal env. svkit copes: run scripts use
#    with-contenv, svkit-wrap and svkit-reconcile read
#    /run/s6/container_environment for opt-outs and if_env autostart.
#  S6_KILL_FINISH_MAXTIME=7000: a hard bound (ms) on each cont-finish hook;
#    50-svkit-stop bounds itself at 6 s (svctl's 5 s + 1 s), this is the
#    backstop. With S6_KILL_GRACETIME's default 3 s, a worst-case shutdown
#    (6 s + 3 s) fits in `docker stop`'s default 10 s.
ENV S6_BEHAVIOUR_IF_STAGE2_FAILS=2 \
    S6_KEEP_ENV=0 \
    S6_KILL_FINISH_MAXTIME=7000

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
# svkit-wrap routes the CMD: `gateway run` becomes `app gateway run`, which
# the redirect in /etc/svkit/10-app.json lands in the gateway-default slot.
ENTRYPOINT ["/init", "svkit-wrap", "--"]
CMD ["gateway", "run"]

# Healthy = every slot is in the state it is wanted in (svctl status exits 0;
# 3 = some slot is not, e.g. crash-looping or permanently failed; 4 = unknown
# slot). Docker defines only 0 (healthy) and 1 (unhealthy) and reserves 2,
# so every failure is mapped to 1; the exec form with an explicit sh keeps
# that mapping and keeps svctl's table in `docker inspect`'s health log.
# The start period covers boot: cont-init, reconcile, the first spawn.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/bin/sh", "-c", "svctl status || exit 1"]
