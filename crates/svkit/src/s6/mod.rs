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

/// s6-svscan's default `-C`: s6 2.15.0.0's `src/supervision/s6-svscan.c`
/// (`static uint32_t max = 1000`), documented in its `doc/s6-svscan.html`
/// ("Default is 1000").
///
/// s6-svscan sizes its tables once, at start, from its `-C` (`-c` before
/// s6 2.14 renamed it). s6-overlay 3.2.3.0's stage 1 (s6-linux-init) runs
/// it as `s6-svscan -dN -- /run/service`, with no `-C` and no setting that
/// adds one, and svkit-init runs it without one too: the limit is always
/// the default.
pub const SVSCAN_MAX: u32 = 1000;

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
