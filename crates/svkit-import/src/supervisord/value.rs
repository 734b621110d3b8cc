//! A program's values as text: `%(…)s` expanded ([`super::expand`]),
//! `%(process_num)` written as the slot's mode has it, and the text once
//! every piece is known.

use std::path::{Path, PathBuf};

use svkit::config::names;

use super::expand::{self, Known, Seg, Val};
use super::ini::Value;
use super::program::{Mode, Piece, Program};
use crate::ImportError;

impl Program<'_> {
    pub(super) fn segs(
        &self,
        v: &Value,
        key: &str,
        numprocs: u32,
    ) -> Result<Vec<Seg>, ImportError> {
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
            numprocs,
        };
        expand::expand(&v.text, &k).map_err(|e| self.bad(v, key, e))
    }

    /// The pieces of `v` in `mode` ([`Self::segs`], then
    /// [`Self::pieces`]).
    pub(super) fn value_pieces(
        &self,
        v: &Value,
        key: &str,
        numprocs: u32,
        mode: Mode<'_>,
    ) -> Result<Option<Vec<Piece>>, ImportError> {
        let segs = self.segs(v, key, numprocs)?;
        Ok(Self::pieces(&segs, mode))
    }

    /// The text of `v` in `mode` when every piece of it is known now
    /// (`Some(None)`: one is known only at run time; `None`: as for
    /// [`Self::pieces`]).
    pub(super) fn known_text(
        &self,
        v: &Value,
        key: &str,
        numprocs: u32,
        mode: Mode<'_>,
    ) -> Result<Option<Option<String>>, ImportError> {
        Ok(self.value_pieces(v, key, numprocs, mode)?.map(plain))
    }

    /// The pieces of `segs` in `mode`; `None` when `%(process_num)` is
    /// written otherwise than the template's name has it.
    pub(super) fn pieces(segs: &[Seg], mode: Mode<'_>) -> Option<Vec<Piece>> {
        let mut out = Vec::new();
        for s in segs {
            let p = match (s, mode) {
                (Seg::Lit(l), _) => Piece::Lit(l.clone()),
                (Seg::Env(v), _) => Piece::Var(v.clone()),
                (Seg::Proc(spec), Mode::One(k)) => {
                    Piece::Lit(expand::format(spec, Val::Int(k)).ok()?)
                }
                (Seg::Proc(spec), Mode::Template(t, nums)) => {
                    let same = nums.iter().all(|&k| {
                        expand::format(spec, Val::Int(k)) == expand::format(t, Val::Int(k))
                    });
                    if !same {
                        return None;
                    }
                    Piece::Lit(names::INSTANCE_VAR.into())
                }
            };
            out.push(p);
        }
        Some(out)
    }
}

/// Text of pieces that are all known, else `None`.
pub fn plain(ps: Vec<Piece>) -> Option<String> {
    let mut s = String::new();
    for p in ps {
        match p {
            Piece::Lit(l) => s.push_str(&l),
            Piece::Var(_) => return None,
        }
    }
    Some(s)
}
