//! `--help`, `--version` and bad usage, one way for every tool: help and
//! version go to stdout (a closed stdout is a quiet end), bad usage is one
//! `PROG: fatal: usage: ...` line and exit 100. Tools with a clap CLI go
//! through [`parse`]; those that take their argv by hand (everything after
//! `--` is the command they run) through [`hand_parsed`].

use std::ffi::OsString;
use svkit::msg::{self, exit, fatal, out_error};

/// The argv of a tool that parses it by hand: a leading `--` is dropped,
/// and a leading `--help`/`-h` or `--version`/`-V` prints and exits. The
/// rest is the command, bytes as given: what is not UTF-8 passes through.
pub fn hand_parsed(prog: &str, help: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let print = |text: String| match msg::out(text) {
        Ok(()) => std::process::exit(i32::from(exit::OK)),
        Err(f) => msg::die(f.code, f),
    };
    match args.first().and_then(|a| a.to_str()) {
        Some("--") => {
            args.remove(0);
        }
        Some("--help" | "-h") => print(format!("{help}\n")),
        Some("--version" | "-V") => print(format!("{prog} {}\n", env!("CARGO_PKG_VERSION"))),
        _ => {}
    }
    args
}

/// Parses argv with `P`. `--help` and `--version` print to stdout and exit
/// 0; bad usage prints `PROG: fatal: usage: WHAT; see --help` and
/// exits 100.
pub fn parse<P: clap::Parser>() -> P {
    match P::try_parse() {
        Ok(p) => p,
        Err(e) => std::process::exit(i32::from(clap_error(&e))),
    }
}

/// Prints what a clap error asks for; its exit code.
pub fn clap_error(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => match e.print().or_else(out_error) {
            Ok(()) => exit::OK,
            Err(f) => {
                fatal(&f);
                f.code
            }
        },
        _ => {
            fatal(format_args!("usage: {}", usage_line(e)));
            exit::USAGE
        }
    }
}

/// `WHAT; see --help`, one line: clap's first paragraph without its
/// `error: ` (a list it announces with `:` joined in), or, for a missing
/// command, the usage line (`svctl <COMMAND>`).
pub fn usage_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let what = if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        text.lines()
            .find_map(|l| l.strip_prefix("Usage: "))
            .unwrap_or("a command is missing")
            .to_owned()
    } else {
        let first: Vec<&str> = text
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        first.join(" ").trim_start_matches("error: ").to_owned()
    };
    format!("{what}; see --help")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_error_is_one_line() {
        use clap::Parser;
        #[derive(Parser, Debug)]
        #[command(name = "t")]
        struct Cli {
            #[arg(long)]
            n: u32,
            #[arg(long, value_enum)]
            to: Option<To>,
        }
        #[derive(clap::ValueEnum, Clone, Debug)]
        enum To {
            Up,
            Down,
        }
        #[derive(Parser, Debug)]
        #[command(name = "t")]
        enum Verbs {
            Go,
        }
        let e = Cli::try_parse_from(["t", "--n", "x"]).expect_err("bad value");
        assert_eq!(
            usage_line(&e),
            "invalid value 'x' for '--n <N>': invalid digit found in string; see --help"
        );
        let e = Cli::try_parse_from(["t", "--bogus"]).expect_err("bad flag");
        assert_eq!(
            usage_line(&e),
            "unexpected argument '--bogus' found; see --help"
        );
        // Lists clap prints on lines of their own are joined in.
        let e = Cli::try_parse_from(["t"]).expect_err("missing --n");
        assert_eq!(
            usage_line(&e),
            "the following required arguments were not provided: --n <N>; see --help"
        );
        let e = Cli::try_parse_from(["t", "--n", "1", "--to", "x"]).expect_err("bad value");
        assert_eq!(
            usage_line(&e),
            "invalid value 'x' for '--to <TO>' [possible values: up, down]; see --help"
        );
        // No command at all: clap would print the whole help; the usage line.
        let e = Verbs::try_parse_from(["t"]).expect_err("no command");
        assert_eq!(usage_line(&e), "t <COMMAND>; see --help");
    }
}
