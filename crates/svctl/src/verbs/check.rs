//! `svctl check`: validate and report.

use std::path::Path;

use svkit::capacity::{self, CapacityError, Fit};
use svkit::config::Model;
use svkit::msg::{self, exit::NOT_OK, exit::OK, Fatal};

use crate::cli::CheckArgs;

pub fn run(args: &CheckArgs) -> Result<u8, Fatal> {
    let dir = args.config.dir();
    let v = match super::load(&dir)? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let fit = match full(&dir, &v.model, args.users.root.as_deref())? {
        Ok(fit) => fit,
        Err(code) => return Ok(code),
    };
    let m = &v.model;
    msg::out(format!(
        "{}: config ok: {} slot{}, {} redirect{}, {} file{} in {}\n{}: {fit}\n",
        msg::prog(),
        m.slots.len(),
        if m.slots.len() == 1 { "" } else { "s" },
        m.redirects.len(),
        if m.redirects.len() == 1 { "" } else { "s" },
        m.files.len(),
        if m.files.len() == 1 { "" } else { "s" },
        msg::path(&dir),
        msg::prog(),
    ))?;
    Ok(OK)
}

/// What `check` asks of a loaded config past its validation: its users,
/// with `--root` its programs, and that it fits in s6-svscan's limit.
/// Errors are printed and yield `Err(exit code)`. `dir` names the config
/// in messages.
pub(crate) fn full(
    dir: &Path,
    model: &Model,
    root: Option<&Path>,
) -> Result<Result<Fit, u8>, Fatal> {
    if let Err(code) = super::check_users(dir, model, root)? {
        return Ok(Err(code));
    }
    if let Some(root) = root {
        let missing = svkit::config::programs::missing_programs(model, root, None);
        if !missing.is_empty() {
            let n = missing.len();
            let tail = format!("{n} error{}", if n == 1 { "" } else { "s" });
            msg::invalid_config(dir, &tail, &missing);
            return Ok(Err(NOT_OK));
        }
    }
    match fits(model, root) {
        Ok(fit) => Ok(Ok(fit)),
        Err(CapacityError::TooMany(e)) => {
            msg::fatal(e);
            Ok(Err(NOT_OK))
        }
        Err(e @ CapacityError::ScanBlocked { .. }) => {
            msg::fatal(e);
            Ok(Err(NOT_OK))
        }
        Err(CapacityError::Io { path, source }) => Err(Fatal::io(
            format!("unable to read scandir {}", path.display()),
            &source,
        )),
    }
}

/// Does the config fit in s6-svscan's limit? Inside the running
/// container, against its s6-svscan and scandir; for an image's root
/// (`--root`) or off s6-overlay, against the default and s6-overlay's
/// own, both assumed.
fn fits(model: &Model, root: Option<&Path>) -> Result<Fit, CapacityError> {
    let slots = model
        .slots
        .iter()
        .map(|s| (s.name.as_str(), s.log.is_some()));
    let why = match (root, svkit::container::s6_overlay_missing()) {
        (None, None) => return capacity::check_in(&svkit::container::scandir(), slots),
        (Some(r), _) => format!("the image at {}, not a running one", r.display()),
        (None, Some(why)) => format!("no s6-overlay here: {why}"),
    };
    capacity::check_assumed(root.unwrap_or(Path::new("/")), slots, &why)
        .map_err(CapacityError::TooMany)
}
