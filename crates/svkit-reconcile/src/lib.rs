//! svkit-reconcile as a library: [`main`] is the whole program (the
//! `svkit-reconcile` binary and the multi-call `svkit` binary both run it),
//! and `svkit-docgen` renders completions and man pages from [`cli::Cli`].

pub mod cli;
mod entry;

pub use entry::main;
