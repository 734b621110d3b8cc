//! `svkit-docgen`: what it writes, that it parses, and that moving the CLI
//! definitions into libraries left every binary's help as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;
use clap_complete::Shell;

use svkit_testkit::SVCTL_VERBS as VERBS;

const COMPLETED: [&str; 3] = ["svctl", "svkit-reconcile", "svkit-lifeline"];

fn generated() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let files = svkit_docgen::generate(dir.path()).expect("generate");
    (dir, files)
}

fn rel_set(root: &Path, files: &[PathBuf]) -> BTreeSet<String> {
    files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

fn expected_files() -> BTreeSet<String> {
    let mut want = BTreeSet::new();
    for bin in COMPLETED {
        want.insert(format!("bash/{bin}"));
        want.insert(format!("zsh/_{bin}"));
        want.insert(format!("fish/{bin}.fish"));
        want.insert(format!("man/{bin}.1"));
    }
    want.insert("man/svkit-wrap.1".to_owned());
    want.insert("man/svkit-init.1".to_owned());
    for verb in VERBS {
        want.insert(format!("man/svctl-{verb}.1"));
    }
    want
}

fn man_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    pages
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

#[test]
fn generates_every_file_into_a_tempdir() {
    let (dir, files) = generated();
    assert_eq!(rel_set(dir.path(), &files), expected_files());
    for f in &files {
        let len = std::fs::metadata(f).unwrap().len();
        assert!(len > 100, "{} is nearly empty ({len} bytes)", f.display());
    }
    // Twice into the same dir: overwrites, same result.
    let again = svkit_docgen::generate(dir.path()).unwrap();
    assert_eq!(rel_set(dir.path(), &again), expected_files());
}

#[test]
fn the_binary_writes_the_same_files_and_checks_its_usage() {
    let exe = env!("CARGO_BIN_EXE_svkit-docgen");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("completions");
    let run = Command::new(exe).arg(&out).output().unwrap();
    assert!(run.status.success(), "{run:?}");
    let mut found = BTreeSet::new();
    for sub in ["bash", "zsh", "fish", "man"] {
        for e in std::fs::read_dir(out.join(sub)).unwrap() {
            found.insert(format!(
                "{sub}/{}",
                e.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    assert_eq!(found, expected_files());

    for bad in [&[][..], &["a", "b"][..], &["--bogus"][..]] {
        let run = Command::new(exe).args(bad).output().unwrap();
        assert_eq!(run.status.code(), Some(100), "{bad:?}: {run:?}");
    }
    let help = Command::new(exe).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: svkit-docgen OUTDIR"));
}

#[test]
fn every_svctl_verb_is_completed() {
    let cli: BTreeSet<String> = svkit_cli::svctl::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect();
    let listed: BTreeSet<String> = VERBS.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        cli, listed,
        "svctl's verbs changed: update SVCTL_VERBS in svkit-testkit"
    );

    let (dir, _) = generated();
    let bash = read(&dir.path().join("bash/svctl"));
    // The words offered after `svctl `.
    let top = bash
        .lines()
        .find(|l| l.trim_start().starts_with("opts=\"") && l.contains(" status "))
        .expect("a top-level opts line in the bash completion");
    let words: BTreeSet<&str> = top
        .trim()
        .trim_start_matches("opts=\"")
        .trim_end_matches('"')
        .split_whitespace()
        .collect();
    for verb in VERBS {
        assert!(words.contains(verb), "bash: {verb} not offered: {top}");
        // And each verb's own options are completed.
        assert!(
            bash.contains(&format!("svctl__subcmd__{verb})")),
            "bash: no case for {verb}"
        );
    }
    let zsh = read(&dir.path().join("zsh/_svctl"));
    let fish = read(&dir.path().join("fish/svctl.fish"));
    for verb in VERBS {
        assert!(zsh.contains(&format!("'{verb}:")), "zsh: {verb} missing");
        assert!(
            fish.contains(&format!("-a \"{verb}\"")),
            "fish: {verb} missing"
        );
    }
    // The wait targets are values, completed as such.
    assert!(bash.contains("up ready down"), "bash: wait's values");
}

#[test]
fn completion_scripts_parse() {
    let (dir, _) = generated();
    for (shell, name) in svkit_docgen::SHELLS {
        if !on_path(name) {
            svkit_testkit::skip(
                "completion_scripts_parse",
                format!("{name} not on PATH, {shell:?} completions not syntax-checked (apt-get install -y {name})"),
            );
            continue;
        }
        let check: &[&str] = match shell {
            Shell::Fish => &["--no-execute"],
            _ => &["-n"],
        };
        for bin in COMPLETED {
            let file = dir.path().join(svkit_docgen::completion_path(shell, bin));
            let out = Command::new(name).args(check).arg(&file).output().unwrap();
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "{name} {check:?} {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn man_pages_are_roff_with_a_name_section() {
    let (dir, _) = generated();
    let pages = man_pages(dir.path());
    assert_eq!(pages.len(), 5 + VERBS.len());
    for page in &pages {
        let text = read(page);
        let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!(".TH {stem} 1 "))),
            "{}: no .TH title",
            page.display()
        );
        let mut lines = text.lines();
        assert!(
            lines.any(|l| l == ".SH NAME"),
            "{}: no NAME section",
            page.display()
        );
        // The NAME line is "name \- summary", what whatis/apropos index.
        let name_line = lines.next().unwrap_or("");
        assert!(
            name_line.starts_with(&format!("{} \\- ", stem.replace('-', "\\-"))),
            "{}: NAME line {name_line:?}",
            page.display()
        );
        for section in ["SYNOPSIS", "DESCRIPTION", "OPTIONS"] {
            assert!(
                text.contains(&format!(".SH {section}")),
                "{}: no {section}",
                page.display()
            );
        }
    }
    let svctl = read(&dir.path().join("man/svctl.1"));
    for verb in VERBS {
        assert!(
            svctl.contains(&format!("svctl\\-{verb}(1)")),
            "svctl.1 does not point to svctl-{verb}(1)"
        );
    }
}

#[test]
fn the_svkit_wrap_page_says_what_its_help_says() {
    let (dir, _) = generated();
    let page = read(&dir.path().join("man/svkit-wrap.1"));
    // Undo roff's escapes to compare words with the help text.
    let plain = page
        .replace("\\-", "-")
        .replace("\\*(Aq", "'")
        .replace("\\\\", "\\");
    let plain: String = plain
        .lines()
        .filter(|l| !l.starts_with('.'))
        .collect::<Vec<_>>()
        .join(" ");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let plain = words(&plain);
    for para in svkit_cli::wrap::HELP.split("\n\n").skip(1) {
        if para.starts_with("Usage:") {
            continue;
        }
        assert!(plain.contains(&words(para)), "svkit-wrap.1 lacks: {para}");
    }
    assert!(plain
        .contains("svkit-wrap - run the container's command, supervised when the config says so"));
}

/// Checks each page with groff (all warnings on), else mandoc, else skips.
#[test]
fn man_pages_format_cleanly() {
    let (dir, _) = generated();
    let (tool, args): (&str, &[&str]) = if on_path("groff") {
        ("groff", &["-man", "-Tutf8", "-ww", "-z"])
    } else if on_path("mandoc") {
        ("mandoc", &["-Tlint", "-Wwarning"])
    } else {
        svkit_testkit::skip(
            "man_pages_format_cleanly",
            "neither groff nor mandoc on PATH (apt-get install -y groff-base)",
        );
        return;
    };
    for page in man_pages(dir.path()) {
        let out = Command::new(tool).args(args).arg(&page).output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{tool} {}: {}",
            page.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // And the formatted svctl page reads as expected (plain text: no
    // overstriking, no SGR).
    if tool == "groff" {
        let out = Command::new("groff")
            .args(["-man", "-Tascii", "-P-c", "-P-b", "-P-u", "-P-o"])
            .arg(dir.path().join("man/svctl-status.1"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for want in [
            "NAME",
            "svctl-status - Show the state of slots",
            "EXTRA",
            "  svctl status --all",
        ] {
            assert!(text.contains(want), "{want:?} not in:\n{text}");
        }
    }
}

// --- The help of each binary is what it was before the CLIs moved into
// libraries: the key lines below are copied from the binaries' `--help`
// before the move, and each built binary prints exactly what its library
// definition renders.

fn key_lines(bin: &str) -> &'static [&'static str] {
    match bin {
        "svctl" => &[
            "See and steer the svkit slots of an s6-overlay container",
            "Usage: svctl <COMMAND>",
            "  status      Show the state of slots (a table, or JSON)",
            "  render      Render every declared slot into an empty directory (never a live scandir)",
            "  svctl plan && svctl apply                see, then make, what the config asks",
            "3 a slot not in its wanted state; 4 unknown slot; 100 bad usage; 111 system error.",
        ],
        "svkit-reconcile" => &[
            "Boot hook: render the declared svkit slots into the s6 scandir",
            "Usage: svkit-reconcile [OPTIONS]",
            "      --lock-timeout <DURATION>  How long to wait for another reconcile to finish: 500ms, 3s, 2m; a bare number is milliseconds [default: 30s]",
            "  reconcile: slot=gateway-default action=create state=up",
        ],
        "svkit-lifeline" => &[
            "Run CMD bound to the lifetime of lifeline's parent, after reaping a provably stale instance squatting its port",
            "Usage: svkit-lifeline [OPTIONS] [-- <CMD>...]",
            "  126    CMD could not be executed; 127 CMD not found",
            "See docs/lifeline.md.",
        ],
        "svkit-init" => &[
            "svkit-init: the container's entrypoint, supervised wherever it runs",
            "Usage: svkit-init [--] [CMD...]       (ENTRYPOINT [\"svkit-init\", \"--\"])",
        ],
        "svkit-wrap" => &[
            "svkit-wrap: run the container's command, supervised when the config says so",
            "Usage: svkit-wrap [--] [ARGV...]",
            "Environment: SVKIT_CONFIG_DIR (default /etc/svkit), SVKIT_SCANDIR",
        ],
        _ => unreachable!(),
    }
}

/// What the library definition of `bin` prints for `argv` (`--help`,
/// `-h`, `--version`, `VERB --help`): the text clap hands the binary to print.
fn lib_output(bin: &str, argv: &[&str]) -> String {
    if bin == "svkit-init" {
        return match argv {
            ["--help"] | ["-h"] => format!("{}\n", svkit_cli::init::HELP),
            ["--version"] => format!("svkit-init {}\n", svkit_cli::wrap::VERSION),
            _ => unreachable!("{argv:?}"),
        };
    }
    if bin == "svkit-wrap" {
        return match argv {
            ["--help"] | ["-h"] => format!("{}\n", svkit_cli::wrap::HELP),
            ["--version"] => format!("svkit-wrap {}\n", svkit_cli::wrap::VERSION),
            _ => unreachable!("{argv:?}"),
        };
    }
    let cmd = svkit_docgen::clap_commands()
        .into_iter()
        .find(|c| c.get_name() == bin)
        .unwrap();
    let err = cmd
        .try_get_matches_from(std::iter::once(bin).chain(argv.iter().copied()))
        .expect_err("help and version end the parse");
    assert!(!err.use_stderr(), "{bin} {argv:?}: {err}");
    err.render().to_string()
}

#[test]
fn library_help_keeps_its_key_lines() {
    for bin in COMPLETED.into_iter().chain(["svkit-wrap", "svkit-init"]) {
        let help = lib_output(bin, &["--help"]);
        let lines: Vec<&str> = help.lines().collect();
        for key in key_lines(bin) {
            assert!(
                lines.contains(key),
                "{bin} --help lost the line {key:?}:\n{help}"
            );
        }
    }
}

/// The built binary, or None (with the reason printed) when it is not built.
fn built(bin: &str) -> Option<PathBuf> {
    let svkit = svkit_testkit::bin("svkit");
    if svkit.is_file() {
        Some(svkit_testkit::tool(bin))
    } else {
        println!(
            "skip: {} not built (cargo build --workspace, or run this with -p svkit-cli)",
            svkit.display()
        );
        None
    }
}

fn stdout_of(path: &Path, args: &[&str]) -> String {
    let out = Command::new(path).args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} {args:?}: {out:?}",
        path.display()
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn binaries_print_their_library_help() {
    for bin in COMPLETED.into_iter().chain(["svkit-wrap", "svkit-init"]) {
        let Some(path) = built(bin) else { continue };
        for argv in [&["--help"][..], &["-h"][..], &["--version"][..]] {
            assert_eq!(
                stdout_of(&path, argv),
                lib_output(bin, argv),
                "{bin} {argv:?} differs from its library's definition \
                 (stale build? cargo build --workspace)"
            );
        }
        let help = stdout_of(&path, &["--help"]);
        for key in key_lines(bin) {
            assert!(
                help.lines().any(|l| l == *key),
                "{bin} --help lacks {key:?}"
            );
        }
    }
}

#[test]
fn svctl_verbs_print_their_library_help() {
    let Some(path) = built("svctl") else { return };
    for verb in VERBS {
        let help = stdout_of(&path, &[verb, "--help"]);
        assert_eq!(
            help,
            lib_output("svctl", &[verb, "--help"]),
            "svctl {verb} --help"
        );
        assert!(
            help.contains(&format!("Usage: svctl {verb} ")),
            "svctl {verb} --help: {help}"
        );
        assert!(
            help.contains("Examples:\n  svctl "),
            "svctl {verb} --help: {help}"
        );
    }
}

// --- Exit codes: every code a binary can return (named once, in
// `svkit::msg::exit`) is listed by its `--help` and its docs.

/// The numbers in `text` (0-255), as words: `128+N` gives 128.
fn numbers(text: &str) -> BTreeSet<u8> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The repository's `rel` file.
fn repo_doc(rel: &str) -> String {
    read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel),
    )
}

/// From the `heading` line to the next heading of the same level.
fn section(doc: &str, heading: &str) -> String {
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let level = heading.split(' ').next().unwrap_or("##");
    let body = &doc[start + 1..];
    let end = body[heading.len()..]
        .find(&format!("\n{level} "))
        .map_or(body.len(), |e| e + heading.len());
    body[..end].to_owned()
}

#[test]
fn every_exit_code_is_in_help_and_docs() {
    use svkit::msg::exit;
    let readme = section(&repo_doc("README.md"), "## Exit codes");
    // The convention (0, 100, 111) is the first paragraph; then one list
    // item per binary.
    let convention = readme.split("\n\n").nth(1).unwrap_or_default();
    let item = |bin: &str| {
        let item = readme
            .split("\n- ")
            .find(|i| i.starts_with(&format!("`{bin}`")))
            .unwrap_or_else(|| panic!("README's Exit codes has no item for {bin}"));
        format!(
            "{convention}\n{}",
            item.split("\n\n").next().unwrap_or(item)
        )
    };
    for (bin, codes, doc, doc_name) in [
        (
            "svctl",
            exit::svctl::CODES,
            section(&repo_doc("docs/svctl.md"), "## Verbs and exit codes"),
            "docs/svctl.md",
        ),
        (
            "svkit-lifeline",
            exit::lifeline::CODES,
            section(&repo_doc("docs/lifeline.md"), "## Exit codes"),
            "docs/lifeline.md",
        ),
        (
            "svkit-reconcile",
            exit::reconcile::CODES,
            item("svkit-reconcile"),
            "README.md",
        ),
        (
            "svkit-wrap",
            exit::wrap::CODES,
            item("svkit-wrap"),
            "README.md",
        ),
    ] {
        let help = lib_output(bin, &["--help"]);
        let at = help
            .find("Exit codes")
            .unwrap_or_else(|| panic!("{bin} --help has no exit codes"));
        let (in_help, in_doc) = (numbers(&help[at..]), numbers(&doc));
        for code in codes {
            assert!(
                in_help.contains(code),
                "{bin} --help does not list exit code {code}"
            );
            assert!(
                in_doc.contains(code),
                "{doc_name} does not list {bin}'s exit code {code}"
            );
        }
    }
}
