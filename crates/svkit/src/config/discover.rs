//! Instance sources: the only I/O validation needs, behind a trait so the
//! rest of validation stays pure (tests pass a fixed list). Validation asks
//! them for the names a `from_dir` finds, for the names registered at
//! runtime (`svctl register`, kept by `crate::state`), and for the
//! environment `${VAR}` reads ([`super::vars`]).

use super::error::Warning;
use super::vars::Env;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;

/// Lists candidate instance names under a directory.
pub trait InstanceSource {
    /// Names of the subdirectories of `dir` (optionally only those holding a
    /// regular file `require_file`), unvalidated and in any order. A
    /// missing `dir` yields an empty list, not an error: a fresh volume has
    /// no profiles yet.
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>>;

    /// Names registered at runtime, under the config's `state_dir` (first
    /// argument), for the slot declared as `template` (second), unvalidated
    /// and in any order; what the source cannot read it reports in the
    /// warnings. None by default.
    fn registered(&self, _: &str, _: &str, _: &mut Vec<Warning>) -> Vec<String> {
        Vec::new()
    }

    /// The environment `${VAR}` reads; asked once per load, and only when
    /// a value holds a `$`. None, incomplete, by default.
    fn env(&self) -> Env {
        Env::default()
    }
}

/// Another source as `svctl check` asks it: the environment it reads may
/// not be the one the slots run with (an image's build), so it is
/// incomplete (an unset variable is a warning).
pub struct Checking<'a>(pub &'a dyn InstanceSource);

impl InstanceSource for Checking<'_> {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>> {
        self.0.discover(dir, require_file)
    }

    fn registered(&self, state_dir: &str, template: &str, w: &mut Vec<Warning>) -> Vec<String> {
        self.0.registered(state_dir, template, w)
    }

    fn env(&self) -> Env {
        let mut env = self.0.env();
        env.complete = false;
        env
    }
}

/// Reads the real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsInstances;

impl InstanceSource for FsInstances {
    fn discover(&self, dir: &str, require_file: Option<&str>) -> io::Result<Vec<String>> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            // Symlinked entries are not followed: an instance is a real
            // subdirectory of the declared dir. Where the listing does not
            // say the type, it is asked: gone since is not there; any
            // other failure fails the listing, as readdir's would.
            match entry.file_type() {
                Ok(t) if t.is_dir() => {}
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => continue,
            }
            if let Some(req) = require_file {
                let file = fs::symlink_metadata(entry.path().join(req));
                if !file.is_ok_and(|m| m.file_type().is_file()) {
                    continue;
                }
            }
            // A non-UTF-8 name is kept with its odd bytes shown as `\xNN`:
            // validation then rejects it with a warning naming it.
            out.push(crate::msg::bytes(entry.file_name().as_bytes()));
        }
        Ok(out)
    }
}

/// A fixed answer per directory, for tests and for `svctl plan` dry runs.
#[derive(Debug, Clone, Default)]
pub struct FixedInstances(pub Vec<(String, Vec<String>)>);

impl InstanceSource for FixedInstances {
    fn discover(&self, dir: &str, _require_file: Option<&str>) -> io::Result<Vec<String>> {
        let found = self.0.iter().find(|(d, _)| d == dir);
        Ok(found.map(|(_, v)| v.clone()).unwrap_or_default())
    }
}
