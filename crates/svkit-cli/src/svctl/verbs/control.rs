//! `svctl start|stop|restart` and `svctl signal`: commands written to each
//! slot's `supervise/control` FIFO (what `s6-svc` writes), desired states
//! persisted for `remember` slots, optional waits.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use svkit::config::{depends, Kind};

use svkit::msg::exit::svctl::GONE_OR_FAILED;
use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, strerror, Fatal};
use svkit::s6::control::Command6;
use svkit::s6::status::read_slot;
use svkit::slot::end::send;
use svkit::slot::logger::Fault;
use svkit::slot::wait::{self, Outcome, Target, Watched};
use svkit::state::{write_desired, Desired};

use super::ctx::Ctx;
use crate::svctl::args::{CtlArgs, SignalArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Start,
    Stop,
    Restart,
}

pub fn run(args: &CtlArgs, op: Op) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at);
    let names = ctx.resolve(&args.slots, args.all)?;
    // `--all` is a bulk action (the shutdown hook's `stop --all`): it must
    // not rewrite what operators chose for each slot. A restart wants the
    // slot up, as a start does.
    if !args.all {
        persist(&ctx, &names, op != Op::Stop)?;
    }
    if op == Op::Stop {
        end_strays(&ctx, &names);
    }
    if op == Op::Stop && args.wait {
        return stop_in_order(&ctx, &names, args.timeout);
    }
    if op == Op::Restart && args.all {
        return restart_up(&ctx, &names, args);
    }
    let mut watched = Vec::new();
    for n in &names {
        let dir = ctx.dir(n);
        let before = read_slot(&dir).ok();
        let was_up = before.as_ref().is_some_and(|s| s.up);
        let cmd = match op {
            Op::Start => Command6::Up,
            Op::Stop => Command6::Down,
            Op::Restart if was_up => Command6::Restart,
            Op::Restart => Command6::Up,
        };
        send(&dir, &[cmd]).map_err(|e| Fatal::system(e.to_string(), ""))?;
        let mut w = Watched::new(dir);
        // Only a state entered after the command counts, except for a
        // start of a slot already up (nothing will change).
        if !(op == Op::Start && was_up) {
            w.after = before.map(|s| s.raw.stamp);
        }
        watched.push(w);
    }
    if !args.wait {
        return Ok(OK);
    }
    wait_started(&ctx, &names, watched, args.timeout)
}

/// Waits for what was started: a oneshot until it completes, the others
/// until ready.
fn wait_started(
    ctx: &Ctx,
    names: &[String],
    watched: Vec<Watched>,
    timeout: Duration,
) -> Result<u8, Fatal> {
    let oneshot = |n: &String| ctx.slot(n).is_some_and(|s| s.kind == Kind::Oneshot);
    let (jobs, services): (Vec<_>, Vec<_>) =
        names.iter().zip(watched).partition(|(n, _)| oneshot(n));
    let unzip = |v: Vec<(&String, Watched)>| v.into_iter().map(|(_, w)| w).collect::<Vec<_>>();
    let (jobs, services) = (unzip(jobs), unzip(services));
    let started = Instant::now();
    let rc = wait_for(ctx, &services, Target::Ready, false, timeout)?;
    if rc != OK || jobs.is_empty() {
        return Ok(rc);
    }
    let left = timeout.saturating_sub(started.elapsed());
    wait_for(ctx, &jobs, Target::Done, false, left)
}

/// Sends `cmd` to each of `names`; each watched for a state entered after.
fn send_each(ctx: &Ctx, names: &[String], cmd: Command6) -> Result<Vec<Watched>, Fatal> {
    let mut watched = Vec::new();
    for n in names {
        let dir = ctx.dir(n);
        let before = read_slot(&dir).ok();
        send(&dir, &[cmd]).map_err(|e| Fatal::system(e.to_string(), ""))?;
        let mut w = Watched::new(dir);
        w.after = before.map(|s| s.raw.stamp);
        watched.push(w);
    }
    Ok(watched)
}

