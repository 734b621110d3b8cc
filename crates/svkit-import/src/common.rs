//! What the Procfile and s6-tree importers share: reading a small source
//! file without trusting what lies at its path, and turning a foreign
//! service name into a slot name.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use svkit::config::names::{check_slot_name, INSTANCE_VAR, MAX_NAME_BYTES};
use svkit::msg::At;

use crate::{ImportError, Note, RawSlot};

/// An error about a whole file or dir.
pub(crate) fn error(file: &Path, what: impl Into<String>) -> ImportError {
    ImportError::new(At::file(file), what)
}

/// The bytes of the regular file at `path`, at most `max` of them (a
/// longer file is an error).
pub(crate) fn read_file(path: &Path, max: usize, what: &str) -> Result<Vec<u8>, ImportError> {
    let bytes = read_head(path, max + 1, what)?;
    if bytes.len() > max {
        return Err(error(
            path,
            format!("{what} is over {max} bytes: not one a person wrote"),
        ));
    }
    Ok(bytes)
}

/// `bytes` as text, else an error `why` at the line of the first byte
/// that is not UTF-8.
pub(crate) fn utf8(path: &Path, bytes: Vec<u8>, why: &str) -> Result<String, ImportError> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        ImportError::new(At::line(path, line), why)
    })
}

/// The first `max` bytes (or fewer) of the regular file at `path`. Opened
/// non-blocking, so a FIFO or a device where a file should be is refused
/// instead of waited on.
pub(crate) fn read_head(path: &Path, max: usize, what: &str) -> Result<Vec<u8>, ImportError> {
    let io = |e: std::io::Error| error(path, format!("unable to read {what}: {e}"));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(error(path, format!("{what} is {kind}")));
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(max as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    Ok(bytes)
}

/// Refuses a slot whose strings hold `{instance}`: svkit reads it as the
/// instance placeholder wherever it appears, and has no escape for it, so
/// the config would not load.
pub(crate) fn no_placeholder(slot: &RawSlot, at: At) -> Result<(), ImportError> {
    // In the JSON text of the slot, the placeholder can only be inside one
    // of its strings: none of its characters is escaped.
    if serde_json::to_string(slot).is_ok_and(|t| t.contains(INSTANCE_VAR)) {
        return Err(ImportError::new(
            at,
            format!(
                "`{INSTANCE_VAR}` in a command or path: svkit reads it as an instance \
                 placeholder and has no escape for it; rename or rewrite it"
            ),
        ));
    }
    Ok(())
}

/// The slot name for a foreign service name: lowercased, every character
/// a slot name cannot hold turned into `-`, leading `-`/`_`/`.` dropped.
/// `Ok((name, changed))`; `Err(why)` when nothing usable is left or the
/// result is still not a slot name (too long, a reserved prefix).
pub(crate) fn slot_name(raw: &str) -> Result<(String, bool), String> {
    let name = tidy_name(&name_chars(raw));
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a slot name is at most {MAX_NAME_BYTES} bytes: give it a shorter name"
        ));
    }
    check_slot_name(&name).map_err(|why| format!("no slot name can be made of it: {why}"))?;
    let changed = name != raw;
    Ok((name, changed))
}

/// [`slot_name`], with a note at `at` when it differs from `raw`.
pub(crate) fn noted_slot_name(raw: &str, at: At, notes: &mut Vec<Note>) -> Result<String, String> {
    let (slot, changed) = slot_name(raw)?;
    if changed {
        let why = format!("the slot is named `{slot}` (a slot name is a-z, 0-9, `.`, `_`, `-`)");
        notes.push(Note::new(at, raw, why));
    }
    Ok(slot)
}

/// `s` lowercased, every character a slot name cannot hold as `-`.
pub(crate) fn name_chars(s: &str) -> String {
    (s.chars())
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '.' | '_' | '-') => c,
            _ => '-',
        })
        .collect()
}

/// `name` without leading `-`/`_`/`.`, and `..` folded to `.`.
pub(crate) fn tidy_name(name: &str) -> String {
    let mut name = name.trim_start_matches(['-', '_', '.']).to_string();
    while name.contains("..") {
        name = name.replace("..", ".");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_names_from_foreign_names() {
        assert_eq!(slot_name("web").unwrap(), ("web".into(), false));
        assert_eq!(slot_name("Web_1").unwrap(), ("web_1".into(), true));
        assert_eq!(slot_name("my app").unwrap(), ("my-app".into(), true));
        assert_eq!(slot_name("_worker").unwrap(), ("worker".into(), true));
        assert_eq!(slot_name("a..b").unwrap(), ("a.b".into(), true));
        assert!(slot_name("___").is_err());
        assert!(slot_name("s6rc-x").is_err());
        assert!(slot_name(&"a".repeat(65)).is_err());
    }
}
