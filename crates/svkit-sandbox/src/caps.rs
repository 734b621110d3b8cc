//! Docker's default capability set, so the sandbox's root is as weak as a
//! container's: no CAP_SYS_PTRACE (root cannot read another user's
//! `/proc/PID/environ`), no CAP_SYS_ADMIN (no mounts), and so on.

use anyhow::{Context, Result};
use rustix::thread::{self, CapabilitySet, CapabilitySets};

/// The capabilities Docker grants a container by default, by number.
const DOCKER_DEFAULT: &[u32] = &[
    0,  // CHOWN
    1,  // DAC_OVERRIDE
    3,  // FOWNER
    4,  // FSETID
    5,  // KILL
    6,  // SETGID
    7,  // SETUID
    8,  // SETPCAP
    10, // NET_BIND_SERVICE
    13, // NET_RAW
    18, // SYS_CHROOT
    27, // MKNOD
    29, // AUDIT_WRITE
    31, // SETFCAP
];

/// Drops every other capability from this thread's bounding set and its
/// inheritable and ambient sets: root gets Docker's set back at the next
/// exec, and nothing can regain the rest.
pub fn restrict_to_docker_default() -> Result<()> {
    let last = last_cap();
    for n in 0..=last {
        if DOCKER_DEFAULT.contains(&n) {
            continue;
        }
        thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << n))
            .with_context(|| format!("unable to drop capability {n} from the bounding set"))?;
    }
    let now = thread::capabilities(None).context("unable to read capabilities")?;
    let keep = DOCKER_DEFAULT.iter().fold(CapabilitySet::empty(), |s, n| {
        s | CapabilitySet::from_bits_retain(1 << n)
    });
    thread::set_capabilities(
        None,
        CapabilitySets {
            effective: now.effective & keep,
            permitted: now.permitted & keep,
            inheritable: CapabilitySet::empty(),
        },
    )
    .context("unable to set capabilities")?;
    thread::clear_ambient_capability_set().context("unable to clear ambient capabilities")
}

/// The highest capability number this kernel knows.
fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40)
}
