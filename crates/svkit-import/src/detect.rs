//! Which format a path is in, when `--from` does not say: by its name,
//! its shape (a dir) and its content (a file).

use std::io::Read as _;
use std::path::Path;

use crate::common::error;
use crate::{Format, ImportError};

fn unknown(path: &Path, what: &str) -> ImportError {
    error(
        path,
        format!("{what}: say which with --from supervisord|procfile|s6|crontab"),
    )
}

/// A dir is an s6-overlay tree when it is or holds `services.d` or
/// `s6-rc.d`, or a subdir holds `run` or `type`; a file named `Procfile*`
/// is a Procfile; an INI file with `[program:…]` or `[supervisord]` is
/// supervisord's; a file whose first line that is not a comment or a
/// `NAME=value` is a cron entry is a crontab.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    let io = |e: std::io::Error| {
        error(
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
