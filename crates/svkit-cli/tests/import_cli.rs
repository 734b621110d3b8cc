//! `svctl import`: exit codes, the report, --output/--force all or
//! nothing, --check, and docs/import.md's worked migration, whose result
//! is checked here byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn svctl() -> Command {
    let mut c = Command::new(svkit_testkit::tool("svctl"));
    c.env_remove("SVKIT_CONFIG_DIR");
    c
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    repo("tests/fixtures/import/supervisord").join(rel)
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    svctl()
        .arg("import")
        .args(args)
        .output()
        .expect("run svctl")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn code(o: &Output, want: i32) {
    assert_eq!(o.status.code(), Some(want), "stderr: {}", err(o));
}

/// `svctl check` of a config text, as the one file of a config dir.
fn check(text: &[u8]) -> Output {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("10-imported.json"), text).unwrap();
    svctl()
        .arg("check")
        .arg("--config-dir")
        .arg(t.path())
        .output()
        .unwrap()
}

#[test]
fn imports_print_a_config_check_accepts_and_a_report() {
    for f in [
        "laravel/supervisord.conf",
        "many.conf",
        "include/main.conf",
        "crlf.conf",
    ] {
        let p = fixture(f);
        let o = run(&["--from".as_ref(), "supervisord".as_ref(), p.as_os_str()]);
        code(&o, 0);
        let c = check(&o.stdout);
        assert_eq!(c.status.code(), Some(0), "{f}: svctl check: {}", err(&c));
        let e = err(&o);
        let last = e.lines().last().unwrap_or_default();
        assert!(last.starts_with("svctl: imported "), "{f}: {e}");
        // Every other line is FILE:LINE: KEY: why.
        for l in e.lines().filter(|l| !l.starts_with("svctl: ")) {
            let mut parts = l.splitn(3, ": ");
            let loc = parts.next().unwrap();
            let (file, line) = loc.rsplit_once(':').expect(l);
            assert!(
                Path::new(file).is_file() && line.parse::<u32>().is_ok(),
                "{l}"
            );
            assert_eq!(parts.count(), 2, "{l}");
        }
    }
}

#[test]
fn the_worked_migration_in_the_docs_is_what_import_prints() {
    let doc = std::fs::read_to_string(repo("docs/import.md")).unwrap();
    let block = |marker: &str, lang: &str| -> String {
        let at = doc
            .find(&format!("<!-- svkit:import {marker} -->\n```{lang}\n"))
            .expect(marker);
        let body = &doc[at..];
        let start = body.find('\n').unwrap() + 1;
        let start = start + body[start..].find('\n').unwrap() + 1;
        let end = body[start..].find("```\n").unwrap();
        body[start..start + end].to_owned()
    };
    let ini = block("worked-example", "ini");
    let json = block("worked-example result", "json");
    assert_eq!(
        std::fs::read_to_string(fixture("laravel/supervisord.conf")).unwrap(),
        ini,
        "the fixture is the doc's example"
    );
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("supervisord.conf"), &ini).unwrap();
    let o = svctl()
        .args(["import", "supervisord.conf"])
        .current_dir(t.path())
        .output()
        .unwrap();
    code(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), json);
    // The report the doc shows, line for line.
    let report = doc.split("and reports on stderr:\n\n```\n").nth(1).unwrap();
    let report = &report[..report.find("```\n").unwrap()];
    assert_eq!(err(&o), report);
}

#[test]
fn output_is_all_or_nothing_and_replaced_only_with_force() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("10-app.json");
    let good = fixture("laravel/supervisord.conf");
    let o = run(&["-o".as_ref(), out.as_os_str(), good.as_os_str()]);
    code(&o, 0);
    assert!(o.stdout.is_empty());
    let first = std::fs::read(&out).unwrap();
    assert_eq!(check(&first).status.code(), Some(0));
    // It exists: refused without --force, untouched.
    let other = fixture("crlf.conf");
    let o = run(&["-o".as_ref(), out.as_os_str(), other.as_os_str()]);
    code(&o, 100);
    assert!(err(&o).contains("--force"), "{}", err(&o));
    assert_eq!(std::fs::read(&out).unwrap(), first);
    let o = run(&[
        "--force".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        other.as_os_str(),
    ]);
    code(&o, 0);
    assert_ne!(std::fs::read(&out).unwrap(), first);
    // An input that cannot be imported: exit 1, located, nothing written,
    // no temp file left.
    let fresh = t.path().join("20-x.json");
    let cycle = fixture("cycle/supervisord.conf");
    let o = run(&["-o".as_ref(), fresh.as_os_str(), cycle.as_os_str()]);
    code(&o, 1);
    assert!(
        err(&o).starts_with(&format!(
            "svctl: fatal: unable to import: {}:2: files: ",
            cycle.display()
        )),
        "{}",
        err(&o)
    );
    assert!(
        err(&o).trim_end().ends_with("nothing written"),
        "{}",
        err(&o)
    );
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["10-app.json"], "{left:?}");
}

