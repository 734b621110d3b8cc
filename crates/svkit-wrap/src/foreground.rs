//! The foreground path: the wrapped command replaces us, with the
//! container environment restored and privileges dropped to the image's user.

use nix::unistd::{Gid, Uid};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;
use svkit::msg::{self, exit, strerror};

pub fn on_path(name: &std::ffi::OsStr) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| is_exec(&d.join(name))))
        .unwrap_or(false)
}

fn is_exec(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Execs `argv`. Under s6-overlay the CMD gets a stripped env: the
/// container's variables come back (ours win), as `with-contenv` does.
pub fn exec(
    argv: &[std::ffi::OsString],
    user: Option<&str>,
    container_env: &BTreeMap<String, String>,
) -> ! {
    let Some((prog, rest)) = argv.split_first() else {
        msg::die(exit::USAGE, "nothing to run");
    };
    let mut cmd = Command::new(prog);
    cmd.args(rest);
    for (k, v) in container_env {
        if std::env::var_os(k).is_none() {
            cmd.env(k, v);
        }
    }
    if let Some(user) = user.filter(|u| *u != "root" && Uid::effective().is_root()) {
        drop_to(&mut cmd, user);
    }
    let err = cmd.exec();
    let code = if err.kind() == std::io::ErrorKind::NotFound {
        exit::NOT_FOUND
    } else {
        exit::CANNOT_EXECUTE
    };
    msg::die(
        code,
        format_args!("unable to exec {}: {}", msg::os(prog), strerror(&err)),
    )
}

/// Drops privileges in this process, right before the exec: the wrapper
/// is single-threaded, so there is nothing to race.
fn drop_to(cmd: &mut Command, user: &str) {
    let pw = match svkit::passwd::user(user) {
        Ok(Some(pw)) => pw,
        _ => msg::die(
            exit::SYSTEM,
            format_args!("unable to drop privileges: unknown user {user}"),
        ),
    };
    let (uid, gid) = (Uid::from_raw(pw.uid), Gid::from_raw(pw.gid));
    // From /etc/group, not initgroups(3): see svkit::passwd.
    let groups: Vec<Gid> = match svkit::passwd::groups(user, pw.gid) {
        Ok(g) => g.into_iter().map(Gid::from_raw).collect(),
        Err(e) => msg::die(
            exit::SYSTEM,
            format_args!(
                "unable to drop privileges: unable to read {}: {}",
                svkit::passwd::GROUP,
                strerror(&e)
            ),
        ),
    };
    let dropped = nix::unistd::setgroups(&groups)
        .and_then(|()| nix::unistd::setgid(gid))
        .and_then(|()| nix::unistd::setuid(uid));
    if let Err(e) = dropped {
        msg::die(
            exit::SYSTEM,
            format_args!(
                "unable to drop privileges to {user}: {}",
                strerror(&e.into())
            ),
        );
    }
    cmd.env("HOME", &pw.home)
        .env("USER", user)
        .env("LOGNAME", user);
}
