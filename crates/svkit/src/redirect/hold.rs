//! The keep-alive: the CMD process stays, blocked in the kernel, until the
//! container is stopped. In-process, because slim images may have no
//! `sleep` (the reference deployment broke on that).

use nix::sys::signal::{SigSet, Signal};

/// Blocks until SIGTERM, SIGINT or SIGHUP; returns the exit code 128+N.
/// Spawns nothing and so reaps nothing; uses no CPU while waiting.
pub fn keep_alive() -> i32 {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    if set.thread_block().is_err() {
        return 111;
    }
    loop {
        if let Ok(sig) = set.wait() {
            return 128 + sig as i32;
        }
    }
}
