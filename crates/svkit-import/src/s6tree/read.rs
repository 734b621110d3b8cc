//! Reading a service tree's dirs and small files the way s6 and s6-rc
//! read them: dot-led names skipped, a number file's trailing newlines
//! ignored, a name list as a `NAME.d/` dir of entries or (deprecated) a
//! file of lines.

use std::path::{Path, PathBuf};

use crate::common::{error, read_file};
use crate::ImportError;

/// s6-rc reads small files into a 64-byte buffer: anything bigger is not
/// one of them.
const SMALL: usize = 64;
/// A name list file (`dependencies`, `contents`): a line a name.
const LIST: usize = 1 << 20;

/// The entries of `dir` that s6 would look at (not dot-led), sorted by
/// name, each with whether it is a directory (symlinks followed, as s6
/// follows them), or for a name `list`, not looked at.
pub(super) fn entries(dir: &Path, list: bool) -> Result<Vec<(String, PathBuf, bool)>, ImportError> {
    let io = |e: std::io::Error| error(dir, format!("unable to read the directory: {e}"));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let os = entry.file_name();
        if os.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        let Some(name) = os.to_str() else {
            return Err(match list {
                true => error(dir, "an entry's name is not UTF-8: a config holds UTF-8"),
                false => error(&path, "the name is not UTF-8: a config holds UTF-8"),
            });
        };
        let is_dir = !list
            && std::fs::metadata(&path)
                .map_err(|e| error(&path, format!("unable to read it: {e}")))?
                .is_dir();
        out.push((name.to_string(), path, is_dir));
    }
    out.sort();
    Ok(out)
}

/// Whether `dir/name` exists (following symlinks); an entry that cannot be
/// looked at (a symlink loop, no permission) is an error, not an absence.
pub(super) fn has(dir: &Path, name: &str) -> Result<bool, ImportError> {
    let path = dir.join(name);
    match std::fs::metadata(&path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(error(&path, format!("unable to read it: {e}"))),
    }
}

/// The trimmed text of the small file `dir/name`, `None` when absent.
pub(super) fn small(dir: &Path, name: &str) -> Result<Option<String>, ImportError> {
    if !has(dir, name)? {
        return Ok(None);
    }
    let text = text(&dir.join(name), SMALL, name)?;
    Ok(Some(text.trim_end_matches('\n').to_string()))
}

/// The text of the file at `path`, at most `max` bytes of UTF-8.
fn text(path: &Path, max: usize, what: &str) -> Result<String, ImportError> {
    String::from_utf8(read_file(path, max, what)?).map_err(|_| error(path, "not UTF-8 text"))
}

/// The unsigned number in `dir/name` (`timeout-kill`, `notification-fd`),
/// `None` when absent. Anything else in it is an error, as for s6-rc-compile.
pub(super) fn number(dir: &Path, name: &str) -> Result<Option<u32>, ImportError> {
    let Some(text) = small(dir, name)? else {
        return Ok(None);
    };
    let ok = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u32>() {
        Ok(n) if ok => Ok(Some(n)),
        _ => Err(error(
            &dir.join(name),
            format!(
                "`{text}` is not a number of milliseconds or an fd (s6-rc-compile refuses it too)"
            ),
        )),
    }
}

/// The names of the list `what` of `dir`: the non-dot entries of
/// `what.d/` (what they are does not matter), else the lines of the file
/// `what` (leading blanks dropped, `#` lines and empty ones skipped), as
/// s6-rc-compile reads `dependencies` and `contents`. Each name once.
pub(super) fn names(dir: &Path, what: &str) -> Result<Vec<String>, ImportError> {
    let d = format!("{what}.d");
    let mut out = Vec::new();
    if has(dir, &d)? {
        out = entries(&dir.join(&d), true)?
            .into_iter()
            .map(|e| e.0)
            .collect();
    } else if has(dir, what)? {
        for line in text(&dir.join(what), LIST, what)?.lines() {
            let name = line.trim_start_matches([' ', '\t']);
            if !name.is_empty() && !name.starts_with('#') && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    Ok(out)
}

/// How a script is run: the interpreter of its `#!` line (with its one
/// optional argument, split as the kernel splits it) then the script's
/// path in the image, so the mode bits of the file do not matter (s6-rc
/// makes its copy 0755 whatever they are); a script without a `#!` line
/// is run as is when executable (a binary). `None` when it cannot run.
pub(super) fn script_command(
    script: &Path,
    in_image: &str,
) -> Result<Option<Vec<String>>, ImportError> {
    use std::os::unix::fs::PermissionsExt as _;
    let head = crate::common::read_head(script, 256, "the script")?;
    if let Some(rest) = head.strip_prefix(b"#!") {
        let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
        let line = std::str::from_utf8(line)
            .map_err(|_| error(script, "its #! line is not UTF-8: a config holds UTF-8"))?;
        let line = line.trim_matches([' ', '\t', '\r']);
        let (interp, arg) = line.split_once([' ', '\t']).unwrap_or((line, ""));
        if !interp.is_empty() {
            let argv = [interp, arg.trim_matches([' ', '\t']), in_image];
            let argv = argv.iter().filter(|a| !a.is_empty()).map(|a| a.to_string());
            return Ok(Some(argv.collect()));
        }
    }
    let meta =
        std::fs::metadata(script).map_err(|e| error(script, format!("unable to read it: {e}")))?;
    Ok((meta.permissions().mode() & 0o111 != 0).then(|| vec![in_image.to_string()]))
}
