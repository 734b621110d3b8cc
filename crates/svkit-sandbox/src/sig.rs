//! Signal plumbing of the host monitor, which waits with signals blocked
//! (sigwait); a blocked mask survives exec, so its children get an empty
//! mask back or they would never see the SIGTERM of a `docker stop`.

use nix::sys::signal::{SigSet, Signal};

pub fn set_of(signals: &[Signal]) -> SigSet {
    let mut set = SigSet::empty();
    for s in signals {
        set.add(*s);
    }
    set
}
