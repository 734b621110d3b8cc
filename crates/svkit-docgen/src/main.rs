//! `svkit-docgen OUTDIR`: write shell completions and man pages for svkit's
//! binaries under OUTDIR (`make completions` uses `target/completions`).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use svkit::msg::{self, Fatal};

const USAGE: &str = "Usage: svkit-docgen OUTDIR

Writes OUTDIR/{bash,zsh,fish}/ completions for svctl, svkit-reconcile and
svkit-lifeline, and OUTDIR/man/*.1 man pages for them, each svctl verb and
svkit-wrap. See docs/svctl.md, \"Shell completions and man pages\".";

fn main() -> ExitCode {
    msg::init("svkit-docgen");
    // An OUTDIR is bytes: a path that is not UTF-8 is still a path.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let out = match args.as_slice() {
        [h] if h == "-h" || h == "--help" => {
            return match msg::out(format!("{USAGE}\n")) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => f.report(),
            };
        }
        [dir] if !dir.as_encoded_bytes().starts_with(b"-") => PathBuf::from(dir),
        _ => return Fatal::usage("usage", "svkit-docgen OUTDIR; see --help").report(),
    };
    match svkit_docgen::generate(&out) {
        Ok(files) => {
            let done = format!(
                "svkit-docgen: wrote {} files under {}\n",
                files.len(),
                out.display()
            );
            match msg::out(done) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => f.report(),
            }
        }
        Err(e) => Fatal::system(e.to_string(), "").report(),
    }
}
