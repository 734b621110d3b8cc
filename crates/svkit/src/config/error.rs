//! Diagnostics and errors of config loading.

use std::fmt;
use std::path::{Path, PathBuf};

use super::json_pos::{FieldPath, Pos};
use crate::msg::{strerror, At};

/// One problem found in the config, located as precisely as we can:
/// always the file, usually a line and column, and a field path for
/// everything past JSON syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub pos: Option<Pos>,
    /// Field path such as `slots[1].name`; `None` for syntax errors.
    pub path: Option<FieldPath>,
    pub message: String,
}

impl Diagnostic {
    pub fn new(
        file: &Path,
        pos: Option<Pos>,
        path: Option<FieldPath>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            file: file.to_path_buf(),
            pos,
            path,
            message: message.into(),
        }
    }

    /// `N` when the problem is in `slots[N]` of its file.
    pub fn slot(&self) -> Option<usize> {
        self.path.as_ref().and_then(FieldPath::slot)
    }
}

/// `FILE[:LINE:COL]`.
fn at(file: &Path, pos: Option<Pos>) -> At {
    At {
        file: file.to_path_buf(),
        line: pos.map(|p| p.line),
        col: pos.map(|p| p.col),
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", at(&self.file, self.pos))?;
        if let Some(path) = &self.path {
            write!(f, ": {path}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Where a value was written (file, line and column, field path): kept in
/// the model for checks that can only be made later, such as whether a
/// `user` exists on the machine the slots run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: PathBuf,
    pub pos: Option<Pos>,
    pub path: FieldPath,
}

impl Site {
    /// Where it is: `FILE[:LINE:COL]`.
    pub fn at(&self) -> At {
        at(&self.file, self.pos)
    }

    pub fn diag(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, self.pos, Some(self.path.clone()), message)
    }
}

/// Something odd that does not make the config invalid (e.g. a discovered
/// instance directory whose name cannot be a slot name: skipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Warning {
    pub message: String,
}

/// Why a config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The config dir (or a file in it) could not be read: a system error,
    /// not a fault of the config's content.
    #[error("unable to read {}: {}", crate::msg::path(path), strerror(source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config was read and is invalid; every problem found is listed.
    #[error("{}", invalid(.0))]
    Invalid(Vec<Diagnostic>),
}

/// `invalid config: N errors` and each error on a line of its own.
fn invalid(d: &[Diagnostic]) -> String {
    let s = if d.len() == 1 { "" } else { "s" };
    let each: String = d.iter().map(|e| format!("\n{e}")).collect();
    format!("invalid config: {} error{s}{each}", d.len())
}
