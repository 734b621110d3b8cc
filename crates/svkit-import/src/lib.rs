//! `svctl import`, its own crate: turns another supervisor's service
//! declarations (supervisord INI, a Procfile, s6-overlay `services.d/` or
//! `s6-rc.d/` trees) into one svkit config, with a report of everything
//! that did not carry over. A migration aid run once on a build host, kept
//! out of the core library (which runs in the container); it depends on
//! that library for the config's slot type and for the check every import
//! passes. Pure apart from reading the sources: nothing here writes.
//!
//! Each format lives in its own module and returns an [`Imported`]; this
//! module owns the shared shapes (report notes, located errors), the
//! format detection and the config text.

mod check;
mod common;
pub mod crontab;
pub mod procfile;
pub mod report;
pub mod s6tree;
pub mod supervisord;

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::ser::{Serialize, Serializer};
use serde_json::Value;
pub use svkit::config::raw::RawSlot;
use svkit::msg::At;

/// Where a source format came from, as `--from` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Supervisord,
    Procfile,
    S6,
    Crontab,
}

/// One thing the import did not carry over (or carried over changed):
/// printed as `FILE:LINE: KEY: why` on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The line is `None` for a note about a whole file or dir.
    pub at: At,
    pub key: String,
    /// Why, and what the user can do.
    pub why: String,
}

/// What a format importer produces: the slots of an `/etc/svkit/*.json`
/// config, in source order, and the report.
#[derive(Debug, Default)]
pub struct Imported {
    pub slots: Vec<RawSlot>,
    pub notes: Vec<Note>,
    /// Source files read (for the summary line).
    pub files: usize,
}

/// The input cannot be imported: located, nothing is written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {what}")]
pub struct ImportError {
    pub at: At,
    pub what: String,
}

impl ImportError {
    /// An error at `at`.
    pub fn new(at: At, what: impl Into<String>) -> ImportError {
        ImportError {
            at,
            what: what.into(),
        }
    }
}

