//! `make test`'s closing line (tests/tally.sh) counts each test once, as
//! passed, failed or skipped: a skip is not a pass, and a crashed test
//! binary, a crate that did not compile, a failed image build or an engine
//! that never started are failures with a name, not silence. And CI's
//! entry point enforces what it runs under (.ci/run).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use svkit_image_tests::*;

const OK_BIN: &str = "\
     Running unittests src/lib.rs (target/x86_64-unknown-linux-gnu/debug/deps/svkit-715ea4413532bb9f)

running 3 tests
test a ... ok
test b ... ok
test c ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.30s

     Running tests/svctl_stray.rs (target/x86_64-unknown-linux-gnu/debug/deps/svctl_stray-9426951ae4799720)

running 2 tests
SKIP a_copy: needs root (namespaces)
test a_copy ... ok
test b_copy ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 3.91s
";

const CRASHED_BIN: &str = "\
     Running tests/svctl_events.rs (target/x86_64-unknown-linux-gnu/debug/deps/svctl_events-0123456789abcdef)

running 4 tests
error: test failed, to rerun pass `-p svkit-cli --test svctl_events`

Caused by:
  process didn't exit successfully: `target/debug/deps/svctl_events-0123456789abcdef` (signal: 11, SIGSEGV: invalid memory reference)
";

const FAILED_BIN: &str = "\
     Running tests/cli.rs (target/x86_64-unknown-linux-gnu/debug/deps/cli-0123456789abcdef)

running 2 tests
test x ... ok
test y ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.30s
";

const DOCKER_OK: &str =
    "=== redirect\nPASS redirect\n=== scratch\nPASS scratch\n2 passed, 0 failed\n";

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        Run {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn put(&self, name: &str, text: &str) -> &Run {
        fs::write(self.dir.path().join(name), text).expect("write");
        self
    }

    fn tally(&self) -> (Option<i32>, String) {
        let p = |n: &str| self.dir.path().join(n);
        let o: Output = Command::new(repo_root().join("tests/tally.sh"))
            .arg(p("cargo.log"))
            .arg(p("cargo.rc"))
            .arg(p("docker.log"))
            .arg(p("docker.rc"))
            .arg(p("skips"))
            .output()
            .expect("run tests/tally.sh");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    }
}

fn closing(out: &str) -> &str {
    out.lines().last().unwrap_or("")
}

#[test]
fn a_clean_run_counts_every_test_once() {
    let r = Run::new();
    r.put("cargo.log", OK_BIN)
        .put("cargo.rc", "0\n")
        .put("docker.log", DOCKER_OK)
        .put("docker.rc", "0\n")
        .put("skips", "");
    let (c, out) = r.tally();
    assert_eq!(c, Some(0), "{out}");
    assert_eq!(
        closing(&out),
        "test: 7 passed, 0 failed, 0 skipped",
        "{out}"
    );
}

#[test]
fn a_skip_is_not_also_a_pass() {
    let r = Run::new();
    r.put("cargo.log", OK_BIN)
        .put("cargo.rc", "0\n")
        .put("docker.log", DOCKER_OK)
        .put("docker.rc", "0\n")
        .put("skips", "a_copy: needs root (namespaces)\n");
    let (c, out) = r.tally();
    assert_eq!(c, Some(0), "{out}");
    assert_eq!(
        closing(&out),
        "test: 6 passed, 0 failed, 1 skipped",
        "{out}"
    );
    assert!(out.contains("    a_copy: needs root"), "{out}");
}

#[test]
fn a_crashed_binary_and_a_compile_error_are_failures_with_names() {
    let r = Run::new();
    let log = format!(
        "{OK_BIN}{CRASHED_BIN}{FAILED_BIN}error: could not compile `svkit-wrap` (test \"wrap\") due to 1 previous error\n"
    );
    r.put("cargo.log", &log)
        .put("cargo.rc", "101\n")
        .put("docker.log", DOCKER_OK)
        .put("docker.rc", "0\n")
        .put("skips", "");
    let (c, out) = r.tally();
    assert_eq!(c, Some(1), "{out}");
    assert_eq!(
        closing(&out),
        "test: 8 passed, 3 failed, 0 skipped",
        "{out}"
    );
    assert!(
        out.contains(
            "failed: svctl_events (tests/svctl_events.rs) (no test result: crashed or killed)"
        ),
        "{out}"
    );
    assert!(
        out.contains("failed: could not compile `svkit-wrap`"),
        "{out}"
    );
}

#[test]
fn a_half_that_fails_without_a_name_is_one_failure() {
    let r = Run::new();
    // cargo exits non-zero without any failing test in its output; the
    // engine never started, so the scenarios never ran.
    r.put("cargo.log", OK_BIN)
        .put("cargo.rc", "101\n")
        .put("docker.log", "")
        .put("skips", "");
    let (c, out) = r.tally();
    assert_eq!(c, Some(1), "{out}");
    assert_eq!(
        closing(&out),
        "test: 5 passed, 2 failed, 0 skipped",
        "{out}"
    );
    assert!(out.contains("failed: cargo test (exit 101"), "{out}");
    assert!(out.contains("engine.sh up failed"), "{out}");
}

#[test]
fn a_failed_image_build_is_a_named_failure() {
    let r = Run::new();
    // What tests/docker/run.sh prints when the image does not build.
    r.put("cargo.log", OK_BIN)
        .put("cargo.rc", "0\n")
        .put(
            "docker.log",
            "=== tests/docker/engine.sh image svkit-demo:test\nFAIL: tests/docker/engine.sh image svkit-demo:test\nfailed: image-build\n0 passed, 1 failed\n",
        )
        .put("docker.rc", "1\n")
        .put("skips", "");
    let (c, out) = r.tally();
    assert_eq!(c, Some(1), "{out}");
    assert_eq!(
        closing(&out),
        "test: 5 passed, 1 failed, 0 skipped",
        "{out}"
    );
    assert!(out.contains("failed: docker scenario image-build"), "{out}");
}

#[test]
fn ci_refuses_to_run_unless_root() {
    if !svkit_testkit::root_or_skip(
        "ci_refuses_to_run_unless_root",
        "only root can run it as another user",
    ) {
        return;
    }
    let ci = repo_root().join(".ci/run");
    assert!(Path::new(&ci).is_file());
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"])
        .arg(&ci)
        .output()
        .expect("setpriv");
    assert_eq!(o.status.code(), Some(100), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(".ci/run: fatal: must run as root"), "{err}");
}
