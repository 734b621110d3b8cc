//! The tools of the shipped `svkit` binary, a module each: argv, messages
//! and exit codes over the `svkit` library, where every behaviour lives.
//! `svkit-docgen` renders completions and man pages from their CLI
//! definitions.
#![forbid(unsafe_code)]

pub mod apply;
pub mod clapmsg;
pub mod config;
pub mod duration;
pub mod init;
pub mod internal;
pub mod lifeline;
pub mod reconcile;
pub mod svctl;
pub mod wrap;