impl Note {
    pub fn new(at: At, key: impl Into<String>, why: impl Into<String>) -> Note {
        Note {
            at,
            key: key.into(),
            why: why.into(),
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
        write!(f, "{}: {}: {}", self.at, self.key, self.why)
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The input cannot be imported (exit 1).
    #[error(transparent)]
    Invalid(#[from] ImportError),
    /// A path given could not be read at all (exit 111).
    #[error("unable to read {}: {source}", At::file(path))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What [`import`] gives: the import and the config text of its slots
/// ([`render`]).
#[derive(Debug)]
pub struct Output {
    pub imported: Imported,
    pub text: String,
}

/// Imports every path (each in `from`, else in the format [`detect`]
/// finds) into one slot list, checked as `svctl check` checks a config,
/// and its config text.
pub fn import(paths: &[PathBuf], from: Option<Format>, opts: &Options) -> Result<Output, Failure> {
    let mut all = Imported::default();
    // Where each slot was written: its own line where the format says,
    // else the path it came from.
    let mut at: Vec<At> = Vec::new();
    for path in paths {
        if path.to_str().is_none() {
            return Err(Failure::Invalid(ImportError::new(
                At::file(path),
                "the path is not UTF-8: the paths an import writes into a config must be",
            )));
        }
        let path_io = |source| Failure::Io {
            path: path.clone(),
            source,
        };
        std::fs::metadata(path).map_err(path_io)?;
        let one = match from.map_or_else(|| detect(path), Ok)? {
            Format::Supervisord => {
                let (one, lines) = supervisord::import_located(path, opts)?;
                at.extend(lines);
                one
            }
            Format::Procfile => procfile::import(path)?,
            Format::S6 => s6tree::import(path)?,
            Format::Crontab => crontab::import(path)?,
        };
        at.resize(all.slots.len() + one.slots.len(), At::file(path));
        all.slots.extend(one.slots);
        all.notes.extend(one.notes);
        all.files += one.files;
    }
    let whole = paths.first().map_or_else(|| At::file(""), At::file);
    let text = checked(&all.slots, &at, whole)?;
    Ok(Output {
        imported: all,
        text,
    })
}

/// [`check::checked`], its error at where the slot at fault was written
/// (`at`, by slot), else at `whole`.
fn checked(slots: &[RawSlot], at: &[At], whole: At) -> Result<String, ImportError> {
    check::checked(slots).map_err(|(i, what)| {
        let at = i.and_then(|i| at.get(i).cloned());
        ImportError::new(at.unwrap_or(whole), what)
    })
}

fn unknown(path: &Path, what: &str) -> ImportError {
    common::error(
        path,
        format!("{what}: say which with --from supervisord|procfile|s6|crontab"),
    )
}

/// Which format a path is in, when `--from` does not say: by its name,
/// its shape (a dir) and its content (a file). A dir is an s6-overlay
/// tree when it is or holds `services.d` or `s6-rc.d`, or a subdir holds
/// `run` or `type`; a file named `Procfile*` is a Procfile; an INI file
/// with `[program:…]` or `[supervisord]` is supervisord's; a file whose
/// first line that is not a comment or a `NAME=value` is a cron entry is
/// a crontab.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    let io = |e: std::io::Error| {
        common::error(
            path,
            format!("unable to read: {}", svkit::msg::strerror(&e)),
        )
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        let named = path
            .file_name()
            .is_some_and(|n| n == "services.d" || n == "s6-rc.d");
        let holds = ["services.d", "s6-rc.d"]
            .iter()
            .any(|d| path.join(d).is_dir());
        let shaped = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let p = e.path();
                p.is_dir() && (p.join("run").is_file() || p.join("type").is_file())
            });
        if named || holds || shaped {
            return Ok(Format::S6);
        }
        return Err(unknown(
            path,
            "a directory that is not an s6-overlay tree (no services.d, s6-rc.d, */run or */type)",
        ));
    }
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("Procfile"))
    {
        return Ok(Format::Procfile);
    }
    if !meta.is_file() {
        return Err(unknown(path, "not a regular file"));
    }
    // Within the first MiB: the answer is on the first lines.
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(1 << 20).read_to_end(&mut head))
        .map_err(io)?;
    let head = String::from_utf8_lossy(&head);
    let ini = head.split('\n').any(|l| {
        let l = l.trim_start();
        l.starts_with("[program:") || l.starts_with("[supervisord]")
    });
    if ini {
        return Ok(Format::Supervisord);
    }
    if crate::crontab::looks_like(&head) {
        return Ok(Format::Crontab);
    }
    Err(unknown(
        path,
        "cannot tell the format (no [program:…] or [supervisord] section, not named Procfile, no crontab entry)",
    ))
}

/// A slot's keys in the order docs/config.md's table lists them, as the
/// config text holds them (a key not listed comes after, in name order);
/// nested objects in name order.
const KEY_ORDER: &[&str] = &[
    "name",
    "instances",
    "type",
    "command",
    "user",
    "cwd",
    "env",
    "autostart",
    "depends_on",
    "readiness",
    "log",
    "restart",
    "down_signal",
    "stop_timeout_ms",
];

/// A slot's keys, in [`KEY_ORDER`].
struct InOrder(Vec<(String, Value)>);

impl Serialize for InOrder {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// The config text of `slots`: `{"slots": [...]}`, serde_json's pretty
/// layout, a final newline.
pub fn render(slots: &[RawSlot]) -> String {
    let slots: Vec<InOrder> = slots
        .iter()
        .map(|s| {
            let Ok(Value::Object(mut m)) = serde_json::to_value(s) else {
                return InOrder(Vec::new());
            };
            let mut keys: Vec<(String, Value)> = (KEY_ORDER.iter())
                .filter_map(|k| m.remove_entry(*k))
                .collect();
            keys.extend(m);
            InOrder(keys)
        })
        .collect();
    let config = std::collections::BTreeMap::from([("slots", slots)]);
    // A map of strings and JSON values always serializes.
    serde_json::to_string_pretty(&config).unwrap_or_default() + "\n"
}
