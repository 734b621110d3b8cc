//! The nastiest argv and env values, rendered by svkit-reconcile and run by
//! the real s6-supervise in the sandbox, reach the process byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::fs;
use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, Rootfs, Sandbox};

const NASTY: &[&str] = &[
    "",
    " ",
    "'",
    "\"",
    "it's \"quoted\"",
    "$HOME",
    "$(touch /tmp/pwned)",
    "`touch /tmp/pwned`",
    "back\\slash\\",
    "new\nline",
    "-n",
    "--no-supervise",
    "tab\there",
    "⚕ unicode ☃",
    "*",
    "a;b&&c|d>e",
    "${IFS}",
    "!",
    "#not a comment",
    "~",
];

#[test]
fn nasty_argv_and_env_reach_the_supervised_process_unchanged() {
    if !sandbox_or_skip("nasty_argv_and_env_reach_the_supervised_process_unchanged") {
        return;
    }
    let mut command = vec![
        "sh".to_string(),
        "-c".to_string(),
        "printf '%s\\0' \"$NASTY_A\" \"$NASTY_B\" > /run/env; \
         for a; do printf '%s\\0' \"$a\"; done > /run/argv.tmp && mv /run/argv.tmp /run/argv; \
         exec sleep 100000"
            .to_string(),
        "dump".to_string(),
    ];
    command.extend(NASTY.iter().map(|s| s.to_string()));
    let config = serde_json::json!({
        "slots": [ {
            "name": "nasty",
            "command": command,
            "env": { "NASTY_A": "$(x) `y` 'z' \"w\" \\ \n end", "NASTY_B": "" }
        } ]
    });
    let rootfs = Rootfs::with_svkit(&config.to_string());
    let sbx = Sandbox::start(&["--rootfs", &rootfs.arg()], &["sleep", "100000"]);
    let argv_file = sbx.root().join("run/argv");
    let got = poll("argv dumped", Duration::from_secs(10), || {
        fs::read(&argv_file).ok()
    });
    let want: Vec<u8> = NASTY.iter().flat_map(|s| s.bytes().chain([0])).collect();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(got, want);
    let env = fs::read(sbx.root().join("run/env")).expect("env");
    assert_eq!(env, b"$(x) `y` 'z' \"w\" \\ \n end\0\0".to_vec());
    assert!(
        !sbx.root().join("tmp/pwned").exists(),
        "a value was executed"
    );
    sbx.stop();
}
