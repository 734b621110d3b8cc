//! The memo, in the sandbox under real s6: a no-op apply is proven without
//! rendering, and every kind of input or change it rests on, changed,
//! brings the full apply back (which then does the right thing), after
//! which the memo holds again.

use std::fs;
use std::path::Path;
use std::time::Duration;

use svkit_testkit::{poll, sandbox_or_skip, stdout, stdout_ok, Rootfs, Sandbox};

const CONFIG: &str = r#"{
  "user": "nobody",
  "state_dir": "/data/.svkit",
  "slots": [
    { "name": "gw-{instance}",
      "instances": { "names": ["default"], "from_dir": { "path": "/data/profiles", "require_file": "SOUL.md" } },
      "command": ["sleep", "1000"] },
    { "name": "remember", "command": ["sleep", "1001"], "autostart": "remember" },
    { "name": "dash", "command": ["sleep", "1002"], "autostart": { "if_env": "APP_DASHBOARD" } }
  ]
}"#;

/// What svkit-reconcile says when the memo proved a no-op.
const NOOP: &str = "info: nothing to do";

struct Run {
    out: String,
    err: String,
}

impl Run {
    fn noop(&self) -> bool {
        self.err.contains(NOOP)
    }
}

fn reconcile(sbx: &Sandbox) -> Run {
    let o = sbx.exec(&["svkit-reconcile"]);
    Run {
        out: stdout_ok(&o),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A full apply that did `want`, then the memo again on the next run.
fn full_then_memo(sbx: &Sandbox, what: &str, want: &str) {
    let r = reconcile(sbx);
    assert!(!r.noop(), "{what}: the memo hid it: {}", r.err);
    assert!(r.out.contains(want), "{what}: {}", r.out);
    let r = reconcile(sbx);
    assert!(r.noop(), "{what}: no memo after the full apply: {}", r.err);
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(dir) = p.parent() {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(p, text).expect("write");
}

#[test]
fn a_no_op_is_proven_by_the_memo_and_every_input_change_defeats_it() {
    if !sandbox_or_skip("a_no_op_is_proven_by_the_memo_and_every_input_change_defeats_it") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let data = tempfile::tempdir().expect("tempdir");
    write(data.path(), "profiles/alice/SOUL.md", "");
    let sbx = Sandbox::boot_with_data(rootfs.path(), data.path());
    poll("gw-alice made", Duration::from_secs(10), || {
        sbx.root()
            .join("run/service/gw-alice")
            .is_dir()
            .then_some(())
    });

    // The boot apply left a memo: the same apply again renders nothing.
    let r = reconcile(&sbx);
    assert!(r.noop(), "{}", r.err);
    for slot in ["gw-default", "gw-alice", "remember", "dash"] {
        let state = if slot == "remember" || slot == "dash" {
            "down"
        } else {
            "up"
        };
        let line = format!("reconcile: slot={slot} action=unchanged state={state}");
        assert!(r.out.contains(&line), "{line} in {}", r.out);
    }

    // A `down` file counts by its presence alone, as s6 reads it: written
    // into, it is no change (to the memo or to a plan); removed, it is one.
    let o = sbx.sh("echo whatever > /run/service/dash/down && chmod 600 /run/service/dash/down");
    assert!(o.status.success());
    assert!(reconcile(&sbx).noop(), "content of down");
    let o = sbx.exec(&["svctl", "plan"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = sbx.sh("rm /run/service/dash/down");
    assert!(o.status.success());
    full_then_memo(
        &sbx,
        "down removed",
        "slot=dash action=update state=down files=down",
    );

    // The config itself.
    let edited = CONFIG.replace(r#"["sleep", "1002"]"#, r#"["sleep", "2002"]"#);
    write(&sbx.root(), "etc/svkit/10-test.json", &edited);
    full_then_memo(&sbx, "config edit", "slot=dash action=update");

    // A listed instance dir: a new profile.
    write(data.path(), "profiles/bob/SOUL.md", "");
    full_then_memo(&sbx, "new profile", "slot=gw-bob action=create");

    // The container env an if_env slot reads.
    write(
        &sbx.root(),
        "run/s6/container_environment/APP_DASHBOARD",
        "1",
    );
    full_then_memo(&sbx, "if_env variable", "slot=dash action=update state=up");

    // A remembered desired state (svctl start persists it).
    let o = sbx.exec(&["svctl", "start", "remember"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    full_then_memo(
        &sbx,
        "remembered state",
        "slot=remember action=update state=up",
    );

    // A registered instance.
    let o = sbx.exec(&["svctl", "register", "carol"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = reconcile(&sbx);
    assert!(r.noop(), "register applied and left a memo: {}", r.err);

    // A file edited in place behind svkit's back: put right.
    let o = sbx.sh("echo '# edited' >> /run/service/gw-alice/run");
    assert!(o.status.success());
    full_then_memo(
        &sbx,
        "hand edit",
        "slot=gw-alice action=update state=up files=run",
    );

    // A listed instance that lost its required file.
    fs::remove_file(data.path().join("profiles/bob/SOUL.md")).expect("rm");
    full_then_memo(&sbx, "required file gone", "slot=gw-bob action=delete");

    // A temp dir an interrupted apply left behind.
    let o = sbx.sh("mkdir /run/service/.svkit-tmp-gw-zzz");
    assert!(o.status.success());
    let r = reconcile(&sbx);
    assert!(!r.noop(), "leftover: the memo hid it: {}", r.err);
    assert!(r.err.contains("swept .svkit-tmp-gw-zzz"), "{}", r.err);
    assert!(reconcile(&sbx).noop(), "leftover: no memo after the sweep");

    // A slot svkit made that the config no longer declares.
    let o = sbx.sh(
        "mkdir /run/service/gw-old && cp /run/service/gw-alice/run /run/service/gw-old/ \
         && cp /run/service/gw-alice/.svkit /run/service/gw-old/",
    );
    assert!(o.status.success());
    full_then_memo(&sbx, "stale slot", "slot=gw-old action=delete");

    // A foreign slot does not matter.
    let o = sbx.sh("mkdir /run/service/foreign && printf '#!/bin/sh\\nexec sleep 9\\n' > /run/service/foreign/run");
    assert!(o.status.success());
    assert!(reconcile(&sbx).noop());

    // A memo that parses but says what no apply wrote is not believed:
    // each is a full apply that finds nothing to change, then a memo again.
    let memo_path = sbx.root().join("run/service/.svkit/memo");
    let good: serde_json::Value =
        serde_json::from_slice(&fs::read(&memo_path).expect("memo")).expect("json");
    let forged = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut m = good.clone();
        edit(&mut m);
        m.to_string()
    };
    for (what, bad) in [
        ("a later version", forged(&|m| m["svkit_memo"] = 2.into())),
        (
            "a shape out of range",
            forged(&|m| m["slots"][0]["shape"] = 99.into()),
        ),
        (
            "a slot outside the scandir",
            forged(&|m| m["slots"][0]["name"] = "../../etc".into()),
        ),
        (
            "a slot too few",
            forged(&|m| {
                if let Some(slots) = m["slots"].as_array_mut() {
                    slots.pop();
                }
            }),
        ),
        (
            "stamps not hex",
            forged(&|m| m["slots"][0]["stamps"] = "zz".into()),
        ),
        (
            "another inputs digest",
            forged(&|m| m["inputs"] = "0".into()),
        ),
    ] {
        write(&sbx.root(), "run/service/.svkit/memo", &bad);
        let r = reconcile(&sbx);
        assert!(!r.noop(), "{what}: believed: {}", r.err);
        assert!(
            !r.out.contains("action=create") && !r.out.contains("action=update"),
            "{what}: {}",
            r.out
        );
        assert!(reconcile(&sbx).noop(), "{what}: no memo after");
    }

    // A corrupt memo is ignored, then written anew.
    write(&sbx.root(), "run/service/.svkit/memo", "{ not json");
    let r = reconcile(&sbx);
    assert!(!r.noop(), "{}", r.err);
    assert!(
        !r.out.contains("action=create") && !r.out.contains("action=update"),
        "{}",
        r.out
    );
    assert!(reconcile(&sbx).noop());
    assert_eq!(
        stdout(&sbx.sh("stat -c %a /run/service/.svkit/memo")).trim(),
        "600"
    );
    sbx.stop();
}
