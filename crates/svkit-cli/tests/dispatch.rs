//! The name `svkit` is run as picks the program: through a symlink (how
//! the release tarball installs it), or `svkit TOOL`.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_svkit");
const PROGRAMS: [&str; 5] = [
    "svctl",
    "svkit-init",
    "svkit-lifeline",
    "svkit-reconcile",
    "svkit-wrap",
];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn version_line(o: &Output, prog: &str) {
    assert!(o.status.success(), "{prog}: {o:?}");
    assert_eq!(
        text(&o.stdout),
        format!("{prog} {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn each_link_runs_its_program() {
    let dir = tempfile::tempdir().unwrap();
    for p in PROGRAMS {
        let link = dir.path().join(p);
        std::os::unix::fs::symlink(BIN, &link).unwrap();
        version_line(&Command::new(&link).arg("--version").output().unwrap(), p);
    }
}

#[test]
fn svkit_tool_runs_the_tool_under_its_name() {
    for p in PROGRAMS {
        version_line(
            &Command::new(BIN).args([p, "--version"]).output().unwrap(),
            p,
        );
    }
}

#[test]
fn list_names_every_program() {
    let o = Command::new(BIN).arg("--list").output().unwrap();
    assert!(o.status.success());
    assert_eq!(text(&o.stdout), PROGRAMS.map(|p| format!("{p}\n")).concat());
}

#[test]
fn no_tool_or_an_unknown_one_is_a_usage_error() {
    for args in [&[][..], &["nope"][..], &["/x/svctl"][..]] {
        let o = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(100), "{args:?}: {o:?}");
        let e = text(&o.stderr);
        assert!(e.starts_with("svkit: fatal: "), "{e}");
        assert!(e.contains("svkit-wrap"), "names the tools: {e}");
    }
}
