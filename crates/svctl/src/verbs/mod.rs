//! One module per verb. Each exposes `run(args) -> Result<exit code, Fatal>`.

mod check;
mod control;
pub(crate) mod ctx;
mod events;
mod exec;
mod import;
mod liveness;
mod logs;
mod metrics;
mod reconcile;
mod register;
mod render;
mod say;
mod status;
pub(crate) mod status_fmt;
mod wait;

use svkit::msg::{self, exit, Fatal};

use crate::cli::{Cli, Verb};

pub fn run(cli: Cli) -> Result<u8, Fatal> {
    match cli.verb {
        Verb::Check(a) => check::run(&a),
        Verb::Render(a) => render::run(&a),
        Verb::Liveness(a) => liveness::run(&a),
        Verb::Say(a) => Ok(say::run(&a)),
        Verb::Exec(a) => exec::run(a),
        Verb::Import(a) => import::run(&a),
        Verb::Status(a) => status::run(&a),
        Verb::Start(a) => control::run(&a, control::Op::Start),
        Verb::Stop(a) => control::run(&a, control::Op::Stop),
        Verb::Restart(a) => control::run(&a, control::Op::Restart),
        Verb::Signal(a) => control::signal(&a),
        Verb::Wait(a) => wait::run(&a),
        Verb::Logs(a) => logs::run(&a),
        Verb::Events(a) => events::run(&a),
        Verb::Metrics(a) => metrics::run(&a),
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
    let v = load_quietly(dir)?;
    if let Ok(v) = &v {
        for w in &v.warnings {
            msg::warn(w);
        }
    }
    Ok(v)
}

/// [`load`] without printing the warnings: for a verb that loads again
/// before it acts (`register` applies), whose second load prints them.
pub(crate) fn load_quietly(
    dir: &std::path::Path,
) -> Result<Result<svkit::config::Validated, u8>, Fatal> {
    use svkit::config::LoadError;
    match svkit::config::load(dir, &svkit::state::LiveInstances) {
        Ok(v) => Ok(Ok(v)),
        Err(LoadError::Invalid(diags)) => {
            let n = diags.len();
            let tail = format!("{n} error{}", if n == 1 { "" } else { "s" });
            msg::invalid_config(dir, &tail, &diags);
            Ok(Err(exit::NOT_OK))
        }
        Err(LoadError::Io { path, source }) => Err(Fatal::io(
            format!("unable to read config {}", msg::path(&path)),
            &source,
        )),
    }
}

/// The users check of the verbs that need no live tree (`check`,
/// `render`): with `--root DIR`, against DIR/etc/passwd; else against this
/// system's database, where an unknown user is an error only inside the
/// running container (this system is then the image) and a warning
/// elsewhere (a build host need not have the image's users). Errors are
/// printed and yield `Err(exit code)`.
pub(crate) fn check_users(
    dir: &std::path::Path,
    model: &svkit::config::Model,
    root: Option<&std::path::Path>,
) -> Result<Result<(), u8>, Fatal> {
    use svkit::config::users::{unknown_users, PasswdFile, SystemUsers};
    let (diags, strict) = match root {
        Some(r) => {
            let db = PasswdFile::under_root(r).map_err(|e| {
                Fatal::io(
                    format!("unable to read {}", r.join("etc/passwd").display()),
                    &e,
                )
            })?;
            (unknown_users(model, &db), true)
        }
        None => (
            unknown_users(model, &SystemUsers),
            svkit::container::s6_overlay_missing().is_none(),
        ),
    };
    if diags.is_empty() {
        return Ok(Ok(()));
    }
    if strict {
        let n = diags.len();
        let tail = format!("{n} error{}", if n == 1 { "" } else { "s" });
        msg::invalid_config(dir, &tail, &diags);
        return Ok(Err(exit::NOT_OK));
    }
    for d in &diags {
        msg::warn(format_args!(
            "{d} (it must exist in the image; --root DIR checks an image's root)"
        ));
    }
    Ok(Ok(()))
}
