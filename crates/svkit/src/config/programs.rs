//! Whether each slot's program (`command[0]`) exists where the slots run:
//! a fact of a machine, like its users, checked against the root the
//! caller names (`svctl check --root DIR`: an image's; the boot hook: `/`).
//! An absolute path must name an executable file under the root; a bare
//! name must be one in a directory of the slot's `PATH` (its `env.PATH`,
//! else the one the caller gives, else
//! [`crate::container::DEFAULT_PATH`]). Symlinks are
//! followed inside the root, as they would be once the root is `/`. A
//! relative path with a `/` depends on the directory the program starts
//! in and is not checked.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Component, Path, PathBuf};

use super::error::Diagnostic;
use super::json_pos::FieldPath;
use super::model::Model;
use crate::container::DEFAULT_PATH;
use crate::msg::exit::{CANNOT_EXECUTE, NOT_FOUND};

/// Symlinks followed in one lookup before giving up, as the kernel does.
const MAX_LINKS: usize = 40;

/// One diagnostic per slot whose `command[0]` is not an executable file
/// under `root`. `path_env`: the `PATH` slots inherit (the boot hook's
/// own); `None` for an image's root, where [`DEFAULT_PATH`] stands in.
pub fn missing_programs(model: &Model, root: &Path, path_env: Option<&str>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for s in &model.slots {
        let Some(prog) = s.command.first() else {
            continue;
        };
        let (why, code) = if prog.starts_with('/') {
            match executable(root, prog) {
                Ok(()) => continue,
                Err((why, code)) => (
                    format!("`{prog}` {why} under {}", crate::msg::path(root)),
                    code,
                ),
            }
        } else if prog.contains('/') {
            continue;
        } else {
            let path = (s.env.get("PATH").map(String::as_str))
                .or(path_env)
                .unwrap_or(DEFAULT_PATH);
            let dirs = path.split(':').filter(|d| d.starts_with('/'));
            if dirs
                .clone()
                .any(|d| executable(root, &format!("{d}/{prog}")).is_ok())
            {
                continue;
            }
            let whose = if s.env.contains_key("PATH") {
                "the slot's env.PATH"
            } else if path_env.is_some() {
                "PATH"
            } else {
                "PATH (assumed)"
            };
            let why = format!(
                "`{prog}` is not in any directory of {whose} under {}: {path}",
                crate::msg::path(root)
            );
            (why, NOT_FOUND)
        };
        let at = FieldPath::root()
            .key("slots")
            .index(s.origin.index)
            .key("command")
            .index(0);
        out.push(Diagnostic::new(
            &s.origin.file,
            None,
            Some(at),
            format!(
                "slot {}: {why}; it would exit {code} at every start",
                s.name
            ),
        ));
    }
    out
}

/// `Ok` when `abs` (absolute) names an executable regular file under
/// `root`; else why not, with the exit code the start would end with.
fn executable(root: &Path, abs: &str) -> Result<(), (&'static str, u8)> {
    let gone = |_| ("does not exist", NOT_FOUND);
    let found = resolve(root, Path::new(abs)).map_err(gone)?;
    let meta = std::fs::metadata(found).map_err(gone)?;
    if !meta.is_file() {
        return Err(("is not a regular file", CANNOT_EXECUTE));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(("is not executable", CANNOT_EXECUTE));
    }
    Ok(())
}

/// `abs` looked up as if `root` were `/`: each symlink met on the way is
/// read and followed, an absolute target starting again at `root`.
fn resolve(root: &Path, abs: &Path) -> io::Result<PathBuf> {
    // The names still to walk, the next one last.
    let mut todo: Vec<OsString> = names(abs).rev().collect();
    let mut at: Vec<OsString> = Vec::new();
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            at.pop();
            continue;
        }
        let host: PathBuf = std::iter::once(root.as_os_str())
            .chain(at.iter().map(OsString::as_os_str))
            .chain(std::iter::once(c.as_os_str()))
            .collect();
        let meta = std::fs::symlink_metadata(&host)?;
        if !meta.file_type().is_symlink() {
            at.push(c);
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(io::Error::from_raw_os_error(nix::libc::ELOOP));
        }
        let target = std::fs::read_link(&host)?;
        if target.is_absolute() {
            at.clear();
        }
        todo.extend(names(&target).rev());
    }
    Ok(std::iter::once(root.as_os_str())
        .chain(at.iter().map(OsString::as_os_str))
        .collect())
}

/// The names of a path, `..` kept, `/` and `.` dropped.
fn names(p: &Path) -> impl DoubleEndedIterator<Item = OsString> + '_ {
    p.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsStr::from_bytes(b"..").to_os_string()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(json: &str) -> Model {
        crate::config::test_model(json)
    }

    fn exe(p: &Path) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    #[test]
    fn programs_are_looked_up_inside_the_root() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path();
        exe(&root.join("usr/bin/app"));
        exe(&root.join("opt/tool/bin/tool"));
        std::fs::write(root.join("usr/bin/data"), "x").expect("write");
        // /bin -> usr/bin, as in Debian; an absolute link resolves in the root.
        std::os::unix::fs::symlink("usr/bin", root.join("bin")).expect("symlink");
        std::fs::create_dir_all(root.join("etc/alt")).expect("mkdir");
        std::os::unix::fs::symlink("/usr/bin/app", root.join("etc/alt/app")).expect("symlink");
        std::os::unix::fs::symlink("/etc/alt/app", root.join("usr/bin/app2")).expect("symlink");
        let m = model(
            r#"{"slots": [
  {"name": "a", "command": ["app", "serve"]},
  {"name": "b", "command": ["/bin/app"]},
  {"name": "c", "command": ["app2"]},
  {"name": "d", "command": ["tool"], "env": {"PATH": "/opt/tool/bin"}},
  {"name": "e", "command": ["./relative/x"]},
  {"name": "f", "command": ["nope"]},
  {"name": "g", "command": ["/usr/bin/data"]},
  {"name": "h", "command": ["/usr/bin/gone"]},
  {"name": "i", "command": ["app"], "env": {"PATH": "/opt/tool/bin"}}
]}"#,
        );
        let d: Vec<String> = missing_programs(&m, root, None)
            .iter()
            .map(|d| d.to_string())
            .collect();
        let r = root.display();
        assert_eq!(
            d,
            [
                format!("/etc/svkit/10.json: slots[5].command[0]: slot f: `nope` is not in any directory of PATH (assumed) under {r}: {DEFAULT_PATH}; it would exit 127 at every start"),
                format!("/etc/svkit/10.json: slots[6].command[0]: slot g: `/usr/bin/data` is not executable under {r}; it would exit 126 at every start"),
                format!("/etc/svkit/10.json: slots[7].command[0]: slot h: `/usr/bin/gone` does not exist under {r}; it would exit 127 at every start"),
                format!("/etc/svkit/10.json: slots[8].command[0]: slot i: `app` is not in any directory of the slot's env.PATH under {r}: /opt/tool/bin; it would exit 127 at every start"),
            ]
        );
    }

    #[test]
    fn a_symlink_loop_is_not_found() {
        let t = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink("/x", t.path().join("x")).expect("symlink");
        assert_eq!(
            executable(t.path(), "/x"),
            Err(("does not exist", NOT_FOUND))
        );
    }
}
