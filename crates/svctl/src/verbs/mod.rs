//! One module per verb. Each exposes `run(args) -> Result<exit code, Fatal>`.

mod check;
mod control;
pub(crate) mod ctx;
mod logs;
mod reconcile;
mod register;
mod render;
mod status;
pub(crate) mod status_fmt;
mod wait;

use svkit::msg::{self, exit, Fatal};

use crate::cli::{Cli, Verb};

pub fn run(cli: Cli) -> Result<u8, Fatal> {
    match cli.verb {
        Verb::Check(a) => check::run(&a),
        Verb::Render(a) => render::run(&a),
        Verb::Status(a) => status::run(&a),
        Verb::Start(a) => control::run(&a, control::Op::Start),
        Verb::Stop(a) => control::run(&a, control::Op::Stop),
        Verb::Restart(a) => control::run(&a, control::Op::Restart),
        Verb::Signal(a) => control::signal(&a),
        Verb::Wait(a) => wait::run(&a),
        Verb::Logs(a) => logs::run(&a),
        Verb::Plan(a) => reconcile::plan(&a),
        Verb::Apply(a) => reconcile::apply(&a),
        Verb::Register(a) => register::register(&a),
        Verb::Unregister(a) => register::unregister(&a),
    }
}

/// Load the config with the instances registered at runtime (as apply,
/// plan and status see it), printing warnings; an invalid config prints
/// every error and yields `Err(exit code)` so callers stop before any write.
pub(crate) fn load(dir: &std::path::Path) -> Result<Result<svkit::config::Validated, u8>, Fatal> {
    use svkit::config::LoadError;
    match svkit::config::load(dir, &svkit::state::LiveInstances) {
        Ok(v) => {
            for w in &v.warnings {
                msg::warn(w);
            }
            Ok(Ok(v))
        }
        Err(LoadError::Invalid(diags)) => {
            let n = diags.len();
            let tail = format!("{n} error{}", if n == 1 { "" } else { "s" });
            msg::invalid_config(dir, &tail, &diags);
            Ok(Err(exit::NOT_OK))
        }
        Err(LoadError::Io { path, source }) => Err(Fatal::io(
            format!("unable to read config {}", path.display()),
            &source,
        )),
    }
}
