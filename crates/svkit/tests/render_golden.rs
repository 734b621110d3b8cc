//! Golden tests: every §3 feature rendered byte for byte as checked in under
//! `tests/golden/<case>/expected/`.
//!
//! Regenerate one case deliberately, then review its diff:
//! `SVKIT_BLESS=<case> cargo test -p svkit --test render_golden`
//! (`make bless CASE=<case>`), `<case>` being a dir under `tests/golden/`.
//! Only that case is rewritten; the others are still compared. Any other
//! value (`1`, `all`, empty) fails and names the cases, and so does
//! `SVKIT_BLESS` in CI (`CI` set and not `false`/`0`/`no`): goldens are
//! never blessed there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod render_common;

use std::ffi::OsStr;
use std::path::Path;

use render_common::*;

const BLESS_ENV: &str = "SVKIT_BLESS";

fn case_name(case: &Path) -> String {
    case.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether a `CI` value means "running in CI" (GitHub, GitLab and most
/// others set `CI=true`).
fn is_ci(ci: Option<&OsStr>) -> bool {
    ci.and_then(OsStr::to_str).is_some_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !v.is_empty() && v != "false" && v != "0" && v != "no"
    })
}

/// The one case to bless, from the values of `SVKIT_BLESS` and `CI`:
/// `Ok(None)` when not blessing, an error (naming the cases) for anything
/// but one case's name, or for blessing in CI.
fn bless_choice(
    bless: Option<&OsStr>,
    ci: Option<&OsStr>,
    names: &[String],
) -> Result<Option<String>, String> {
    let Some(bless) = bless else {
        return Ok(None);
    };
    if is_ci(ci) {
        return Err(format!(
            "{BLESS_ENV}={bless:?} in CI (CI={:?}): golden files are never blessed in CI; \
             bless on a workstation and commit the reviewed diff",
            ci.unwrap_or_default()
        ));
    }
    match bless.to_str() {
        Some(name) if names.iter().any(|n| n == name) => Ok(Some(name.to_string())),
        _ => Err(format!(
            "{BLESS_ENV}={bless:?} is not a golden case: bless one case at a time, \
             {BLESS_ENV}=<case> (make bless CASE=<case>), one of: {}",
            names.join(", ")
        )),
    }
}

/// Rewrites `case/expected` with what renders now.
fn bless(case: &Path) {
    let (v, slots) = render_case(case);
    let want = golden_tree(&v, &slots);
    let dir = case.join("expected");
    let _ = std::fs::remove_dir_all(&dir);
    for (rel, bytes) in &want {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&p, bytes).expect("write golden");
    }
    eprintln!(
        "blessed golden case {0}: {1} files; review `git diff -- tests/golden/{0}`",
        case_name(case),
        want.len(),
    );
}

#[test]
fn golden_cases_match() {
    let cases = cases();
    assert!(
        cases.len() >= 10,
        "expected the golden cases, found {}",
        cases.len()
    );
    let names: Vec<String> = cases.iter().map(|c| case_name(c)).collect();
    let blessed = bless_choice(
        std::env::var_os(BLESS_ENV).as_deref(),
        std::env::var_os("CI").as_deref(),
        &names,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for (case, name) in cases.iter().zip(&names) {
        if blessed.as_ref() == Some(name) {
            bless(case);
        }
        let (v, slots) = render_case(case);
        let want = golden_tree(&v, &slots);
        let got = read_tree(&case.join("expected"));
        for (rel, bytes) in &want {
            match got.get(rel) {
                None => failures.push(format!("{name}: missing golden file {rel}")),
                Some(g) if g != bytes => failures.push(format!(
                    "{name}: {rel} differs\n--- golden\n{}\n--- rendered\n{}",
                    String::from_utf8_lossy(g),
                    String::from_utf8_lossy(bytes)
                )),
                Some(_) => {}
            }
        }
        for rel in got.keys().filter(|k| !want.contains_key(*k)) {
            failures.push(format!("{name}: golden file {rel} is no longer rendered"));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(after reviewing, re-bless a case with {BLESS_ENV}=<case>, make bless CASE=<case>)",
        failures.join("\n")
    );
}

mod bless_rules {
    use super::*;

    fn names() -> Vec<String> {
        ["log", "restart", "stop"].map(String::from).to_vec()
    }

    fn choice(bless: Option<&str>, ci: Option<&str>) -> Result<Option<String>, String> {
        bless_choice(bless.map(OsStr::new), ci.map(OsStr::new), &names())
    }

    #[test]
    fn unset_compares_only() {
        assert_eq!(choice(None, None), Ok(None));
        assert_eq!(choice(None, Some("true")), Ok(None));
    }

    #[test]
    fn one_named_case_is_blessed() {
        assert_eq!(choice(Some("restart"), None), Ok(Some("restart".into())));
        assert_eq!(
            choice(Some("restart"), Some("false")),
            Ok(Some("restart".into()))
        );
        assert_eq!(choice(Some("stop"), Some("")), Ok(Some("stop".into())));
    }

    #[test]
    fn anything_but_a_case_name_is_refused_naming_the_cases() {
        for v in ["1", "all", "", "Restart", "restart,stop", "../log"] {
            let e = choice(Some(v), None).expect_err(v);
            assert!(e.contains("log, restart, stop"), "{v:?}: {e}");
            assert!(e.contains("make bless CASE=<case>"), "{v:?}: {e}");
        }
    }

    #[test]
    fn never_in_ci() {
        for ci in ["true", "1", "TRUE", "yes"] {
            for v in ["restart", "1", ""] {
                let e = choice(Some(v), Some(ci)).expect_err(ci);
                assert!(e.contains("never blessed in CI"), "{ci}: {e}");
            }
        }
    }
}
