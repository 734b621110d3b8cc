//! `svctl import`: another supervisor's declarations into an svkit config
//! (the work is the `svkit_import` crate's); the report, the full check, and the
//! all-or-nothing write.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use svkit::config::{FixedInstances, LoadError};
use svkit::msg::{self, exit, Fatal};
use svkit_import::{self as import, Failure, Format, Options};

use super::count;
use crate::svctl::cli::{FromFormat, ImportArgs};

pub fn run(a: &ImportArgs) -> Result<u8, Fatal> {
    let from = a.from.map(|f| match f {
        FromFormat::Supervisord => Format::Supervisord,
        FromFormat::Procfile => Format::Procfile,
        FromFormat::Crontab => Format::Crontab,
        FromFormat::S6 => Format::S6,
    });
    let target = a.output.as_deref().filter(|o| *o != Path::new("-"));
    if a.force && target.is_none() {
        return Err(Fatal::usage(
            "usage",
            "--force replaces an --output FILE; see --help",
        ));
    }
    // Said before the work; the write below holds it against a racer.
    if let Some(t) = target.filter(|t| !a.force && std::fs::symlink_metadata(t).is_ok()) {
        return Err(exists(t));
    }
    let opts = Options {
        priority_as_order: a.priority_as_order,
    };
    let out = match import::import(&a.paths, from, &opts) {
        Ok(out) => out,
        Err(Failure::Invalid(e)) => {
            msg::fatal(format_args!("unable to import: {e}; nothing written"));
            return Ok(exit::NOT_OK);
        }
        Err(Failure::Io { path, source }) => {
            return Err(Fatal::io(
                format!("unable to read {}", msg::path(&path)),
                &source,
            ))
        }
    };
    let (imported, text) = (&out.imported, &out.text);
    report(import::report::lines(&imported.notes));
    let label = target.map_or_else(|| PathBuf::from("-"), Path::to_path_buf);
    if a.check {
        check(&label, text, a.root.as_deref())?;
    }
    match target {
        Some(t) => {
            let written = if a.force {
                svkit::fsutil::write_atomic(t, text.as_bytes(), 0o644, None)
            } else {
                svkit::fsutil::write_new(t, text.as_bytes(), 0o644)
            };
            written.map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => exists(t),
                _ => Fatal::io(format!("unable to write {}", msg::path(t)), &e),
            })?
        }
        None => msg::out(text)?,
    }
    // Slot objects, and the slots they make once templates have their
    // instances.
    let slots = imported.slots.len();
    let instances: usize = (imported.slots.iter())
        .map(|s| s.instances.as_ref().map_or(1, |i| i.names.len()))
        .sum();
    report([format!(
        "{}: imported {}{} from {}; {} not carried over as written",
        msg::prog(),
        count(slots, "slot"),
        if instances > slots {
            format!(" ({instances} with instances)")
        } else {
            String::new()
        },
        count(imported.files, "file"),
        count(imported.notes.len(), "key"),
    )]);
    Ok(exit::OK)
}

fn exists(t: &Path) -> Fatal {
    Fatal::usage(
        format!("{} exists", msg::path(t)),
        "--force replaces it; nothing written",
    )
}

/// Lines on stderr, escaped, as few writes as they fit in.
fn report(lines: impl IntoIterator<Item = String>) {
    let mut buf = String::new();
    for l in lines {
        buf.push_str(&msg::escape(&l));
        buf.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(buf.as_bytes());
}

/// `svctl check` of the result, as if it were the one file of a config dir.
fn check(label: &Path, text: &str, root: Option<&Path>) -> Result<(), Fatal> {
    let files = vec![(label.to_path_buf(), text.as_bytes().to_vec())];
    let v = match svkit::config::load_layers(&files, &FixedInstances::default()) {
        Ok(v) => v,
        Err(LoadError::Invalid(diags)) => {
            // The import checked this already: reaching here is a bug.
            msg::invalid_config(label, "the import made an invalid config (a bug)", &diags);
            return Err(Fatal::reported(exit::NOT_OK));
        }
        Err(e) => return Err(Fatal::system("unable to check the import", e)),
    };
    for w in &v.warnings {
        msg::warn(w);
    }
    let fit = super::check::full(label, &v.model, root)?;
    report([format!("{}: check ok: {fit}", msg::prog())]);
    Ok(())
}
