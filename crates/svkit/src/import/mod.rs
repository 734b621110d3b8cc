//! `svctl import`: turns another supervisor's service declarations
//! (supervisord INI, a Procfile, s6-overlay `services.d/` or `s6-rc.d/`
//! trees) into one svkit config, with a report of everything that did not
//! carry over. Pure apart from reading the sources: nothing here writes.
//!
//! Each format lives in its own module and returns an [`Imported`]; this
//! module owns the shared shapes (slot list, report notes, located errors)
//! and the format detection.

mod check;
mod common;
mod detect;
mod hash;
pub mod procfile;
mod render;
pub mod report;
pub mod s6tree;
mod slot;
pub mod supervisord;

use std::fmt;
use std::path::PathBuf;

pub use check::validate;
pub use detect::detect;
pub use render::render;
pub use slot::{Condition, Log, Pairs, Restart, Slot};

/// Where a source format came from, as `--from` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Supervisord,
    Procfile,
    S6,
}

/// One thing the import did not carry over (or carried over changed):
/// printed as `FILE:LINE: KEY: why` on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub file: PathBuf,
    /// 1-based; `None` for a note about a whole file or dir.
    pub line: Option<u32>,
    pub key: String,
    /// Why, and what the user can do.
    pub why: String,
}

/// What a format importer produces: the slots of an `/etc/svkit/*.json`
/// config, in source order, and the report.
#[derive(Debug, Default)]
pub struct Imported {
    pub slots: Vec<Slot>,
    pub notes: Vec<Note>,
    /// Source files read (for the summary line).
    pub files: usize,
}

/// The input cannot be imported: located, nothing is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    pub file: PathBuf,
    pub line: Option<u32>,
    pub what: String,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Supervisord => "supervisord",
            Format::Procfile => "procfile",
            Format::S6 => "s6",
        }
    }
}

/// What the caller asks of every format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// supervisord: a lower `priority` becomes a `depends_on: up`.
    pub priority_as_order: bool,
}

impl fmt::Display for Note {
    /// `FILE:LINE: KEY: why`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::msg::path(&self.file))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}: {}", self.key, self.why)
    }
}

impl fmt::Display for ImportError {
    /// `FILE:LINE: what`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::msg::path(&self.file))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}", self.what)
    }
}

/// Why an import failed.
#[derive(Debug)]
pub enum Failure {
    /// The input cannot be imported (exit 1).
    Invalid(ImportError),
    /// A path given could not be read at all (exit 111).
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<ImportError> for Failure {
    fn from(e: ImportError) -> Self {
        Failure::Invalid(e)
    }
}

/// Imports every path (each in `from`, else in the format [`detect`]
/// finds) into one slot list, checked as `svctl check` checks a config.
pub fn import(
    paths: &[PathBuf],
    from: Option<Format>,
    opts: &Options,
) -> Result<Imported, Failure> {
    import_text(paths, from, opts).map(|o| o.imported)
}

/// What [`import_text`] gives: the import, the config text of its slots
/// ([`render`]), and the config loaded from that text by the check.
pub struct Output {
    pub imported: Imported,
    pub text: String,
    pub config: crate::config::Validated,
}

/// [`import`], and the config text of its slots ([`render`]).
pub fn import_text(
    paths: &[PathBuf],
    from: Option<Format>,
    opts: &Options,
) -> Result<Output, Failure> {
    let mut all = Imported::default();
    // Where each slot was written: its own line where the format says,
    // else the path it came from.
    let mut at: Vec<(PathBuf, Option<u32>)> = Vec::new();
    for path in paths {
        if path.to_str().is_none() {
            return Err(Failure::Invalid(ImportError {
                file: path.clone(),
                line: None,
                what: "the path is not UTF-8: the paths an import writes into a config must be"
                    .into(),
            }));
        }
        if let Err(source) = std::fs::metadata(path) {
            return Err(Failure::Io {
                path: path.clone(),
                source,
            });
        }
        let format = match from {
            Some(f) => f,
            None => detect(path)?,
        };
        let one = match format {
            Format::Supervisord => {
                let (one, lines) = supervisord::import_located(path, opts)?;
                at.extend(lines.into_iter().map(|(f, l)| (f, Some(l))));
                one
            }
            Format::Procfile => procfile::import(path).map_err(Failure::Invalid)?,
            Format::S6 => s6tree::import(path).map_err(Failure::Invalid)?,
        };
        at.resize(all.slots.len() + one.slots.len(), (path.clone(), None));
        all.slots.extend(one.slots);
        all.notes.extend(one.notes);
        all.files += one.files;
    }
    match check::checked(&all.slots) {
        Ok((text, config)) => Ok(Output {
            imported: all,
            text,
            config,
        }),
        Err((i, what)) => {
            let (file, line) = i
                .and_then(|i| at.get(i).cloned())
                .or_else(|| paths.first().map(|p| (p.clone(), None)))
                .unwrap_or_default();
            Err(Failure::Invalid(ImportError { file, line, what }))
        }
    }
}
