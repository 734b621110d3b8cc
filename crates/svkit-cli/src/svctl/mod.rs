//! `svctl`, the operator's command: [`main`] is the whole program, and
//! `svkit-docgen` renders completions and man pages from [`cli::Cli`].

pub mod args;
pub mod cli;
mod entry;
mod verbs;

pub use entry::main;
