//! Instance discovery: the only I/O validation needs, behind a trait so the
//! rest of validation stays pure (tests pass a fixed list).

use std::io;

/// Lists candidate instance names under a directory.
pub trait InstanceSource {
    /// Names of the subdirectories of `dir` (optionally only those holding a
    /// regular file `require_file`), unvalidated and in any order. A
    /// missing `dir` yields an empty list, not an error: a fresh volume has
    /// no profiles yet.
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>>;
}

/// Reads the real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsInstances;

impl InstanceSource for FsInstances {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>> {
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry?;
            // Symlinked entries are not followed: an instance is a real
            // subdirectory of the declared dir.
            if !entry.file_type()?.is_dir() {
                continue;
            }
            if let Some(req) = require_file {
                let p = entry.path().join(req);
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.file_type().is_file() => {}
                    _ => continue,
                }
            }
            // A non-UTF-8 name is kept lossily: validation then rejects it
            // with a warning naming it.
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }
}

/// A fixed answer per directory, for tests and for `svctl plan` dry runs.
#[derive(Debug, Clone, Default)]
pub struct FixedInstances(pub Vec<(String, Vec<String>)>);

impl InstanceSource for FixedInstances {
    fn discover(&self, dir: &str, _require_file: Option<&str>) -> io::Result<Vec<String>> {
        Ok(self
            .0
            .iter()
            .find(|(d, _)| d == dir)
            .map(|(_, v)| v.clone())
            .unwrap_or_default())
    }
}
