//! `docker run [-e ...] IMAGE CMD...` of the demo image in the sandbox:
//! the shipped rootfs, the demo user, a data volume, extra rootfs layers
//! over them (a later one wins), and `svkit-wrap --` as the entrypoint.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use svkit_testkit::Sandbox;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn start(data: &Path, env: &[&str], cmd: &[&str], extra_rootfs: &[&Path]) -> Sandbox {
    let ws = workspace();
    let mut args: Vec<String> = vec![
        "--rootfs".into(),
        ws.join("rootfs").display().to_string(),
        "--rootfs".into(),
        ws.join("tests/fixtures/sandbox-user").display().to_string(),
        "--volume".into(),
        format!("{}:/data", data.display()),
    ];
    for r in extra_rootfs {
        args.push("--rootfs".into());
        args.push(r.display().to_string());
    }
    for e in env {
        args.push("--env".into());
        args.push(e.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut full = vec!["svkit-wrap", "--"];
    full.extend_from_slice(cmd);
    Sandbox::start(&args, &full)
}
