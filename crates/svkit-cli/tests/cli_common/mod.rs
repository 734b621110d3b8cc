//! Helpers shared by the svkit-lifeline end-to-end tests.
#![allow(dead_code, unused_imports)]

pub use std::fs;
pub use std::os::unix::fs::PermissionsExt;
pub use std::os::unix::process::CommandExt;
pub use std::path::Path;
pub use std::process::{Child, Command, Output, Stdio};
pub use std::time::Duration;

use crate::common::*;

pub fn bin() -> std::path::PathBuf {
    svkit_testkit::tool("svkit-lifeline")
}
pub const LONG: Duration = Duration::from_secs(10);
pub const ONE_SECOND: Duration = Duration::from_secs(1);

/// Starts lifeline in the background with `opts -- server args`.
pub fn lifeline(opts: &[String], server: &[String], args: &[String]) -> Child {
    Command::new(bin())
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn lifeline_output(opts: &[String], server: &[String], args: &[String]) -> Output {
    Command::new(bin())
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn state_pid(path: &Path) -> i64 {
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    v["pid"].as_i64().unwrap()
}

/// A gateway-like parent that starts lifeline holding its stdin pipe
/// (`pipe`) or giving it /dev/null (`null`).
pub const GATEWAY_PY: &str = r#"
import subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE if sys.argv[1] == "pipe" else subprocess.DEVNULL)
p.wait()
"#;

pub fn gateway(mode: &str, opts: &[String], server: &[String], args: &[String]) -> Child {
    Command::new(python())
        .arg("-c")
        .arg(GATEWAY_PY)
        .arg(mode)
        .arg(bin())
        .args(opts)
        .arg("--")
        .args(server)
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

pub fn lifeline_pid_of(child_pid: i32) -> i32 {
    let st = fs::read_to_string(format!("/proc/{child_pid}/stat")).unwrap();
    st[st.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

pub fn assert_refused(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.starts_with("svkit-lifeline: fatal: "), "{err}");
    assert!(err.contains(needle), "want {needle:?} in {err}");
}

pub trait TermWait {
    fn wait_with_output_after_term(self) -> (i32, String);
}

impl TermWait for Child {
    fn wait_with_output_after_term(self) -> (i32, String) {
        kill(self.id() as i32, 15);
        let o = self.wait_with_output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}
