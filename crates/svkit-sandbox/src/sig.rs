//! Signal plumbing shared by the host monitor and stage 2.
//!
//! Both wait with signals blocked (sigwait), and a blocked mask survives
//! exec: every child must get an empty mask back or it would never see the
//! SIGTERM of a `docker stop`.

use nix::sys::signal::{SigSet, Signal};
use std::os::unix::process::CommandExt;
use std::process::Command;

pub fn set_of(signals: &[Signal]) -> SigSet {
    let mut set = SigSet::empty();
    for s in signals {
        set.add(*s);
    }
    set
}

pub fn unblock_in_child(cmd: &mut Command) -> &mut Command {
    // SAFETY: pthread_sigmask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| SigSet::empty().thread_set_mask().map_err(Into::into));
    }
    cmd
}
