//! Every rendered sh script of every golden case passes shellcheck.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod render_common;

use std::io::Write as _;
use std::process::Command;

use render_common::*;

#[test]
fn rendered_scripts_pass_shellcheck() {
    if Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_err()
    {
        svkit_testkit::skip(
            "rendered_scripts_pass_shellcheck",
            "shellcheck not installed (apt-get install shellcheck)",
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases() {
        let (_, slots) = render_case(&case);
        for s in &slots {
            for f in &s.files {
                if !f.contents.starts_with(b"#!") {
                    continue;
                }
                let p = tmp
                    .path()
                    .join(format!("{}-{}", s.name, f.path.replace('/', "_")));
                let mut file = std::fs::File::create(&p).expect("create");
                file.write_all(&f.contents).expect("write");
                let out = Command::new("shellcheck")
                    .arg(&p)
                    .output()
                    .expect("run shellcheck");
                checked += 1;
                if !out.status.success() {
                    failures.push(format!(
                        "{}: {}/{}:\n{}",
                        case.display(),
                        s.name,
                        f.path,
                        String::from_utf8_lossy(&out.stdout)
                    ));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} scripts checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
