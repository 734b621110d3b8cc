//! svkit-reconcile's command line, as a library: the binary parses with
//! [`cli::Cli`], and `svkit-docgen` renders completions and man pages from
//! the same definition.

pub mod cli;
