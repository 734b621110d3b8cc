//! One module per verb. Each exposes `run(args) -> Result<exit code, Fatal>`.

mod check;
mod control;
pub(crate) mod ctx;
mod events;
mod exec;
mod forget;
mod import;
pub(crate) mod logs;
mod metrics;
mod reconcile;
mod register;
mod render;
pub(crate) mod status;
mod wait;

use svkit::control::Op;
use svkit::msg::{self, Fatal};

use crate::svctl::cli::{Cli, Verb};

pub fn run(cli: Cli) -> Result<u8, Fatal> {
    match cli.verb {
        Verb::Check(a) => check::run(&a),
        Verb::Render(a) => render::run(&a),
        Verb::Exec(a) => exec::run(a),
        Verb::Import(a) => import::run(&a),
        Verb::Status(a) => status::run(&a),
        Verb::Start(a) => control::run(&a, Op::Start),
        Verb::Stop(a) => control::run(&a, Op::Stop),
        Verb::Restart(a) => control::run(&a, Op::Restart),
        Verb::Signal(a) => control::signal(&a),
        Verb::Wait(a) => wait::run(&a),
        Verb::Run(a) => control::run_job(&a),
        Verb::Logs(a) => logs::run(&a),
        Verb::Events(a) => events::run(&a),
        Verb::Metrics(a) => metrics::run(&a),
        Verb::Top(a) => crate::svctl::top::run(&a),
        Verb::Plan(a) => reconcile::plan(&a),
        Verb::Apply(a) => reconcile::apply(&a),
        Verb::Register(a) => register::register(&a),
        Verb::Unregister(a) => register::unregister(&a),
        Verb::Forget(a) => forget::run(&a),
    }
}

/// The users (and jobs' timezones) check of the verbs that need no live tree (`check`,
/// `render`): with `--root DIR`, against DIR/etc/passwd; else against this
/// system's database, where an unknown user is an error only inside the
/// running container (this system is then the image) and a warning
/// elsewhere (a build host need not have the image's users).
pub(crate) fn check_users(
    dir: &std::path::Path,
    model: &svkit::config::Model,
    root: Option<&std::path::Path>,
) -> Result<(), Fatal> {
    use svkit::config::users::{unknown_users, PasswdFile};
    let (mut diags, strict) = match root {
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
            unknown_users(model, &PasswdFile::system()),
            svkit::container::supervision_missing().is_none(),
        ),
    };
    // Jobs' timezones: the image's zoneinfo, as its users.
    let root_dir = root.unwrap_or(std::path::Path::new("/"));
    diags.extend(svkit::config::unknown_timezones(model, root_dir));
    if diags.is_empty() {
        return Ok(());
    }
    if strict {
        return Err(crate::config::invalid(dir, &diags, None));
    }
    for d in &diags {
        msg::warn(format_args!(
            "{d} (it must exist in the image; --root DIR checks an image's root)"
        ));
    }
    Ok(())
}

/// `1 slot`, `2 slots`.
pub(crate) fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
