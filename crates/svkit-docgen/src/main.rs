//! `svkit-docgen OUTDIR`: write shell completions and man pages for svkit's
//! binaries under OUTDIR (`make completions` uses `target/completions`).

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "Usage: svkit-docgen OUTDIR

Writes OUTDIR/{bash,zsh,fish}/ completions for svctl, svkit-reconcile and
svkit-lifeline, and OUTDIR/man/*.1 man pages for them, each svctl verb and
svkit-wrap. See docs/svctl.md, \"Shell completions and man pages\".";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = match args.as_slice() {
        [h] if h == "-h" || h == "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [dir] if !dir.starts_with('-') => PathBuf::from(dir),
        _ => {
            eprintln!("svkit-docgen: fatal: usage: svkit-docgen OUTDIR");
            return ExitCode::from(100);
        }
    };
    match svkit_docgen::generate(&out) {
        Ok(files) => {
            println!(
                "svkit-docgen: wrote {} files under {}",
                files.len(),
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("svkit-docgen: fatal: {e}");
            ExitCode::from(111)
        }
    }
}
