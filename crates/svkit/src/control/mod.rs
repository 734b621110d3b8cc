//! Slot control: what `svctl start|stop|restart|signal` and the redirect
//! do to slots. Commands go to each slot's supervisor (`s6::control`, the
//! bytes `s6-svc` writes); stops go in reverse dependency order and
//! starts in dependency order; what `remember` slots want is persisted
//! first; waits are bounded and end in a [`Waited`] for the caller to say.

mod lock;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::config::{depends, Autostart, Kind};
use crate::msg::{self, strerror};
use crate::s6::control::{self, ControlError, SvcCommand};
use crate::s6::status::{read_slot, StatusError};
use crate::slot::wait::{Target, Watched};
use crate::state::{write_desired, Desired, StateError};

pub use crate::slot::snapshot::Slots;
pub use crate::slot::wait::{wait_for, Waited};
use lock::Held;
pub use lock::LOCK_TIMEOUT;

/// What an operator asks of slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Start,
    Stop,
    Restart,
}

impl Op {
    pub fn verb(self) -> &'static str {
        match self {
            Op::Start => "start",
            Op::Stop => "stop",
            Op::Restart => "restart",
        }
    }
}

/// How an [`Op`] is carried out.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub op: Op,
    /// A bulk action over every slot (the shutdown hook's `stop --all`):
    /// it does not rewrite what operators chose for each slot, and a
    /// restart restarts only what is up.
    pub all: bool,
    /// Wait until started slots are ready (a oneshot: done) or stopped
    /// ones down.
    pub wait: bool,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Control(#[from] ControlError),
    /// What a `remember` slot wants could not be recorded.
    #[error("{what}: {why}")]
    Remember { what: String, why: String },
    #[error("unable to wait: {0}")]
    Wait(#[from] StatusError),
    /// Another start, stop or restart of a `remember` slot held it longer
    /// than [`LOCK_TIMEOUT`]: nothing was changed.
    #[error(
        "unable to {} {slot}: another start, stop or restart of it is under way \
         (waited {waited_ms} ms for it to end); nothing was changed",
        op.verb()
    )]
    Busy {
        op: Op,
        slot: String,
        waited_ms: u64,
    },
    /// A start refused: the slot's program runs in the foreground
    /// (`crate::claim::foreground`).
    #[error("unable to {} {slot}: {}", op.verb(), crate::claim::in_foreground_why(*copy))]
    InForeground {
        op: Op,
        slot: String,
        copy: crate::stray::Copy,
    },
}

/// [`Error::Remember`]: `what` could not be done, and why.
fn remember(what: String, why: impl std::fmt::Display) -> Error {
    let why = why.to_string();
    Error::Remember { what, why }
}

/// Carries out `req` on `names` (slots of the scandir).
pub fn run(slots: &Slots, names: &[String], req: &Request) -> Result<Waited, Error> {
    let kept;
    let names = if req.op == Op::Stop {
        names
    } else {
        kept = not_in_foreground(names, req)?;
        kept.as_slice()
    };
    // What `remember` slots want, their `down` files and the commands are
    // one step per slot, under its lock: see `lock`.
    let mut held = if req.all {
        Held::default()
    } else {
        persist(slots, names, req.op)?
    };
    if req.op == Op::Stop {
        end_strays(slots, names);
        if req.wait {
            return stop_layers(slots, names, req.timeout, &mut held);
        }
    }
    if req.op == Op::Restart && req.all {
        return restart_up(slots, names, req);
    }
    let watched = send_each(slots, names, req.op, &mut held)?;
    drop(held);
    if !req.wait {
        return Ok(Waited::Met);
    }
    wait_started(slots, watched, req.timeout)
}

/// `names` but the slots whose program runs in the foreground (the rule
/// every start checks, `crate::claim::foreground::running`), before
/// anything is sent or persisted: a slot named is refused, all of them
/// with it; with `--all` it is left out, said, and the rest go on.
fn not_in_foreground(names: &[String], req: &Request) -> Result<Vec<String>, Error> {
    let mut kept = Vec::with_capacity(names.len());
    for n in names {
        match crate::claim::foreground::running(n) {
            None => kept.push(n.clone()),
            Some(copy) if req.all => msg::warn(format_args!(
                "not {}ing {n}: {}",
                req.op.verb(),
                crate::claim::in_foreground_why(copy)
            )),
            Some(copy) => {
                return Err(Error::InForeground {
                    op: req.op,
                    slot: n.clone(),
                    copy,
                })
            }
        }
    }
    Ok(kept)
}

