//! `svkit slot-env`: what a slot's run script execs when the slot has
//! `env_file` or `secrets`. It reads them at every start, sets their
//! variables, and execs the rest of the command line; the values live only
//! in this process's memory and the program's environment, never in a
//! rendered file or an argument.
//!
//! Usage (written by the renderer, not by people):
//! `svkit slot-env --slot NAME --sentinel VAR [--env-file PATH]...
//! [--secret VAR=PATH]... [--cwd DIR] -- ARGV...`
//!
//! Order: the run script's own environment (the container's, then `env`
//! and the sentinel), then each env file in turn (a later line wins), then
//! the secrets. An env file may not set the sentinel.
//!
//! When a file cannot be used the slot does not start: the error (file and
//! line, never a value) goes to the slot's log (`msg::say`: never blocked
//! by a full log pipe; the container's output then), and to
//! [`START_ERROR_FILE`] in the slot dir, where `finish` turns it into a
//! permanent failure that `svctl status` shows; the exit code is
//! [`START_FAILED`].

pub mod dotenv;
pub mod oneoff;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::Read as _;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::config::names::{check_arg_len, check_env_name, MAX_ARG_STRLEN};
use crate::msg::{self, exit, strerror};
pub use crate::slot::end::START_ERROR_FILE;

pub use crate::msg::exit::START_FAILED;

/// What the run script asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub slot: String,
    pub sentinel: String,
    pub env_files: Vec<PathBuf>,
    pub secrets: Vec<(String, PathBuf)>,
    pub cwd: Option<PathBuf>,
    pub argv: Vec<OsString>,
}

/// Why a slot cannot start: what the log and `svctl status` say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// `PATH:LINE: what`.
    #[error("env_file {}:{line}: {msg}", .path.display())]
    EnvLine {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    #[error("env_file {}: {why}", .path.display())]
    EnvFile { path: PathBuf, why: String },
    #[error("secret {var}: {}: {why}", .path.display())]
    Secret {
        var: String,
        path: PathBuf,
        why: String,
    },
}

/// Every variable the request sets, in the order to apply them.
pub fn collect(req: &Request) -> Result<Vec<(OsString, OsString)>, StartError> {
    let mut vars = Vec::new();
    for path in &req.env_files {
        let text = read(path, Purpose::EnvFile, MAX_ENV_FILE_BYTES).map_err(|why| {
            StartError::EnvFile {
                path: path.clone(),
                why,
            }
        })?;
        let line_err = |line: usize, msg: String| StartError::EnvLine {
            path: path.clone(),
            line,
            msg,
        };
        // The file's syntax first, whole; then each variable's checks, so
        // that a refusal names the line that set it.
        for (line, k, v) in dotenv::parse(&text).map_err(|e| line_err(e.line, e.msg))? {
            let bad = if k == req.sentinel {
                Some(format!(
                    "{k} is the sentinel_env, which svkit sets to the slot name"
                ))
            } else {
                check_arg_len(k.len() + 1 + v.len(), &format!("{k}=value")).err()
            };
            if let Some(msg) = bad {
                return Err(line_err(line, msg));
            }
            vars.push((OsString::from(k), v));
        }
    }
    for (var, path) in &req.secrets {
        let v = secret(var, path).map_err(|why| StartError::Secret {
            var: var.clone(),
            path: path.clone(),
            why,
        })?;
        vars.push((OsString::from(var), OsString::from_vec(v)));
    }
    Ok(vars)
}

fn usage(why: impl fmt::Display) -> ExitCode {
    msg::say_fatal(format_args!(
        "usage: slot-env --slot NAME --sentinel VAR [--env-file PATH]... [--secret VAR=PATH]... [--cwd DIR] -- ARGV...: {why}"
    ));
    ExitCode::from(exit::USAGE)
}

