//! Golden tests: every §3 feature rendered byte for byte as checked in under
//! `tests/golden/<case>/expected/`. Regenerate deliberately with
//! `SVKIT_BLESS=1 cargo test -p svkit --test render_golden`, then review
//! the diff.

mod render_common;

use render_common::*;

#[test]
fn golden_cases_match() {
    let bless = std::env::var_os("SVKIT_BLESS").is_some_and(|v| v == "1");
    let cases = cases();
    assert!(
        cases.len() >= 10,
        "expected the golden cases, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in cases {
        let (v, slots) = render_case(&case);
        let want = golden_tree(&v, &slots);
        let dir = case.join("expected");
        if bless {
            let _ = std::fs::remove_dir_all(&dir);
            for (rel, bytes) in &want {
                let p = dir.join(rel);
                std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
                std::fs::write(&p, bytes).expect("write golden");
            }
            continue;
        }
        let got = read_tree(&dir);
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
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
        "{}\n(re-bless with SVKIT_BLESS=1 after reviewing)",
        failures.join("\n")
    );
}
