//! `svkit slot-claim`, the step of every slot's `run` before the program:
//! its arguments are the run script's, so anything else is a usage error;
//! what it cannot do is said and never keeps the slot from starting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_svkit");

fn claim(dir: &std::path::Path, args: &[OsString]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("slot-claim").args(args).current_dir(dir);
    c
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

#[test]
fn anything_but_the_run_scripts_arguments_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let me = std::process::id().to_string();
    let bad: Vec<Vec<OsString>> = vec![
        vec![],
        vec![os("1")],
        vec![os("-5")],
        vec![os("12x")],
        vec![os(&me), os("--own-stdout")],
        vec![os(&me), os("--own-stdout"), os("a"), os("b")],
        vec![os(&me), os("--other"), os("nobody")],
        vec![OsString::from_vec(b"12\xff".to_vec())],
        vec![
            os(&me),
            os("--own-stdout"),
            OsString::from_vec(b"no\xffbody".to_vec()),
        ],
    ];
    for args in bad {
        let o = claim(dir.path(), &args).output().unwrap();
        assert_eq!(o.status.code(), Some(100), "{args:?}: {o:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.starts_with("svkit: fatal: usage: svkit slot-claim PID"),
            "{args:?}: {e}"
        );
        assert!(
            !dir.path().join(".svkit-program").exists(),
            "{args:?}: nothing recorded on bad usage"
        );
    }
}

#[test]
fn an_unknown_user_is_said_and_the_start_goes_on() {
    let me = std::process::id().to_string();
    for (user, why) in [
        ("no-such-user-x", "no user no-such-user-x in /etc/passwd"),
        ("12:x", "x: not a number"),
        (":", ": not a number"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = claim(dir.path(), &[os(&me), os("--own-stdout"), os(user)])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains(&format!("unable to hand its log pipe to {user}: {why}")),
            "{e}"
        );
        let record = std::fs::read_to_string(dir.path().join(".svkit-program")).unwrap();
        assert!(record.starts_with(&format!("{me} ")), "{record}");
    }
}

/// The pipe on its stdout (a slot's, to its logger) becomes the user's:
/// by name, and as the numeric `uid:gid` a config may give. Needs root to give a file
/// away; CI runs as root.
#[test]
fn the_log_pipe_becomes_the_users() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped the_log_pipe_becomes_the_users: giving a pipe away needs root");
        assert!(std::env::var_os("SVKIT_NO_SKIP").is_none(), "must not skip");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let me = std::process::id().to_string();
    for (user, uid, gid) in [("nobody", 65534, 0), ("4321:4322", 4321, 4322)] {
        let (read, write) = nix::unistd::pipe().unwrap();
        let o = claim(dir.path(), &[os(&me), os("--own-stdout"), os(user)])
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{user}: {o:?}");
        assert!(
            o.stderr.is_empty(),
            "{user}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let meta = std::fs::File::from(read).metadata().unwrap();
        assert_eq!(meta.uid(), uid, "{user}");
        assert_eq!(meta.gid(), gid, "{user}: a name leaves the group");
    }
}
