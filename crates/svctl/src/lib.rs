//! svctl's command line, as a library: the `svctl` binary parses with
//! [`cli::Cli`], and `svkit-docgen` renders completions and man pages from
//! the same definition.

pub mod args;
pub mod cli;