/// Parses the run script's arguments (after `slot-env`).
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Request, String> {
    let mut req = Request::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            req.argv = it.collect();
            break;
        }
        let mut value = || {
            it.next()
                .ok_or(format!("{} needs a value", a.to_string_lossy()))
        };
        match a.to_str() {
            Some("--slot") => req.slot = value()?.to_string_lossy().into_owned(),
            Some("--sentinel") => req.sentinel = value()?.to_string_lossy().into_owned(),
            Some("--env-file") => req.env_files.push(value()?.into()),
            Some("--cwd") => req.cwd = Some(value()?.into()),
            Some("--secret") => {
                let v = value()?;
                let mut parts = v.as_bytes().splitn(2, |&b| b == b'=');
                let (Some(var), Some(path)) = (parts.next(), parts.next()) else {
                    return Err("--secret takes VAR=PATH".into());
                };
                let var = String::from_utf8_lossy(var).into_owned();
                check_env_name(&var).map_err(|e| format!("--secret {var}: {e}"))?;
                req.secrets.push((var, OsStr::from_bytes(path).into()));
            }
            _ => return Err(format!("unknown argument {}", a.to_string_lossy())),
        }
    }
    if req.slot.is_empty() || req.sentinel.is_empty() {
        return Err("--slot and --sentinel are required".into());
    }
    if req.argv.is_empty() {
        return Err("no command after --".into());
    }
    Ok(req)
}

/// Leaves the reason in the slot dir (the current dir) for `finish`.
fn record(e: &StartError) {
    let _ = crate::fsutil::overwrite(START_ERROR_FILE.as_ref(), format!("{e}\n").as_bytes());
}

/// `svkit slot-env ARGS...`: only returns on failure.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let req = match parse_args(args) {
        Ok(r) => r,
        Err(why) => return usage(why),
    };
    let vars = match collect(&req) {
        Ok(v) => v,
        Err(e) => {
            // Recorded first: finish needs it whatever becomes of the line.
            record(&e);
            msg::say_fatal(format_args!("slot {}: not starting: {e}", req.slot));
            return ExitCode::from(START_FAILED);
        }
    };
    // The one exec of a command as a slot runs it ([`oneoff::exec`]): the
    // run script already dropped privileges and holds the container's env.
    let one = oneoff::OneOff {
        argv: req.argv,
        vars,
        cwd: req.cwd,
        user: None,
    };
    let e = oneoff::exec(&one, &Default::default());
    match &e {
        oneoff::OneOffError::Exec { prog, source } => msg::say_fatal(format_args!(
            "slot {}: unable to run {}: {}",
            req.slot,
            prog.to_string_lossy(),
            strerror(source)
        )),
        _ => msg::say_fatal(format_args!("slot {}: {e}", req.slot)),
    };
    ExitCode::from(e.exit_code())
}

// Reading an env file or a secret at slot start: a regular file (symlinks
// are followed: a Kubernetes secret volume is made of them), bounded in
// size, and for a secret, readable by no one but its owner and group.

/// An env file larger than this is not one (it could not fit the kernel's
/// limit on a program's environment anyway).
const MAX_ENV_FILE_BYTES: u64 = 1 << 20;

/// What a file is read for: the checks differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    EnvFile,
    /// The variable it becomes.
    Secret,
}

/// The file's bytes, or why it is refused (never its content).
fn read(path: &Path, kind: Purpose, max: u64) -> Result<Vec<u8>, String> {
    // Non-blocking: a FIFO put where a file should be must not hang the
    // start; it is refused below, as anything but a regular file is.
    let f = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| strerror(&e))?;
    let meta = f.metadata().map_err(|e| strerror(&e))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mode = meta.mode() & 0o7777;
    if kind == Purpose::Secret {
        if mode & 0o004 != 0 {
            return Err(format!(
                "readable by every user (mode {mode:04o}): refused; make it unreadable to others (chmod o-r, or mount the secret with mode 0400 or 0440)"
            ));
        }
        if mode & 0o002 != 0 {
            return Err(format!(
                "writable by every user (mode {mode:04o}): refused (chmod o-w)"
            ));
        }
    }
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| strerror(&e))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(bytes)
}

/// A secret's value: its file's content less one trailing newline (what
/// `echo value > file` adds), checked to fit in `VAR=value`.
fn secret(var: &str, path: &Path) -> Result<Vec<u8>, String> {
    // `VAR=value` and its NUL within the kernel's limit.
    let max = MAX_ARG_STRLEN.saturating_sub(var.len() + 2);
    let mut v = read(path, Purpose::Secret, max as u64 + 1)?;
    if v.last() == Some(&b'\n') {
        v.pop();
    }
    if v.len() > max {
        return Err(format!(
            "larger than {max} bytes: the kernel passes no longer {var}=value to a program"
        ));
    }
    if v.contains(&0) {
        return Err("holds a NUL byte, which no program can receive".into());
    }
    Ok(v)
}
