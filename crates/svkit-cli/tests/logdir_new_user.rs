//! A slot's user changes between image versions, on the same data volume:
//! the log dir and the files s6-log keeps in it (`lock`, `current`,
//! `state`, ...) are the old user's. On the real /init the new logger must
//! run as the new user and write the slot's lines to `current`, and the
//! slot must be healthy.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;
use svctl_common::*;
use svkit_testkit::TEST_CONFIG;

fn config(user: &str, tick: &str) -> String {
    format!(
        r#"{{ "state_dir": "/data/.svkit",
  "slots": [ {{ "name": "app", "user": "{user}", "autostart": "always",
    "command": ["sh", "-c", "while :; do echo {tick}; sleep 0.1; done"],
    "log": {{ "dir": "/data/logs/app", "stdout": false }} }} ] }}"#
    )
}

fn current_has(dir: &Path, needle: &str) -> bool {
    fs::read_to_string(dir.join("current")).is_ok_and(|t| t.contains(needle))
}

#[test]
fn a_new_user_takes_over_the_old_users_log_files() {
    if !sandbox_or_skip("a_new_user_takes_over_the_old_users_log_files") {
        return;
    }
    // Version 1 of the image: the slot runs as 4242.
    let fx = Fixture::new(&config("4242:4243", "tick-old"));
    let dir = fx.data.path().join("logs/app");
    let sbx = fx.boot();
    poll("old lines in current", Duration::from_secs(30), || {
        current_has(&dir, "tick-old").then_some(())
    });
    assert_eq!(sbx.stop(), 0);
    for f in ["lock", "current", "state"] {
        let m = fs::metadata(dir.join(f)).expect(f);
        assert_eq!(m.uid(), 4242, "{f} is the old user's");
    }

    // Version 2: the same slot runs as nobody, on the same volume.
    fx.rootfs.file(TEST_CONFIG, &config("nobody", "tick-new"));
    let sbx = fx.boot();
    poll("new lines in current", Duration::from_secs(30), || {
        current_has(&dir, "tick-new").then_some(())
    });
    assert_eq!(fs::metadata(&dir).expect("dir").uid(), NOBODY);
    for f in ["lock", "current", "state"] {
        let m = fs::metadata(dir.join(f)).expect(f);
        assert_eq!(m.uid(), NOBODY, "{f} is the new user's");
    }
    let o = sbx.exec(&["svctl", "status", "app"]);
    assert_eq!(code(&o), Some(0), "{o:?}\n{}", sbx.logs());
    let rec = sbx.root().join("run/service/app/log/.svkit-log-error");
    assert!(!rec.exists(), "{:?}", fs::read_to_string(&rec));
}
