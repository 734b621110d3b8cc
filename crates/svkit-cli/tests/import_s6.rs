//! Imported configs on the real /init: an s6-rc source tree whose longrun
//! depends on a oneshot starts them in order, and an imported Procfile
//! boots with every slot up. The config is what the importers make,
//! written as `{"slots": [...]}`; the tree and the Procfile lie in the
//! image at the path they were imported from, as they must.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::path::Path;
use std::time::Duration;

use svctl_common::*;
use svkit_import::{procfile, s6tree, Imported};

/// The config of `imported`, as one layer.
fn config(imported: &Imported) -> String {
    serde_json::to_string_pretty(&serde_json::json!({ "slots": imported.slots })).unwrap()
}

/// Copies the files of `src` (host) into `rootfs` at the same absolute
/// path, modes kept: where the imported commands name them.
fn copy_into(rootfs: &Rootfs, src: &Path) {
    let real = std::fs::canonicalize(src).unwrap();
    for entry in walk(&real) {
        let rel = entry
            .strip_prefix("/")
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let text = std::fs::read_to_string(&entry).unwrap();
        let exec = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&entry).unwrap().permissions(),
        ) & 0o111
            != 0;
        if exec {
            rootfs.script(&rel, &text);
        } else {
            rootfs.file(&rel, &text);
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn write(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Polls until `svctl status` exits 0 (every slot healthy).
fn wait_all_healthy(sbx: &Sandbox) {
    poll("svctl status to exit 0", Duration::from_secs(20), || {
        (sbx.exec(&["svctl", "status"]).status.code() == Some(0)).then_some(())
    });
}

#[test]
fn imported_s6_rc_tree_runs_the_oneshot_before_its_dependent() {
    if !sandbox_or_skip("imported_s6_rc_tree_runs_the_oneshot_before_its_dependent") {
        return;
    }
    let tree = tempfile::tempdir().unwrap();
    let t = tree.path();
    write(&t.join("user/type"), "bundle\n", 0o644);
    write(&t.join("user/contents.d/web"), "", 0o644);
    // The oneshot takes a while, so a dependent that did not wait for it
    // would find no file.
    write(&t.join("prepare/type"), "oneshot\n", 0o644);
    write(&t.join("prepare/dependencies.d/base"), "", 0o644);
    write(
        &t.join("prepare/up"),
        "/bin/sh -c \"sleep 1; echo prepared > /run/prepared\"\n",
        0o644,
    );
    write(&t.join("web/type"), "longrun\n", 0o644);
    write(&t.join("web/dependencies.d/prepare"), "", 0o644);
    // s6-rc runs `run` whatever its mode: so must the slot.
    write(
        &t.join("web/run"),
        "#!/bin/sh\ncat /run/prepared > /run/web-saw 2>&1 || echo nothing > /run/web-saw\nexec sleep 1000\n",
        0o644,
    );
    let imported = s6tree::import(t).unwrap();
    let fx = Fixture::new(&config(&imported));
    copy_into(&fx.rootfs, t);
    let sbx = fx.boot();
    wait_all_healthy(&sbx);
    let saw = poll("web to record what it saw", Duration::from_secs(10), || {
        let o = sbx.sh("cat /run/web-saw");
        o.status.success().then(|| stdout(&o))
    });
    assert_eq!(
        saw.trim(),
        "prepared",
        "web started before prepare completed"
    );
    let (code, status) = status_json(&sbx, &[]);
    assert_eq!(code, Some(0), "{status:#}");
    sbx.stop();
}

#[test]
fn imported_procfile_boots_with_every_slot_up() {
    if !sandbox_or_skip("imported_procfile_boots_with_every_slot_up") {
        return;
    }
    let app = tempfile::tempdir().unwrap();
    write(
        &app.path().join("Procfile"),
        "# the app\r\n\
         release: sh -c 'echo released > /run/released'\r\n\
         web: exec sleep $PORT\r\n\
         worker: sleep 1002 && true\r\n\
         clock: sleep 1003\r\n",
        0o644,
    );
    let imported = procfile::import(&app.path().join("Procfile")).unwrap();
    let fx = Fixture::new(&config(&imported));
    copy_into(&fx.rootfs, app.path());
    let rootfs = fx.rootfs.arg();
    let data = format!("{}:/data", fx.data.path().display());
    // The platform's PORT, which `$PORT` in the command reads at run time.
    let sbx = Sandbox::start(
        &["--rootfs", &rootfs, "--volume", &data, "--env", "PORT=1001"],
        &["sleep", "100000"],
    );
    wait_supervised(&sbx, &["release", "web", "worker", "clock"]);
    wait_all_healthy(&sbx);
    for s in ["web", "worker", "clock"] {
        assert_eq!(svstat(&sbx, s, "up"), "true", "{s}");
    }
    expect_code(&sbx.sh("test -f /run/released"), 0);
    let pid = svstat(&sbx, "web", "pid");
    let argv = stdout(&sbx.sh(&format!("tr '\\0' ' ' < /proc/{pid}/cmdline")));
    assert_eq!(
        argv.trim(),
        "sleep 1001",
        "web's program, PORT from the container"
    );
    sbx.stop();
}

#[test]
fn imported_services_d_runs_in_place_ready_and_down_as_declared() {
    if !sandbox_or_skip("imported_services_d_runs_in_place_ready_and_down_as_declared") {
        return;
    }
    let tree = tempfile::tempdir().unwrap();
    let t = tree.path();
    // Without the notification fd carried over, fd 3 is not open and it
    // never comes up.
    write(
        &t.join("api/run"),
        "#!/bin/sh\npwd > /run/api-cwd\necho >&3 || exit 1\nexec sleep 1000\n",
        0o755,
    );
    write(&t.join("api/notification-fd"), "3\n", 0o644);
    write(&t.join("tool/run"), "#!/bin/sh\nexec sleep 1001\n", 0o755);
    write(&t.join("tool/down"), "", 0o644);
    let imported = s6tree::import(t).unwrap();
    let fx = Fixture::new(&config(&imported));
    copy_into(&fx.rootfs, t);
    let sbx = fx.boot();
    wait_supervised(&sbx, &["api", "tool"]);
    wait_field(&sbx, "api", "ready", "true");
    wait_all_healthy(&sbx);
    assert_eq!(svstat(&sbx, "tool", "up,wantedup"), "false false");
    // s6 runs a service's run in its own dir: so does the slot.
    let real = std::fs::canonicalize(t).unwrap();
    let cwd = stdout(&sbx.sh("cat /run/api-cwd"));
    assert_eq!(cwd.trim(), real.join("api").display().to_string());
    sbx.stop();
}
