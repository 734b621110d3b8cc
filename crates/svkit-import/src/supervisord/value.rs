//! A program's values as text: `%(…)s` expanded ([`super::expand`]),
//! `%(process_num)` written as the slot's mode has it, and the text once
//! every piece is known.

use std::path::{Path, PathBuf};

use svkit::config::names;

use super::expand::{self, Known, Seg, Val};
use super::ini::Value;
use super::program::{Mode, Program};
use crate::ImportError;

impl Program<'_> {
    pub(super) fn segs(&self, v: &Value, key: &str) -> Result<Vec<Seg>, ImportError> {
        if !v.text.contains('%') {
            return Ok(vec![Seg::Lit(v.text.clone())]);
        }
        // supervisord's %(here)s is absolute: asked of the file system
        // only for a value that uses it.
        let dir = if v.text.contains("%(here)") {
            let dir = (v.at.file.parent())
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            super::read::abspath(dir)
        } else {
            PathBuf::new()
        };
        let here = dir.to_str().ok_or_else(|| {
            self.bad(
                v,
                key,
                "the file's directory is not UTF-8: %(here)s cannot be expanded",
            )
        })?;
        let k = Known {
            here,
            program_name: self.program_name(),
            group_name: self.group,
            // Read (and checked) before any value is expanded.
            numprocs: self.int("numprocs", 1, 100_000, 1)?,
        };
        expand::expand(&v.text, &k).map_err(|e| self.bad(v, key, e))
    }

    /// The segments of `v` in `mode`, `%(process_num)` written out; `None`
    /// when it is written otherwise than the template's name has it.
    pub(super) fn pieces(
        &self,
        v: &Value,
        key: &str,
        mode: Mode<'_>,
    ) -> Result<Option<Vec<Seg>>, ImportError> {
        let mut out = Vec::new();
        for s in self.segs(v, key)? {
            let Seg::Proc(spec) = s else {
                out.push(s);
                continue;
            };
            let text = match mode {
                Mode::One(k) => expand::format(&spec, Val::Int(k)).ok(),
                Mode::Template(t, nums) => nums
                    .iter()
                    .all(|&k| expand::format(&spec, Val::Int(k)) == expand::format(t, Val::Int(k)))
                    .then(|| names::INSTANCE_VAR.into()),
            };
            let Some(text) = text else { return Ok(None) };
            out.push(Seg::Lit(text));
        }
        Ok(Some(out))
    }

    /// The text of `v` in `mode` when every piece of it is known now
    /// (`Some(None)`: one is known only at run time; `None`: as for
    /// [`Self::pieces`]).
    pub(super) fn known_text(
        &self,
        v: &Value,
        key: &str,
        mode: Mode<'_>,
    ) -> Result<Option<Option<String>>, ImportError> {
        let pieces = self.pieces(v, key, mode)?;
        Ok(pieces.map(|p| expand::resolved(&p, 0)))
    }
}
