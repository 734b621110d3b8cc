//! One change of a `remember` slot at a time. What such a slot is told is
//! said three times: remembered (`state_dir/desired/SLOT`), its `down`
//! file, and s6's want flag. Two operators' `start` and `stop` at the same
//! moment would otherwise interleave those writes and leave them telling
//! different stories (remembered up, wanted down), which the next boot
//! then settles the other way. Each change holds an flock on the slot dir
//! itself from the first write to the command sent, so the last one to
//! take it wins all three.
//!
//! The slot dir, not a file in it: every user who may control the slot
//! can open it (a slot's user cannot create files in its root-owned dir),
//! and there is nothing new on disk. s6 never flocks a service dir (its
//! supervisor locks `supervise/lock`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use nix::fcntl::Flock;

use super::{Error, Op, Slots};
use crate::msg::strerror;

/// How long a change waits for another one of the same slot. Most hold it
/// for a few writes; a `stop --wait` of several slots holds a slot's until
/// its dependents are down and its own command is sent.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// The slot locks a change holds, by slot name; each goes once its slot's
/// command is sent ([`Held::release`]), the rest when this is dropped.
#[derive(Default)]
pub(super) struct Held(BTreeMap<String, Flock<File>>);

impl Held {
    /// Locks each of `names` for `op`, in name order, so that two changes
    /// of the same slots never each hold what the other waits for.
    pub(super) fn take<'n>(
        slots: &Slots,
        names: impl Iterator<Item = &'n String>,
        op: Op,
        timeout: Duration,
    ) -> Result<Held, Error> {
        let sorted: BTreeSet<&String> = names.collect();
        let start = Instant::now();
        let mut held = Held::default();
        for n in sorted {
            let dir = slots.dir(n);
            let fail =
                |e| super::remember(format!("unable to lock {}", dir.display()), strerror(&e));
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW)
                .open(&dir)
                .map_err(fail)?;
            let left = timeout.saturating_sub(start.elapsed());
            let Some(lock) = crate::fsutil::flock_within(file, left).map_err(fail)? else {
                let waited_ms = start.elapsed().as_millis() as u64;
                return Err(Error::Busy {
                    op,
                    slot: n.clone(),
                    waited_ms,
                });
            };
            held.0.insert(n.clone(), lock);
        }
        Ok(held)
    }

    /// Lets go of `name`'s lock: its command is sent.
    pub(super) fn release(&mut self, name: &str) {
        self.0.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot held by another change is refused after the wait, naming the
    /// slot and the verb; one let go of is taken; a name given twice is
    /// locked once (a second flock of it would wait on our own).
    #[test]
    fn a_held_slot_is_busy_until_let_go() {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(t.path().join("rem")).expect("mkdir");
        let slots = Slots {
            scandir: t.path(),
            model: None,
        };
        let names = ["rem".to_string(), "rem".to_string()];
        let short = Duration::from_millis(100);
        let mut first = Held::take(&slots, names.iter(), Op::Stop, short).expect("first");
        let second = Held::take(&slots, names.iter(), Op::Start, short);
        match second {
            Err(e @ Error::Busy { .. }) => assert!(
                e.to_string().starts_with(
                    "unable to start rem: another start, stop or restart of it is under way (waited "
                ),
                "{e}"
            ),
            other => panic!("expected busy, got {:?}", other.map(|_| ())),
        }
        first.release("rem");
        Held::take(&slots, names.iter(), Op::Start, short).expect("after release");
        let gone = ["gone".to_string()];
        assert!(matches!(
            Held::take(&slots, gone.iter(), Op::Start, short),
            Err(Error::Remember { .. })
        ));
    }
}
