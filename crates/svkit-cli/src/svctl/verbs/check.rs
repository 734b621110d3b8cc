//! `svctl check`: validate and report.

use std::path::Path;

use svkit::capacity::{self, CapacityError, Fit};
use svkit::config::Model;
use svkit::msg::{self, exit::NOT_OK, exit::OK, Fatal};

use super::count;
use crate::config::Policy;
use crate::svctl::cli::CheckArgs;

pub fn run(args: &CheckArgs) -> Result<u8, Fatal> {
    let dir = args.config.dir();
    let v = crate::config::required(&dir, Policy::Check)?;
    let fit = full(&dir, &v.model, args.users.root.as_deref())?;
    let m = &v.model;
    let stops = svkit::stopbudget::Settings::from_container();
    if let Some(note) = svkit::stopbudget::note(m, &stops) {
        msg::warn(note);
    }
    msg::out(format!(
        "{}: config ok: {}, {}, {} in {}\n{}: {fit}\n",
        msg::prog(),
        count(m.slots.len(), "slot"),
        count(m.redirects.len(), "redirect"),
        count(m.files.len(), "file"),
        msg::path(&dir),
        msg::prog(),
    ))?;
    Ok(OK)
}

/// What `check` asks of a loaded config past its validation: its users,
/// with `--root` its programs, and that it fits in s6-svscan's limit
/// (`svctl check`, and `svctl import --check` of what it made). `dir`
/// names the config in messages.
pub(crate) fn full(dir: &Path, model: &Model, root: Option<&Path>) -> Result<Fit, Fatal> {
    super::check_users(dir, model, root)?;
    if let Some(root) = root {
        let missing = svkit::config::programs::missing_programs(model, root, None);
        if !missing.is_empty() {
            return Err(crate::config::invalid(dir, &missing, None));
        }
    }
    match fits(model, root) {
        Ok(fit) => Ok(fit),
        Err(e @ (CapacityError::TooMany(_) | CapacityError::ScanBlocked { .. })) => {
            msg::fatal(e);
            Err(Fatal::reported(NOT_OK))
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
    let why = match (root, svkit::container::supervision_missing()) {
        (None, None) => return capacity::check_in(&svkit::container::scandir(), slots),
        (Some(r), _) => format!("the image at {}, not a running one", r.display()),
        (None, Some(why)) => format!("no s6-overlay here: {why}"),
    };
    capacity::check_assumed(root.unwrap_or(Path::new("/")), slots, &why)
        .map_err(CapacityError::TooMany)
}
