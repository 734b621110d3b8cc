# The image without s6-overlay (tests/docker/run.sh plain_s6): Debian's own
# s6 package (s6-svscan, s6-supervise, s6-log, ... on PATH) and svkit, with
# svkit-init as the entrypoint, which then supervises by itself. Built by
# `tests/docker/engine.sh plain-image TAG` from a context it assembles:
#   debs/      Debian's s6 and the libraries it needs (apt-get download on
#              the host: no network in the build)
#   bin/       svkit (static) and the demo app
#   rootfs/    the repository's rootfs/ (config, hooks, log watcher)
FROM debian:bookworm-slim
COPY debs/ /tmp/debs/
# hadolint ignore=DL3008
RUN dpkg -i /tmp/debs/*.deb && rm -rf /tmp/debs
COPY bin/ /usr/local/bin/
RUN for p in $(svkit --list); do ln -s svkit "/usr/local/bin/${p}"; done \
 && groupadd --gid 10001 app \
 && useradd --no-log-init --uid 10001 --gid app --home-dir /data --no-create-home --shell /usr/sbin/nologin app \
 && mkdir -p /data && chown app:0 /data && chmod 0775 /data
COPY rootfs/ /
ENV S6_BEHAVIOUR_IF_STAGE2_FAILS=2 \
    S6_KILL_FINISH_MAXTIME=8000 \
    S6_KILL_GRACETIME=0
VOLUME /data
ENTRYPOINT ["svkit-init", "--"]
CMD ["gateway", "run"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/bin/sh", "-c", "svctl status || exit 1"]