#[test]
fn check_runs_the_full_check_before_writing() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    let out = t.path().join("10.json");
    let src = fixture("crlf.conf");
    let args = |out: &Path| -> Vec<std::ffi::OsString> {
        vec![
            "--check".into(),
            "--root".into(),
            root.clone().into(),
            "-o".into(),
            out.into(),
            src.clone().into(),
        ]
    };
    // `sleep` is not in the image: an error at its key, nothing written.
    let a = args(&out);
    let o = run(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    code(&o, 1);
    assert!(
        err(&o).contains("`sleep` is not in any directory of PATH"),
        "{}",
        err(&o)
    );
    assert!(!out.exists());
    // With it, the check passes and says so.
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(root.join("bin/sleep"), "").unwrap();
    std::fs::set_permissions(
        root.join("bin/sleep"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = run(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    code(&o, 0);
    assert!(err(&o).contains("svctl: check ok: "), "{}", err(&o));
    assert!(out.exists());
}

#[test]
fn usage_and_system_errors() {
    let good = fixture("crlf.conf");
    for args in [
        &[][..],
        &["--from", "yaml", "x"][..],
        &["--root", "/", "x"][..],
        &["--scandir", "/run/service", "x"][..],
        &["--config-dir", "/etc/svkit", "x"][..],
        &["--force", "x"][..],
    ] {
        let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
        if args.last() == Some(&"x") {
            a.pop();
            a.push(good.as_os_str());
        }
        code(&run(&a), 100);
    }
    let o = run(&["/nonexistent/supervisord.conf".as_ref()]);
    code(&o, 111);
    assert!(
        err(&o).starts_with(
            "svctl: fatal: unable to read /nonexistent/supervisord.conf: No such file or directory"
        ),
        "{}",
        err(&o)
    );
    // Not UTF-8: a path, and bytes.
    use std::os::unix::ffi::OsStrExt as _;
    let t = tempfile::tempdir().unwrap();
    let bad = t
        .path()
        .join(std::ffi::OsStr::from_bytes(b"sup\xffervisord.conf"));
    std::fs::copy(&good, &bad).unwrap();
    let o = run(&[bad.as_os_str()]);
    code(&o, 1);
    assert!(
        err(&o).contains("sup\\xffervisord.conf: the path is not UTF-8"),
        "{}",
        err(&o)
    );
    let o = run(&[fixture("latin1.conf").as_os_str()]);
    code(&o, 1);
    assert!(
        err(&o).contains("latin1.conf:3: bytes that are not UTF-8"),
        "{}",
        err(&o)
    );
    // A format it cannot tell.
    let o = run(&[fixture("include-dir/main.conf").as_os_str()]);
    code(&o, 1);
    assert!(
        err(&o).contains("--from supervisord|procfile|s6|crontab"),
        "{}",
        err(&o)
    );
}

/// Procfiles, s6-overlay trees and a crontab through the verb, detected
/// from their names, shapes and content: a config `svctl check` accepts, and a summary.
#[test]
fn procfiles_s6_trees_and_crontabs_import_by_detection() {
    for rel in [
        "procfile/rails/Procfile",
        "procfile/crlf/Procfile",
        "s6/services.d",
        "s6/s6-rc.d",
        "crontab/app",
    ] {
        let p = repo("tests/fixtures/import").join(rel);
        let o = run(&[p.as_os_str()]);
        code(&o, 0);
        let c = check(&o.stdout);
        assert_eq!(c.status.code(), Some(0), "{rel}: svctl check: {}", err(&c));
        let e = err(&o);
        assert!(
            e.lines()
                .last()
                .unwrap_or_default()
                .starts_with("svctl: imported "),
            "{rel}: {e}"
        );
    }
}
