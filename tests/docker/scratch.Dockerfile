# The scratch smoke image (tests/docker/run.sh scratch): svkit on s6-overlay
# with no libc and no distribution at all. Built by `tests/docker/engine.sh
# scratch-image TAG` from a context it assembles:
#   busybox          Debian's busybox-static: /bin/sh and the applets the
#                    hooks and the tests use (the only other binary here)
#   s6/              s6-overlay's tarballs (built from source) + SHA256SUMS
#   svkit/           `make dist`'s tarball + its SHA256SUMS
#   app              the demo app (static)
#   etc/             passwd and group with the runtime user, the demo config
# Every tarball is checked against its SHA256SUMS before it is extracted,
# with busybox's sha256sum and tar: what docs/image.md shows for distroless.
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
COPY s6/ /tmp/s6/
COPY svkit/ /tmp/svkit/
# s6-overlay's preinit cannot create /var/run without /var: a symlink to
# /run (SPEC, minimal images).
# hadolint ignore=DL3003
RUN set -eu; \
    (cd /tmp/s6 && sha256sum -c SHA256SUMS); \
    (cd /tmp/svkit && sha256sum -c SHA256SUMS); \
    for t in /tmp/s6/s6-overlay-noarch.tar.xz /tmp/s6/s6-overlay-x86_64.tar.xz \
             /tmp/s6/s6-overlay-symlinks-noarch.tar.xz /tmp/svkit/svkit-*.tar.xz; do \
      tar -C / -xJf "$t"; \
    done; \
    rm -rf /tmp/s6 /tmp/svkit; \
    mkdir -p /run /var /tmp /data; \
    chmod 1777 /tmp; \
    ln -s /run /var/run
COPY app /usr/local/bin/app
COPY etc/ /etc/
RUN chown app:app /data
ENV PATH=/command:/usr/local/bin:/bin \
    S6_BEHAVIOUR_IF_STAGE2_FAILS=2 \
    S6_KILL_FINISH_MAXTIME=7000
VOLUME /data
ENTRYPOINT ["/init", "svkit-wrap", "--"]
CMD ["gateway", "run"]
