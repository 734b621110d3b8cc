//! s6's own protocol, and nothing of svkit's: the supervise status bytes
//! ([`status`], [`tai64`]), the control FIFO's `s6-svc` bytes ([`control`]),
//! event FIFOs ([`fifo`]), signal names ([`signal`]) and waking on a supervise dir's changes
//! ([`wait`]). What those states mean to svkit is [`crate::slot`]'s.
//!
//! Imports nothing of svkit's domain (only `msg`, `clock`, `fsutil`,
//! `container`): the layering test holds it to that.

pub mod control;
pub mod fifo;
pub mod signal;
pub mod status;
pub mod tai64;
pub mod wait;

/// The names in `scandir` that s6-svscan takes for services, sorted: it
/// ignores `.`-led names. One that is not UTF-8 is no slot of svkit's.
pub fn services(scandir: &std::path::Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(scandir)? {
        if let Ok(name) = entry?.file_name().into_string() {
            if !name.starts_with('.') {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names)
}

/// A service dir's name, as messages show it (empty for a path that ends
/// in `..`).
pub fn slot_name(dir: &std::path::Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
