//! The keep-alive: the CMD process stays, blocked in the kernel, until the
//! container is stopped. In-process, because slim images may have no
//! `sleep` (the reference deployment broke on that).

use nix::sys::signal::{SigSet, Signal};

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
        return 111;
    }
    drop_clean_file_pages();
    loop {
        if let Ok(sig) = set.wait() {
            return 128 + sig as i32;
        }
    }
}

/// Replaces this process with a fresh `svkit-wrap --hold SLOT`: the same
/// pid (still the CMD), but without the pages the config, render and
/// reconcile code touched, so the keep-alive stays as small as `sleep`.
/// Returns only if the exec failed; the caller then holds in-process.
pub fn exec_hold(slot: &str) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    // The real path, not /proc/self/exe: the name is what ps and comm show.
    let exe = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    // Blocked across the exec (the mask survives it): a stop arriving
    // before the new image waits is queued, and still ends in 128+N.
    let _ = stop_signals().thread_block();
    std::process::Command::new(exe)
        .arg0("svkit-wrap")
        .args(["--hold", slot])
        .exec()
}

/// Gives back the resident pages of code mappings (our binary's and libc's
/// text, touched during start-up): text is never written, so its pages are
/// clean copies of the page cache that the kernel re-reads if needed again.
/// Read-only data is left alone: relocations wrote to it (RELRO) before it
/// became read-only, so its pages are private copies. What stays resident
/// is what the wait itself uses.
fn drop_clean_file_pages() {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms), _, _, Some(inode)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        // Only file-backed, executable, never-writable mappings.
        if perms != "r-xp" || inode == "0" {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else {
            continue;
        };
        let (Some(addr), Some(len)) = (
            std::ptr::NonNull::new(a as *mut std::ffi::c_void),
            b.checked_sub(a),
        ) else {
            continue;
        };
        // SAFETY: the range is a mapping of this process, read-only and
        // file-backed: dropping its pages loses nothing (they refault from
        // the file); the mapping itself stays.
        let _ = unsafe {
            nix::sys::mman::madvise(addr, len, nix::sys::mman::MmapAdvise::MADV_DONTNEED)
        };
    }
}
