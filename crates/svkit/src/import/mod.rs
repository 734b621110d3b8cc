//! `svctl import`: turns another supervisor's service declarations
//! (supervisord INI, a Procfile, s6-overlay `services.d/` or `s6-rc.d/`
//! trees) into one svkit config, with a report of everything that did not
//! carry over. Pure apart from reading the sources: nothing here writes.
//!
//! Each format lives in its own module and returns an [`Imported`]; this
//! module owns the shared shapes (slot list, report notes, located errors)
//! and the format detection.

use std::path::PathBuf;

mod common;
pub mod procfile;
pub mod s6tree;

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

/// What a format importer produces: slot objects in the `/etc/svkit/*.json`
/// form (each a JSON object with at least `name` and `command`), in source
/// order, and the report.
#[derive(Debug, Default)]
pub struct Imported {
    pub slots: Vec<serde_json::Map<String, serde_json::Value>>,
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
