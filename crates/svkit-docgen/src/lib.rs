//! Shell completions and man pages for svkit's binaries, generated from
//! their command-line definitions (`make completions`). Dev-only: nothing
//! here ships in the image.
//!
//! `generate(OUTDIR)` writes:
//!
//! - `OUTDIR/bash/<bin>`, `OUTDIR/zsh/_<bin>`, `OUTDIR/fish/<bin>.fish` for
//!   `svctl`, `svkit-reconcile` and `svkit-lifeline` (from their clap
//!   definitions, with `clap_complete`);
//! - `OUTDIR/man/<bin>.1` for those three, `svkit-init` and `svkit-wrap`, plus one page per
//!   `svctl` verb (`svctl-status.1`, ...), with `clap_mangen`.
//!
//! svkit-init and svkit-wrap parse their argv by hand (everything after
//! `--` belongs to the wrapped command), so they get no completion script,
//! and their man pages are built from their `--help` text by
//! [`hand_parsed_commands`].
#![forbid(unsafe_code)]

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command, CommandFactory};
use clap_complete::Shell;

/// The binaries with a clap definition: completions and man pages.
pub fn clap_commands() -> Vec<Command> {
    vec![
        svkit_cli::svctl::cli::Cli::command(),
        svkit_cli::reconcile::cli::Cli::command(),
        svkit_cli::lifeline::cli::Cli::command(),
    ]
}

/// The shells completions are written for, with the file each expects:
/// the names the bash-completion, zsh `fpath` and fish conventions look up.
pub const SHELLS: [(Shell, &str); 3] = [
    (Shell::Bash, "bash"),
    (Shell::Zsh, "zsh"),
    (Shell::Fish, "fish"),
];

/// The completion file of `bin` for `shell`, relative to OUTDIR.
pub fn completion_path(shell: Shell, bin: &str) -> PathBuf {
    match shell {
        Shell::Bash => Path::new("bash").join(bin),
        Shell::Zsh => Path::new("zsh").join(format!("_{bin}")),
        Shell::Fish => Path::new("fish").join(format!("{bin}.fish")),
        other => Path::new(&other.to_string()).join(bin),
    }
}

/// The command lines parsed by hand (everything after `--` belongs to
/// the wrapped command), for their man pages only: rebuilt from each
/// `--help` text (about line, usage, prose) so the page says what `--help`
/// says. The binaries themselves do not use clap.
pub fn hand_parsed_commands() -> Vec<Command> {
    vec![
        hand_parsed("svkit-init", svkit_cli::init::HELP, "CMD"),
        hand_parsed("svkit-wrap", svkit_cli::wrap::HELP, "ARGV"),
    ]
}

/// svkit-wrap's page ([`hand_parsed_commands`]).
pub fn wrap_command() -> Command {
    hand_parsed("svkit-wrap", svkit_cli::wrap::HELP, "ARGV")
}

fn hand_parsed(name: &'static str, help: &'static str, argv: &'static str) -> Command {
    let (first, rest) = help.split_once("\n\n").unwrap_or((help, ""));
    let about = first
        .strip_prefix(name)
        .and_then(|a| a.strip_prefix(": "))
        .unwrap_or(first);
    // The paragraphs after the usage line: the description, then the
    // reference part (exit codes, environment) as the after-help.
    let paragraphs: Vec<&str> = rest
        .split("\n\n")
        .filter(|p| !p.starts_with("Usage:"))
        .collect();
    let split = paragraphs
        .iter()
        .position(|p| p.starts_with("Exit codes:"))
        .unwrap_or(paragraphs.len());
    let description = paragraphs[..split].join("\n\n");
    let after = paragraphs[split..].join("\n\n");
    let mut cmd = Command::new(name)
        .version(svkit_cli::wrap::VERSION)
        .about(about)
        .long_about(description)
        // -h and --help print the same text.
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .help("Print help")
                .action(ArgAction::Help),
        )
        .arg(
            Arg::new(argv)
                .help("The container's command: everything after `--` is its own, flags included")
                .num_args(0..)
                .last(true)
                .action(ArgAction::Append),
        );
    if !after.is_empty() {
        cmd = cmd.after_help(after);
    }
    cmd
}

fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, bytes).map_err(|e| {
        let why = svkit::msg::strerror(&e);
        io::Error::new(
            e.kind(),
            format!("unable to write {}: {why}", path.display()),
        )
    })
}

/// Writes every completion script and man page under `out`; returns the
/// files written, in order.
pub fn generate(out: &Path) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for mut cmd in clap_commands() {
        let bin = cmd.get_name().to_owned();
        for (shell, _) in SHELLS {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, &bin, &mut buf);
            let path = out.join(completion_path(shell, &bin));
            write(&path, &buf)?;
            written.push(path);
        }
    }
    let man = out.join("man");
    fs::create_dir_all(&man)?;
    for cmd in clap_commands().into_iter().chain(hand_parsed_commands()) {
        // The footer of every page, a verb's included: "svctl 0.1.0".
        let source = format!(
            "{} {}",
            cmd.get_name(),
            cmd.get_version().unwrap_or_default()
        );
        // One page for the command and one per (visible) subcommand:
        // svctl.1, svctl-status.1, ...
        let mut pages = Vec::new();
        collect_pages(cmd.disable_help_subcommand(true), &mut pages);
        for page in pages {
            let page = clap_mangen::Man::new(page).source(source.clone());
            let mut buf = Vec::new();
            page.render(&mut buf)?;
            let path = man.join(page.get_filename());
            write(&path, &buf)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// The command then its visible subcommands, recursively, built so that
/// subcommands carry their full display name (`svctl-status`).
fn collect_pages(mut cmd: Command, pages: &mut Vec<Command>) {
    cmd.build();
    let subs: Vec<Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    pages.push(cmd);
    for sub in subs {
        collect_pages(sub, pages);
    }
}
