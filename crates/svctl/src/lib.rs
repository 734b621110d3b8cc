//! svctl as a library: [`main`] is the whole program (the `svctl` binary
//! and the multi-call `svkit` binary both run it), and `svkit-docgen`
//! renders completions and man pages from [`cli::Cli`].

pub mod args;
pub mod cli;
mod entry;
mod verbs;

pub use entry::main;
