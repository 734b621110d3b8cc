//! svkit core library.
//!
//! Binaries are thin wrappers over this crate; every behaviour lives here,
//! in a module named after its concern. Top-level modules import each other
//! without a cycle, and each module's doc says what it may not import
//! (`tests/layering.rs` holds them to it): `s6` is s6's protocol, `slot`
//! svkit's rules about slots on top of it, `probe` the one probe.
// One unsafe block, allowed where it is (`lifeline::spawn`): std offers
// no safe way to run code between fork and exec.
#![deny(unsafe_code)]

pub mod capacity;
pub mod claim;
pub mod clock;
pub mod config;
pub mod container;
pub mod control;
pub mod foreground;
pub mod fsutil;
pub mod init;
pub mod leftovers;
pub mod lifeline;
pub mod liveness;
pub mod logs;
pub mod msg;
pub mod passwd;
pub mod probe;
pub mod reconcile;
pub mod redirect;
pub mod render;
pub mod s6;
pub mod schedule;
pub mod slot;
pub mod slotenv;
pub mod state;
pub mod stopbudget;
pub mod stray;
pub mod sys;