/// Sends `cmd` (e.g. a signal) to each of `names`.
pub fn send_all(slots: &Slots, names: &[String], cmd: SvcCommand) -> Result<(), Error> {
    for n in names {
        crate::slot::end::send(&slots.dir(n), &[cmd])?;
    }
    Ok(())
}

/// Wants the slot up once its supervisor runs (a slot just rendered has
/// none yet: bounded by `supervise`). Not persisted: `remember` keeps what
/// operators chose.
pub fn start_unrecorded(dir: &Path, supervise: Duration) -> Result<(), ControlError> {
    control::wait_supervised(dir, supervise)?;
    crate::slot::end::send(dir, &[SvcCommand::Up])
}

/// Waits for what was started: a oneshot until it completes, the others
/// until ready.
fn wait_started(slots: &Slots, watched: Vec<Watched>, timeout: Duration) -> Result<Waited, Error> {
    // A job (a oneshot with a schedule) never completes: up is started.
    let oneshot = |w: &Watched| {
        let s = slots.slot(&crate::s6::slot_name(&w.dir));
        s.is_some_and(|s| s.kind == Kind::Oneshot && s.schedule.is_none())
    };
    let (jobs, services): (Vec<_>, Vec<_>) = watched.into_iter().partition(oneshot);
    let started = Instant::now();
    let w = wait_for(slots, &services, Target::Ready, false, timeout)?;
    if w != Waited::Met || jobs.is_empty() {
        return Ok(w);
    }
    let left = timeout.saturating_sub(started.elapsed());
    Ok(wait_for(slots, &jobs, Target::Done, false, left)?)
}

/// Sends what `op` means to each of `names`, each then watched for a
/// state entered after the command (but a start of a slot already up:
/// nothing will change). A slot's lock in `held` goes once its command is
/// sent.
fn send_each(
    slots: &Slots,
    names: &[String],
    op: Op,
    held: &mut Held,
) -> Result<Vec<Watched>, Error> {
    let mut watched = Vec::new();
    for n in names {
        let dir = slots.dir(n);
        let before = read_slot(&dir).ok();
        let was_up = before.as_ref().is_some_and(|s| s.up);
        let cmd = match op {
            Op::Start => SvcCommand::Up,
            Op::Stop => SvcCommand::Down,
            Op::Restart if was_up => SvcCommand::Restart,
            Op::Restart => SvcCommand::Up,
        };
        crate::slot::end::send(&dir, &[cmd])?;
        held.release(n);
        let mut w = Watched::new(dir);
        if !(op == Op::Start && was_up) {
            w.after = before.map(|s| s.raw.stamp);
        }
        watched.push(w);
    }
    Ok(watched)
}

/// `restart --all`: only the slots that are up (and not being stopped),
/// in start order, each layer's new processes up before the next layer is
/// restarted, so that a dependent never starts against the old process of
/// what it depends on. What is down stays down: `start --all` is for that.
fn restart_up(slots: &Slots, names: &[String], req: &Request) -> Result<Waited, Error> {
    let up: Vec<String> = (names.iter())
        .filter(|n| read_slot(&slots.dir(n)).is_ok_and(|s| s.up && s.want_up))
        .cloned()
        .collect();
    let layers = match slots.model {
        Some(m) => depends::start_layers(&m.slots, &up),
        None => vec![up],
    };
    let started = Instant::now();
    let mut watched = Vec::new();
    for layer in layers {
        let w = send_each(slots, &layer, Op::Restart, &mut Held::default())?;
        let left = req.timeout.saturating_sub(started.elapsed());
        let waited = wait_for(slots, &w, Target::Up, false, left)?;
        if waited != Waited::Met {
            return Ok(waited);
        }
        watched.extend(w);
    }
    if !req.wait {
        return Ok(Waited::Met);
    }
    let left = req.timeout.saturating_sub(started.elapsed());
    wait_started(slots, watched, left)
}

