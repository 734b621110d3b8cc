//! `svkit-lifeline`: [`main`] is the whole program, and `svkit-docgen`
//! renders completions and man pages from [`cli::Cli`].

pub mod cli;
mod entry;

pub use entry::main;
