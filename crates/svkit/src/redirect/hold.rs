//! The keep-alive: the CMD process stays, blocked in the kernel, until the
//! container is stopped. In-process, because slim images may have no
//! `sleep` (the reference deployment broke on that).

use nix::sys::signal::{SigSet, Signal};

use crate::msg::exit;

fn stop_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Blocks until SIGTERM, SIGINT or SIGHUP; returns the exit code 128+N.
/// Spawns nothing and so reaps nothing; uses no CPU while waiting.
pub fn keep_alive() -> i32 {
    let set = stop_signals();
    if set.thread_block().is_err() {
        return i32::from(exit::SYSTEM);
    }
    loop {
        if let Ok(sig) = set.wait() {
            return exit::signaled(sig as i32);
        }
    }
}

/// Replaces this process with the smallest keep-alive there is, keeping
/// its pid (it is still the CMD): s6-overlay's own `s6-pause`, which a
/// redirect can count on (it only happens under s6-overlay). Its name
/// stays: s6-overlay's utilities are one binary that dispatches on it. A
/// stop signal kills it, so its parent sees 128+N as from [`keep_alive`]. If that exec fails, a fresh
/// `svkit-wrap --hold SLOT` (without the pages config, render and
/// reconcile touched). Returns only if both failed; the caller then holds
/// in-process.
pub fn exec_keep_alive(slot: &str) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    // Unblocked: s6-pause waits in pause(2) for a signal to end it. A stop
    // arriving before it runs ends this process the same way.
    let _ = stop_signals().thread_unblock();
    let _ = std::process::Command::new(crate::container::s6_tool("s6-pause")).exec();
    // The real path, not /proc/self/exe: the name is what ps and comm show.
    // Run as a link to the multi-call `svkit`, the real path is svkit's:
    // the `svkit-wrap` link beside it keeps the name.
    let exe = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    let link = exe.with_file_name("svkit-wrap");
    let exe = if link.exists() { link } else { exe };
    // Blocked across the exec (the mask survives it): a stop arriving
    // before the new image waits is queued, and still ends in 128+N.
    let _ = stop_signals().thread_block();
    std::process::Command::new(exe)
        .arg0("svkit-wrap")
        .args(["--hold", slot])
        .exec()
}