/// Stops `names` in reverse dependency order: the slots nothing depends on
/// first, then what only they depended on, each layer down before the
/// next, all within `timeout`. Not persisted.
pub fn stop_in_order(slots: &Slots, names: &[String], timeout: Duration) -> Result<Waited, Error> {
    stop_layers(slots, names, timeout, &mut Held::default())
}

/// [`stop_in_order`], letting go of each slot's lock in `held` once its
/// stop is sent: a start of a slot meanwhile waits until this stop has
/// reached it, then wins whole.
fn stop_layers(
    slots: &Slots,
    names: &[String],
    timeout: Duration,
    held: &mut Held,
) -> Result<Waited, Error> {
    let layers = match slots.model {
        Some(m) => depends::stop_layers(&m.slots, names),
        None => vec![names.to_vec()],
    };
    let started = Instant::now();
    for layer in layers {
        let watched = send_each(slots, &layer, Op::Stop, held)?;
        let left = timeout.saturating_sub(started.elapsed());
        let waited = wait_for(slots, &watched, Target::Down, false, left)?;
        if waited != Waited::Met {
            return Ok(waited);
        }
    }
    Ok(Waited::Met)
}

/// Ends the copies of the slots' programs that no supervisor knows
/// (`crate::stray`), as their supervisors would stop them. One that
/// cannot be ended is said, and the stop goes on for the others.
fn end_strays(slots: &Slots, names: &[String]) {
    for n in names {
        let dir = slots.dir(n);
        let pid = read_slot(&dir).map_or(0, |s| s.raw.pid);
        match crate::stray::end_stray(&dir, pid) {
            Ok(None) => {}
            Ok(Some((c, _))) => msg::info(format_args!(
                "slot {n}: ended a copy of its program that its supervisor did not know (pid {})",
                c.pid
            )),
            Err(e) => msg::warn(format_args!(
                "slot {n}: unable to end a copy of its program that its supervisor does not know: {}",
                strerror(&e)
            )),
        }
    }
}

/// Records the desired state of the `remember` slots among `names`, all
/// before the first command: a refusal changes nothing. Returns their
/// locks, taken first, to be held until each slot's command is sent.
fn persist(slots: &Slots, names: &[String], op: Op) -> Result<Held, Error> {
    let Some(model) = slots.model else {
        return Ok(Held::default());
    };
    // A restart wants the slot up, as a start does.
    let up = op != Op::Stop;
    let sd = Path::new(model.state_dir.as_str());
    let root = nix::unistd::geteuid().is_root();
    let tree = crate::slot::owner::tree_owner(slots.scandir);
    let remembered: Vec<_> = names
        .iter()
        .filter_map(|n| model.slot(n).map(|s| (n, s)))
        .filter(|(_, s)| s.autostart == Autostart::Remember)
        .collect();
    let held = Held::take(slots, remembered.iter().map(|(n, _)| *n), op, LOCK_TIMEOUT)?;
    for (n, slot) in remembered {
        let what = format!("unable to persist the desired state of {n}");
        // Root writes for a non-root tree's user, who changes the state
        // next, else for the slot's user.
        let owner = match (root, tree, slot.run_as()) {
            (true, None, Some(u)) => {
                Some(crate::reconcile::lookup_user(u).map_err(|e| remember(what.clone(), e))?)
            }
            (root, tree, _) => tree.filter(|_| root),
        };
        let d = if up { Desired::Up } else { Desired::Down };
        write_desired(sd, n, d, owner).map_err(|e| match &e {
            StateError::Io { source, .. } => {
                remember(format!("{what} in {}", sd.display()), strerror(source))
            }
            other => remember(format!("{what} in {}", sd.display()), other),
        })?;
        // A slot user may start its own slot but not write its root-owned
        // dir: the next apply puts the `down` file right then.
        match control::set_normally_up(&slots.dir(n), up) {
            Err(e) if !matches!(e.raw_os_error(), Some(nix::libc::EACCES | nix::libc::EPERM)) => {
                let what = format!("unable to record the desired state of {n} in its slot dir");
                return Err(remember(what, strerror(&e)));
            }
            _ => {}
        }
    }
    Ok(held)
}
