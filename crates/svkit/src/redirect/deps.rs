//! Before a redirect's opt-out runs its slot's program in the foreground:
//! the slot's `depends_on`, which its `run` would wait for. They are
//! slots, supervised: one whose autostart holds is started when it is not
//! wanted up, and each is waited for (bounded: nothing else would end the
//! wait of a container's command).

use std::path::Path;
use std::time::{Duration, Instant};

use super::execute::SUPERVISE_TIMEOUT;
use crate::config::{Condition, Model, Slot};
use crate::msg::exit;
use crate::s6::control::{self, ControlError, SvcCommand};
use crate::s6::status::{read_slot, Status, StatusError};
use crate::slot::{end, health, wait};

/// How long the dependencies have, together.
pub const DEPENDS_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum DepsError {
    /// Not wanted up, and its autostart does not hold: nothing starts it.
    #[error("it depends on {on} ({}), which is down and whose autostart does not hold (`svctl start {on}` starts it)", condition.as_str())]
    NotStarted { on: String, condition: Condition },
    #[error("it depends on {on} ({}), which failed for good (see `svctl status {on}`)", condition.as_str())]
    Failed { on: String, condition: Condition },
    #[error("it depends on {on} ({}), which is gone or not supervised", condition.as_str())]
    Gone { on: String, condition: Condition },
    #[error("it depends on {on} ({0}), which was not {0} within {1} s", condition.as_str(), after.as_secs())]
    Timeout {
        on: String,
        condition: Condition,
        after: Duration,
    },
    #[error("{0}")]
    Control(ControlError),
    #[error("{0}")]
    Status(StatusError),
}

impl DepsError {
    /// 1 a dependency that never came; 111 s6 not answering.
    pub fn exit_code(&self) -> u8 {
        match self {
            DepsError::Control(_) | DepsError::Status(_) => exit::SYSTEM,
            _ => exit::NOT_OK,
        }
    }
}

fn target(c: Condition) -> wait::Target {
    match c {
        Condition::Up => wait::Target::Up,
        Condition::Ready => wait::Target::Ready,
        Condition::Completed => wait::Target::Done,
    }
}

/// Waits until every `depends_on` of `slot` holds, `timeout` for them
/// all; `note` hears what is waited for (once per dependency not met yet).
pub fn await_deps(
    model: &Model,
    slot: &Slot,
    scandir: &Path,
    timeout: Duration,
    note: &mut dyn FnMut(String),
) -> Result<(), DepsError> {
    if slot.depends_on.is_empty() {
        return Ok(());
    }
    let deadline = Instant::now() + timeout;
    let mut warnings = Vec::new();
    let facts = health::start_facts(model, &mut warnings);
    let failed = |dir: &Path, st: &Status| health::failed(st, end::read(dir).as_ref());
    for d in &slot.depends_on {
        let (on, condition) = (d.on.clone(), d.condition);
        let dir = scandir.join(&d.on);
        control::wait_supervised(&dir, SUPERVISE_TIMEOUT).map_err(DepsError::Control)?;
        let st = read_slot(&dir).map_err(DepsError::Status)?;
        let done = health::done(&st, end::read(&dir).as_ref());
        if failed(&dir, &st) {
            return Err(DepsError::Failed { on, condition });
        }
        let coming = st.up || st.want_up || (done && condition == Condition::Completed);
        if !coming {
            match model.slot(&d.on) {
                Some(dep) if health::autostarts(dep, &facts) => {
                    crate::slot::end::send(&dir, &[SvcCommand::Up]).map_err(DepsError::Control)?;
                }
                _ => return Err(DepsError::NotStarted { on, condition }),
            }
        }
        let watched = [wait::Watched::new(dir)];
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = |limit| {
            wait::wait(&watched, target(condition), false, Some(limit), &failed)
                .map_err(DepsError::Status)
        };
        let outcome = match wait(Duration::ZERO)? {
            wait::WaitEnd::Timeout { .. } => {
                note(format!(
                    "waiting for {on} ({}) before it runs, up to {} s",
                    condition.as_str(),
                    left.as_secs()
                ));
                wait(left)?
            }
            other => other,
        };
        match outcome {
            wait::WaitEnd::Met => {}
            wait::WaitEnd::Timeout { .. } => {
                return Err(DepsError::Timeout {
                    on,
                    condition,
                    after: timeout,
                })
            }
            wait::WaitEnd::Gone(_) => return Err(DepsError::Gone { on, condition }),
            wait::WaitEnd::Failed(_) => return Err(DepsError::Failed { on, condition }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_names_the_dependency_and_its_condition() {
        let on = || "db".to_string();
        let cases = [
            (
                DepsError::NotStarted {
                    on: on(),
                    condition: Condition::Ready,
                },
                "it depends on db (ready), which is down and whose autostart does not hold (`svctl start db` starts it)",
            ),
            (
                DepsError::Failed {
                    on: on(),
                    condition: Condition::Completed,
                },
                "it depends on db (completed), which failed for good (see `svctl status db`)",
            ),
            (
                DepsError::Timeout {
                    on: on(),
                    condition: Condition::Up,
                    after: DEPENDS_TIMEOUT,
                },
                "it depends on db (up), which was not up within 120 s",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
            assert_eq!(e.exit_code(), exit::NOT_OK);
        }
    }
}
