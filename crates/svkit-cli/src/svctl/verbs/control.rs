//! `svctl start|stop|restart`, `svctl signal` and `svctl run`: the slots named, handed
//! to `svkit::control`, which sends the commands, persists what
//! `remember` slots want and waits; here what a wait came to is said.

use svkit::control::{self, Op, Request, Waited};
use svkit::msg::exit::svctl::{GONE_OR_FAILED, IN_FOREGROUND};
use svkit::msg::exit::{NOT_OK, OK};
use svkit::msg::{self, Fatal};

use super::ctx::Ctx;
use crate::svctl::args::{CtlArgs, RunArgs, SignalArgs};

pub fn run(args: &CtlArgs, op: Op) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let names = ctx.resolve(&args.slots, args.all)?;
    let req = Request {
        op,
        all: args.all,
        wait: args.wait,
        timeout: args.timeout,
    };
    let waited = control::run(&ctx.slots(), &names, &req).map_err(|e| match e {
        control::Error::InForeground { .. } => Fatal::new(IN_FOREGROUND, e.to_string(), ""),
        e => system(e),
    })?;
    Ok(said(waited))
}

pub fn signal(args: &SignalArgs) -> Result<u8, Fatal> {
    let ctx = Ctx::load(&args.at)?;
    let names = ctx.resolve(&args.slots, false)?;
    control::send_all(&ctx.slots(), &names, args.signal).map_err(system)?;
    Ok(OK)
}

pub(super) fn system(e: control::Error) -> Fatal {
    Fatal::system(e.to_string(), "")
}

/// Says what a wait came to (nothing on success); its exit code.
pub(super) fn said(waited: Waited) -> u8 {
    for line in waited.lines() {
        msg::fatal(line);
    }
    match waited {
        Waited::Met => OK,
        Waited::Timeout { .. } | Waited::LogStuck { .. } => NOT_OK,
        Waited::Gone(_) | Waited::GaveUp(_) | Waited::Failed { .. } => GONE_OR_FAILED,
    }
}

/// `svctl run JOB [--wait]`: one run now ([`svkit::slot::job::run_now`]);
/// with `--wait`, its exit code once the record of a new run is there.
pub fn run_job(args: &RunArgs) -> Result<u8, Fatal> {
    use svkit::slot::job::{self, JobError, Phase};
    let ctx = Ctx::load(&args.at)?;
    let name = ctx
        .resolve(std::slice::from_ref(&args.slot), false)?
        .remove(0);
    if ctx.slots().slot(&name).is_none_or(|s| s.schedule.is_none()) {
        let no_job = format!("slot {name} is no job");
        return Err(Fatal::new(NOT_OK, no_job, "it has no schedule"));
    }
    let state_dir = std::path::PathBuf::from(ctx.model.as_ref().map_or("", |m| &m.state_dir));
    let dir = ctx.scandir.join(&name);
    let st = svkit::s6::status::read_slot(&dir)
        .map_err(|e| Fatal::system(format!("unable to read the status of {name}"), e))?;
    let before = job::last_run(&state_dir, &name);
    // The last death s6 recorded before this run: see the wait below.
    let last_death = || {
        let tally = svkit::s6::status::death_tally_stamped(&dir).unwrap_or_default();
        tally.last().map(|(stamp, _)| *stamp)
    };
    let death_before = last_death();
    job::run_now(&dir, &st).map_err(|e| match e {
        JobError::Running => Fatal::new(
            NOT_OK,
            format!("job {name}: a run is going on"),
            "one run at a time",
        ),
        e => Fatal::system(format!("unable to run job {name}"), e),
    })?;
    if !args.wait {
        return Ok(OK);
    }
    // The run ended once its record changed, or once s6 recorded a death
    // after the last one before and that death's `finish` (which writes
    // the record) is over, s6's status no older than it: then a record
    // that did not change says no result was recorded (a stop or restart
    // ended it, or the record could not be written).
    let mut ended = None;
    let done = svkit::clock::poll_until(args.timeout, || {
        let now = job::last_run(&state_dir, &name);
        let running = matches!(job::phase(&dir), Some(Phase::Run { .. }));
        let finished = last_death()
            .filter(|d| Some(*d) != death_before)
            .is_some_and(|d| {
                svkit::s6::status::read_slot(&dir).is_ok_and(|s| s.raw.stamp >= d && !s.finishing)
            });
        if !running && (now != before || finished) {
            ended = Some(now.filter(|r| Some(*r) != before));
        }
        ended.is_some()
    });
    match ended {
        Some(Some(r)) if done => {
            let code = if r.code == 256 {
                128 + r.signal
            } else {
                r.code
            };
            Ok(u8::try_from(code).unwrap_or(u8::MAX))
        }
        Some(None) => {
            msg::fatal(format_args!(
                "the run of {name} ended with no result recorded: stopped or restarted, or its record could not be written (see the container's output)"
            ));
            Ok(NOT_OK)
        }
        _ => {
            msg::fatal(format_args!(
                "timed out after {} ms waiting for the run of {name} to end",
                args.timeout.as_millis()
            ));
            Ok(NOT_OK)
        }
    }
}
