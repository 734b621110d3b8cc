//! Reading a supervisord config as supervisord does: the main file, then
//! the files its `[include] files=` names (space-separated globs, relative
//! to the main file's dir, each glob's matches in sorted order), merged
//! into one set of sections. supervisord follows only the main file's
//! `[include]`; one in an included file is reported, not followed.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use svkit::msg::At;

use super::ini::Ini;
use crate::{ImportError, Note};

/// Biggest source file read: far above any real config, small enough
/// that a wrong path (a disk image, `/dev/zero`) is refused at once.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The text of one source file: a regular file (never a FIFO a read would
/// wait on forever), under [`MAX_SOURCE_BYTES`], UTF-8. An error is at
/// `from` (naming the file) for an included file, else at the file.
pub fn source_text(path: &Path, from: Option<&At>) -> Result<String, ImportError> {
    let fail = |why: String| match from {
        Some(at) => ImportError::new(at.clone(), format!("{}: {why}", At::file(path))),
        None => ImportError::new(At::file(path), why),
    };
    let io = |e: std::io::Error| fail(format!("unable to read: {}", svkit::msg::strerror(&e)));
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(fail("a directory, not a config file".into()));
    }
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(fail(format!(
            "over {MAX_SOURCE_BYTES} bytes (16 MiB): not a supervisord config"
        )));
    }
    let why = "bytes that are not UTF-8 (supervisord reads its config as UTF-8 text; so do svkit configs)";
    crate::common::utf8(path, bytes, why)
}

/// The merged sections, the notes about reading, and the files read.
pub fn read(main: &Path) -> Result<(Ini, Vec<Note>, usize), ImportError> {
    let mut ini = Ini::default();
    let mut notes = Vec::new();
    let text = source_text(main, None)?;
    ini.read(main, &text)?;
    let mut files = 1;
    let Some(inc) = ini.section("include").cloned() else {
        return Ok((ini, notes, files));
    };
    let Some(value) = inc.get("files").cloned() else {
        return Err(ImportError::new(
            inc.at.clone(),
            "[include] has no `files` (supervisord refuses the file)",
        ));
    };
    let base = main
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut seen: Vec<PathBuf> = vec![std::fs::canonicalize(main).unwrap_or(main.to_path_buf())];
    let here = here(main).ok_or_else(|| {
        ImportError::new(
            At::file(main),
            "the config's directory is not UTF-8: %(here)s cannot be expanded",
        )
    })?;
    let at = value.at.clone();
    let loc = |what: String| ImportError::new(at.clone(), format!("files: {what}"));
    if value.text.contains("%(ENV_") {
        return Err(loc(
            "uses %(ENV_X)s: which files supervisord includes depends on its environment; write the paths".into(),
        ));
    }
    let patterns = value.text.replace("%(here)s", &here).replace("%%", "%");
    for pattern in patterns.split_whitespace() {
        let full = base.join(pattern);
        let matches = glob(&full).map_err(loc)?;
        if matches.is_empty() {
            if has_glob(pattern) {
                notes.push(Note::new(
                    at.clone(),
                    "files",
                    format!("`{pattern}` matches no file (supervisord warns and goes on)"),
                ));
                continue;
            }
            return Err(loc(format!(
                "{}: No such file or directory",
                At::file(&full)
            )));
        }
        for file in matches {
            let canon = std::fs::canonicalize(&file).unwrap_or(file.clone());
            if seen.contains(&canon) {
                return Err(loc(format!(
                    "{} is included again (an include cycle, or the same file twice)",
                    At::file(&file)
                )));
            }
            seen.push(canon);
            let text = source_text(&file, Some(&at))?;
            ini.read(&file, &text)?;
            files += 1;
        }
    }
    let inner = ini.section("include").and_then(|s| s.get("files"));
    if let Some(v) = inner.filter(|v| v.at != at) {
        notes.push(Note::new(
            v.at.clone(),
            "files",
            "an [include] in an included file: not followed (supervisord follows only the main file's)",
        ));
    }
    Ok((ini, notes, files))
}

/// supervisord's `%(here)s` in a value of `file`: the file's dir,
/// [`abspath`]; `None` when it is not UTF-8.
pub fn here(file: &Path) -> Option<String> {
    let dir = (file.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    abspath(dir).to_str().map(str::to_owned)
}

/// Python's `os.path.abspath`: absolute, `.` and `..` folded by name.
pub fn abspath(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or(p.to_path_buf());
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Python's `glob.glob` for a pattern whose wildcards are in its last
/// component: the matching names (`.`-led ones only when the pattern's
/// name is), sorted. A literal path is returned when it exists.
fn glob(pattern: &Path) -> Result<Vec<PathBuf>, String> {
    let (Some(dir), Some(name)) = (pattern.parent(), pattern.file_name()) else {
        return Ok(Vec::new());
    };
    if has_glob(&dir.to_string_lossy()) {
        return Err("wildcards in a directory part are not followed: list the directories".into());
    }
    let Some(name) = name.to_str() else {
        return Err("a pattern that is not UTF-8".into());
    };
    if !has_glob(name) {
        return Ok(pattern
            .exists()
            .then(|| pattern.to_path_buf())
            .into_iter()
            .collect());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<PathBuf> = (entries.flatten())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') || name.starts_with('.'))
        .filter(|n| fnmatch(name.as_bytes(), n.as_bytes()))
        .map(|n| dir.join(n))
        .collect();
    out.sort();
    Ok(out)
}

/// `*`, `?`, `[abc]`, `[!a-z]` over bytes.
fn fnmatch(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| fnmatch(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && fnmatch(&p[1..], &s[1..]),
        Some(b'[') => {
            let Some(close) = p.iter().skip(2).position(|&b| b == b']').map(|i| i + 2) else {
                return s.first() == Some(&b'[') && fnmatch(&p[1..], &s[1..]);
            };
            let Some(&c) = s.first() else { return false };
            let (neg, set) = match p[1] {
                b'!' => (true, &p[2..close]),
                _ => (false, &p[1..close]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != neg && fnmatch(&p[close + 1..], &s[1..])
        }
        Some(&b) => s.first() == Some(&b) && fnmatch(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn fnmatch_as_glob() {
        assert!(fnmatch(b"*.conf", b"a.conf"));
        assert!(!fnmatch(b"*.conf", b"a.ini"));
        assert!(fnmatch(b"w[0-9]?.ini", b"w1x.ini"));
        assert!(!fnmatch(b"w[!0-9].ini", b"w1.ini"));
    }
}
