# svkit — two commands on a fresh machine: `make demo`, `make test`.
SHELL := /bin/sh
CARGO ?= cargo

.PHONY: all build release deps test lint unit bench demo bless clean

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

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --workspace --release

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# As root (CI), sandbox tests must run: SVKIT_REQUIRE_SANDBOX turns a skip
# into a failure.
test: deps lint build
	if [ "$$(id -u)" = 0 ]; then export SVKIT_REQUIRE_SANDBOX=1; fi; \
	$(CARGO) test --workspace

bench: deps release
	./bench/run

demo: deps release
	./demo/run

bless:
	SVKIT_BLESS=1 $(CARGO) test --workspace

clean:
	$(CARGO) clean