/// `restart --all`: only the slots that are up (and not being stopped),
/// in start order, each layer's new processes up before the next layer is
/// restarted, so that a dependent never starts against the old process of
/// what it depends on. What is down stays down: `start --all` is for that.
fn restart_up(ctx: &Ctx, names: &[String], args: &CtlArgs) -> Result<u8, Fatal> {
    let up: Vec<String> = (names.iter())
        .filter(|n| read_slot(&ctx.dir(n)).is_ok_and(|s| s.up && s.want_up))
        .cloned()
        .collect();
    let layers = match ctx.model.as_ref() {
        Some(m) => depends::start_layers(&m.slots, &up),
        None => vec![up],
    };
    let started = Instant::now();
    let (mut done, mut watched) = (Vec::new(), Vec::new());
    for layer in layers {
        let w = send_each(ctx, &layer, Command6::Restart)?;
        let left = args.timeout.saturating_sub(started.elapsed());
        let rc = wait_for(ctx, &w, Target::Up, false, left)?;
        if rc != OK {
            return Ok(rc);
        }
        done.extend(layer);
        watched.extend(w);
    }
    if !args.wait {
        return Ok(OK);
    }
    let left = args.timeout.saturating_sub(started.elapsed());
    wait_started(ctx, &done, watched, left)
}

/// Stops `names` in reverse dependency order: the slots nothing depends on
/// first, then what only they depended on, each layer down before the
/// next, all within `timeout`.
fn stop_in_order(ctx: &Ctx, names: &[String], timeout: Duration) -> Result<u8, Fatal> {
    let layers = match ctx.model.as_ref() {
        Some(m) => depends::stop_layers(&m.slots, names),
        None => vec![names.to_vec()],
    };
    let started = Instant::now();
    for layer in layers {
        let watched = send_each(ctx, &layer, Command6::Down)?;
        let left = timeout.saturating_sub(started.elapsed());
        let rc = wait_for(ctx, &watched, Target::Down, false, left)?;
        if rc != OK {
            return Ok(rc);
        }
    }
    Ok(OK)
}

