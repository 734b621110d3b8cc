//! Diagnostics and errors of config loading.

use std::fmt;
use std::path::{Path, PathBuf};

use super::json_pos::{FieldPath, Pos};
use crate::msg::strerror;

/// One problem found in the config, located as precisely as we can:
/// always the file, usually a line and column, and a field path for
/// everything past JSON syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub pos: Option<Pos>,
    /// Field path such as `slots[1].name`; `None` for syntax errors.
    pub path: Option<String>,
    pub message: String,
}

impl Diagnostic {
    pub fn new(
        file: &Path,
        pos: Option<Pos>,
        path: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            file: file.to_path_buf(),
            pos,
            path,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::msg::path(&self.file))?;
        if let Some(p) = self.pos {
            write!(f, ":{}:{}", p.line, p.col)?;
        }
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
    /// Spelled out only for a diagnostic: a site is kept for most slots.
    pub path: FieldPath,
}

impl Site {
    pub fn diag(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, self.pos, Some(self.path.to_string()), message)
    }
}

/// Something odd that does not make the config invalid (e.g. a discovered
/// instance directory whose name cannot be a slot name: skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a config could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The config dir (or a file in it) could not be read: a system error,
    /// not a fault of the config's content.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config was read and is invalid; every problem found is listed.
    Invalid(Vec<Diagnostic>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, source } => {
                write!(
                    f,
                    "unable to read {}: {}",
                    crate::msg::path(path),
                    strerror(source)
                )
            }
            LoadError::Invalid(d) => {
                let n = d.len();
                write!(
                    f,
                    "invalid config: {n} error{}",
                    if n == 1 { "" } else { "s" }
                )?;
                for e in d {
                    write!(f, "\n{e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Invalid(_) => None,
        }
    }
}
