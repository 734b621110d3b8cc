//! A command run in the foreground as a slot runs its program: the slot's
//! `env`, then its env files and secrets (read by [`super::collect`], the
//! rules of `svkit slot-env`), its `cwd` and its `user`. What a redirect's
//! opt-out and `svctl exec` run; the rendered `run` script follows the
//! same order. The sentinel is not set: the command is not supervised.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::Command;

use nix::unistd::{Gid, Uid};

use super::{collect, Request, StartError};
use crate::config::{Model, Slot};
use crate::msg::{exit, strerror};

/// What to exec, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OneOff {
    pub argv: Vec<OsString>,
    /// Set over the inherited environment, in this order (a later one wins).
    pub vars: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    /// Dropped to when run as root (`None`, `root`: no drop).
    pub user: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum OneOffError {
    #[error("nothing to run")]
    NothingToRun,
    #[error("unable to drop privileges: unknown user {0}")]
    UnknownUser(String),
    #[error("unable to drop privileges: unable to read {}: {}", crate::passwd::GROUP, strerror(.0))]
    Groups(io::Error),
    #[error("unable to drop privileges to {user}: {}", strerror(&io::Error::from(*.source)))]
    Drop { user: String, source: nix::Error },
    #[error("unable to chdir to {}: {}", .dir.display(), strerror(.source))]
    Chdir { dir: PathBuf, source: io::Error },
    #[error("unable to exec {}: {}", crate::msg::os(.prog), strerror(.source))]
    Exec { prog: OsString, source: io::Error },
}

impl OneOffError {
    /// 127 not found, 126 not executable, 100 nothing to run, else 111.
    pub fn exit_code(&self) -> u8 {
        match self {
            OneOffError::NothingToRun => exit::USAGE,
            OneOffError::Exec { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                exit::NOT_FOUND
            }
            OneOffError::Exec { .. } => exit::CANNOT_EXECUTE,
            _ => exit::SYSTEM,
        }
    }
}

/// `argv` as `slot` would run it. Env files and secrets are read now (as
/// the caller, before any drop, as the run script does).
pub fn as_slot(model: &Model, slot: &Slot, argv: Vec<OsString>) -> Result<OneOff, StartError> {
    let req = Request {
        slot: slot.name.clone(),
        sentinel: model.sentinel_env.clone(),
        env_files: slot.env_files.iter().map(PathBuf::from).collect(),
        secrets: (slot.secrets.iter())
            .map(|(k, v)| (k.clone(), PathBuf::from(v)))
            .collect(),
        cwd: slot.cwd.as_ref().map(PathBuf::from),
        argv: argv.clone(),
    };
    let mut vars: Vec<(OsString, OsString)> = (slot.env.iter())
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    vars.extend(collect(&req)?);
    Ok(OneOff {
        argv,
        vars,
        cwd: req.cwd,
        user: slot.run_as().map(String::from),
    })
}

/// Replaces this process with the command: the container's variables
/// added where this process has none (under s6-overlay the CMD's
/// environment is stripped, as `with-contenv` restores it), privileges
/// dropped when root (HOME, USER and LOGNAME then the user's, unless the
/// slot sets them), then the one-off's variables. Returns only on failure.
pub fn exec(one: &OneOff, container_env: &BTreeMap<String, String>) -> OneOffError {
    let Some((prog, rest)) = one.argv.split_first() else {
        return OneOffError::NothingToRun;
    };
    let mut cmd = Command::new(prog);
    cmd.args(rest);
    for (k, v) in container_env {
        if std::env::var_os(k).is_none() {
            cmd.env(k, v);
        }
    }
    // Before the drop, as the run script enters it.
    if let Some(dir) = &one.cwd {
        if let Err(source) = std::env::set_current_dir(dir) {
            return OneOffError::Chdir {
                dir: dir.clone(),
                source,
            };
        }
    }
    if let Some(user) = (one.user.as_deref()).filter(|u| *u != "root" && Uid::effective().is_root())
    {
        if let Err(e) = drop_to(&mut cmd, user) {
            return e;
        }
    }
    cmd.envs(one.vars.iter().map(|(k, v)| (k, v)));
    OneOffError::Exec {
        prog: prog.clone(),
        source: cmd.exec(),
    }
}

/// Drops privileges in this process, right before the exec (callers are
/// single-threaded here, so there is nothing to race). `uid:gid` needs no
/// passwd entry, as with `s6-setuidgid`.
fn drop_to(cmd: &mut Command, user: &str) -> Result<(), OneOffError> {
    let unknown = |_| OneOffError::UnknownUser(user.to_string());
    let (uid, gid, groups) = match crate::passwd::lookup(user).map_err(unknown)? {
        crate::passwd::User::Ids(uid, gid) => (uid, gid, vec![gid]),
        crate::passwd::User::Named(pw) => {
            // From /etc/group, not initgroups(3): see crate::passwd.
            let groups = crate::passwd::groups(user, pw.gid).map_err(OneOffError::Groups)?;
            cmd.env("HOME", &pw.home)
                .env("USER", user)
                .env("LOGNAME", user);
            (pw.uid, pw.gid, groups)
        }
    };
    let groups: Vec<Gid> = groups.into_iter().map(Gid::from_raw).collect();
    nix::unistd::setgroups(&groups)
        .and_then(|()| nix::unistd::setgid(Gid::from_raw(gid)))
        .and_then(|()| nix::unistd::setuid(Uid::from_raw(uid)))
        .map_err(|source| OneOffError::Drop {
            user: user.to_string(),
            source,
        })
}