/// Ends the copies of the slots' programs that no supervisor knows
/// (`svkit::stray`), as their supervisors would stop them. One that
/// cannot be ended is said, and the stop goes on for the others.
fn end_strays(ctx: &Ctx, names: &[String]) {
    for n in names {
        let dir = ctx.dir(n);
        let pid = read_slot(&dir).map_or(0, |s| s.raw.pid);
        match svkit::stray::end_stray(&dir, pid) {
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
/// before the first command: a refusal changes nothing.
fn persist(ctx: &Ctx, names: &[String], up: bool) -> Result<(), Fatal> {
    let root = nix::unistd::geteuid().is_root();
    let tree = svkit::slot::owner::tree_owner(&ctx.scandir);
    for n in names.iter().filter(|n| ctx.remembers(n)) {
        let (Some(sd), Some(slot)) = (ctx.state_dir(), ctx.slot(n)) else {
            continue;
        };
        let owner = match (root, tree, slot.run_as()) {
            (false, _, _) => None,
            // A non-root tree: its user, who changes the state next.
            (true, Some(t), _) => Some(t),
            (true, None, Some(u)) => Some(svkit::reconcile::lookup_user(u).map_err(|e| {
                Fatal::system(format!("unable to persist the desired state of {n}"), e)
            })?),
            (true, None, None) => None,
        };
        let d = if up { Desired::Up } else { Desired::Down };
        write_desired(sd, n, d, owner).map_err(|e| {
            let why = match &e {
                svkit::state::StateError::Io { source, .. } => strerror(source),
                other => other.to_string(),
            };
            Fatal::system(
                format!(
                    "unable to persist the desired state of {n} in {}",
                    sd.display()
                ),
                why,
            )
        })?;
        // A slot user may start its own slot but not write its root-owned
        // dir: the next apply puts the `down` file right then.
        match svkit::s6::control::set_normally_up(&ctx.dir(n), up) {
            Err(e) if !matches!(e.raw_os_error(), Some(nix::libc::EACCES | nix::libc::EPERM)) => {
                return Err(Fatal::io(
                    format!("unable to record the desired state of {n} in its slot dir"),
                    &e,
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Waits (at most `timeout`) and maps the outcome to an exit code, with a
/// message for anything but success. A slot that failed for good, or whose
/// readiness check gave up when waiting for ready, ends the wait.
/// How often `wait ready` looks again at a slot that is up and ready but
/// whose output is not getting through.
const LOG_RECHECK: Duration = Duration::from_millis(200);

/// The watched slots whose logger is at fault (all of them must be fine;
/// with `any`, one fine slot is enough and nothing is reported).
fn log_faults(ctx: &Ctx, slots: &[Watched], any: bool) -> Vec<(String, Fault)> {
    let judge = ctx.judge();
    let names: Vec<String> = slots.iter().map(|w| name_of(&w.dir)).collect();
    let mut faults: Vec<Option<Fault>> = names.iter().map(|n| judge.log_fault(n)).collect();
    judge.mark_stalled(names.iter().map(String::as_str).zip(faults.iter_mut()));
    if any && faults.iter().any(Option::is_none) {
        return Vec::new();
    }
    names
        .into_iter()
        .zip(faults)
        .filter_map(|(n, f)| f.map(|f| (n, f)))
        .collect()
}

pub fn wait_for(
    ctx: &Ctx,
    slots: &[Watched],
    target: Target,
    any: bool,
    timeout: Duration,
) -> Result<u8, Fatal> {
    let judge = ctx.judge();
    let overdue = |n: &str, st: &svkit::s6::status::Status| {
        target == Target::Ready && judge.ready_overdue(n, st, SystemTime::now())
    };
    let failed = |dir: &Path, st: &svkit::s6::status::Status| {
        let n = name_of(dir);
        judge.failed(&n, st) || overdue(&n, st)
    };
    let what = match target {
        Target::Up => "up",
        Target::Ready => "ready",
        Target::Down => "down",
        Target::Done => "done",
    };
    let deadline = Instant::now() + timeout;
    let outcome = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let outcome = wait::wait(slots, target, any, Some(left), &failed)
            .map_err(|e| Fatal::system("unable to wait", e))?;
        // Ready includes output getting through: a slot whose logger is
        // stuck is not ready yet (it may be once the disk has room), and
        // nothing signals that, so it is looked at again.
        let stuck = match (&outcome, target) {
            (Outcome::Met, Target::Ready) => log_faults(ctx, slots, any),
            _ => Vec::new(),
        };
        if stuck.is_empty() {
            break outcome;
        }
        if Instant::now() >= deadline {
            for (n, f) in &stuck {
                msg::fatal(format_args!(
                    "timed out after {} ms waiting for {n} to be ready: {f}",
                    timeout.as_millis()
                ));
            }
            return Ok(NOT_OK);
        }
        std::thread::sleep(LOG_RECHECK.min(deadline.saturating_duration_since(Instant::now())));
    };
    match outcome {
        Outcome::Met => Ok(OK),
        Outcome::Timeout { pending } => {
            let names: Vec<String> = pending.iter().map(|p| name_of(p)).collect();
            msg::fatal(format_args!(
                "timed out after {} ms waiting for {} to be {what}",
                timeout.as_millis(),
                names.join(", ")
            ));
            Ok(NOT_OK)
        }
        Outcome::Gone(dir) => {
            msg::fatal(format_args!(
                "unable to wait for {}: no such slot or supervisor not running",
                name_of(&dir)
            ));
            Ok(GONE_OR_FAILED)
        }
        Outcome::Failed(dir) => {
            let n = name_of(&dir);
            let st = read_slot(&dir).ok();
            if st.as_ref().is_some_and(|st| overdue(&n, st)) {
                msg::fatal(format_args!(
                    "{n} will not be ready: its readiness check gave up (readiness.check.timeout_ms); svctl restart {n} tries again"
                ));
            } else {
                let why = st
                    .map(|st| judge.verdict(&n, Some(&st), SystemTime::now()))
                    .and_then(|v| v.why)
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default();
                msg::fatal(format_args!(
                    "{n} failed permanently{why}: see svctl status and svctl logs"
                ));
            }
            Ok(GONE_OR_FAILED)
        }
    }
}

pub fn signal(args: &SignalArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at);
    let names = ctx.resolve(&args.slots, false)?;
    for n in &names {
        send(&ctx.dir(n), &[args.signal]).map_err(|e| Fatal::system(e.to_string(), ""))?;
    }
    Ok(OK)
}
