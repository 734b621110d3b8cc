//! svkit core library.
//!
//! Binaries are thin wrappers over this crate; every behaviour lives here,
//! in a module named after its concern.
