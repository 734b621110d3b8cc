//! Which format a path is in, when `--from` does not say: by its name,
//! its shape (a dir) and its content (a file).

use std::io::{BufRead as _, Read as _};
use std::path::Path;

use super::{Format, ImportError};

fn unknown(path: &Path, what: &str) -> ImportError {
    ImportError {
        file: path.to_path_buf(),
        line: None,
        what: format!("{what}: say which with --from supervisord|procfile|s6"),
    }
}

/// A dir is an s6-overlay tree when it is or holds `services.d` or
/// `s6-rc.d`, or a subdir holds `run` or `type`; a file named `Procfile*`
/// is a Procfile; an INI file with `[program:…]` or `[supervisord]` is
/// supervisord's.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    let meta = std::fs::metadata(path).map_err(|e| ImportError {
        file: path.to_path_buf(),
        line: None,
        what: format!("unable to read: {}", crate::msg::strerror(&e)),
    })?;
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
    let io = |e: std::io::Error| ImportError {
        file: path.to_path_buf(),
        line: None,
        what: format!("unable to read: {}", crate::msg::strerror(&e)),
    };
    // Line by line, within the first MiB: the answer is usually on the
    // first lines, and a whole big config read (and decoded) only to be
    // told it is one cost more than the rest of detection.
    let file = std::fs::File::open(path).map_err(io)?;
    let mut head = std::io::BufReader::new(file.take(1 << 20));
    let mut line = Vec::new();
    let mut ini = false;
    loop {
        line.clear();
        if head.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        let l = line.strip_suffix(b"\n").unwrap_or(&line);
        let l = String::from_utf8_lossy(l);
        let l = l.trim_start();
        if l.starts_with("[program:") || l.starts_with("[supervisord]") {
            ini = true;
            break;
        }
    }
    if ini {
        return Ok(Format::Supervisord);
    }
    Err(unknown(
        path,
        "cannot tell the format (no [program:…] or [supervisord] section, not named Procfile)",
    ))
}
