//! The records `finish` reads are its own to clear, on the real /init: a
//! permanent failure's `.svkit-end` goes at the next death (status and
//! waits must never read an earlier run's end), and the mark of a death
//! svctl asked for goes once that death was judged (a later crash of
//! another run is a crash). And a stop, even by s6's own `s6-svc -d`,
//! is never a crash to count and wait after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::time::Duration;
use svkit_testkit::{poll, sandbox_or_skip, Rootfs, Sandbox};

const CONFIG: &str = r#"{
  "user": "nobody",
  "slots": [
    { "name": "again", "autostart": "always",
      "command": ["sh", "-c", "if [ -e /tmp/second ]; then sleep 0.3; exit 1; fi; exit 78"] },
    { "name": "steady", "autostart": "always", "command": ["sleep", "100000"] },
    { "name": "crashy", "autostart": "always",
      "command": ["sh", "-c", "n=$(cat /tmp/crashy.n 2>/dev/null || echo 0); n=$((n + 1)); echo $n > /tmp/crashy.n; [ $n -ge 4 ] && exec sleep 100000; exit 1"] }
  ]
}"#;

#[test]
fn finish_clears_the_records_of_an_earlier_death() {
    if !sandbox_or_skip("finish_clears_the_records_of_an_earlier_death") {
        return;
    }
    let rootfs = Rootfs::with_svkit(CONFIG);
    let path = rootfs.path().display().to_string();
    let sbx = Sandbox::start(&["--rootfs", &path], &["sleep", "100000"]);
    let slot = |s: &str| sbx.root().join("run/service").join(s);

    // A permanent failure leaves its reason...
    let end = slot("again").join(".svkit-end");
    poll("again's permanent failure", Duration::from_secs(15), || {
        std::fs::read_to_string(&end)
            .ok()
            .filter(|t| t.contains("exited 78"))
    });
    // ... until its next run dies: a crash, judged afresh.
    let o = sbx.sh("touch /tmp/second && svctl start again");
    assert!(o.status.success(), "{o:?}");
    poll("the earlier end cleared", Duration::from_secs(15), || {
        (!end.exists()).then_some(())
    });

    // The mark of a restart svctl asked for goes with the death it marked.
    let o = sbx.sh("svctl restart --wait --timeout 10000 steady");
    assert!(o.status.success(), "{o:?}");
    let supervise = slot("steady").join("supervise");
    poll(
        "no svkit-request mark left",
        Duration::from_secs(10),
        || {
            let left = std::fs::read_dir(&supervise).unwrap().flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("svkit-request.")
            });
            (!left).then_some(())
        },
    );

    // Three crashes (the backoff then waits 4 s after a fourth death),
    // then a run that stays up: stopped with s6's own tool, it is down at
    // once, its finish counting nothing and sleeping no backoff.
    let count = sbx.root().join("tmp/crashy.n");
    poll("crashy's fourth run up", Duration::from_secs(30), || {
        let n = std::fs::read_to_string(&count).unwrap_or_default();
        let up = sbx.sh("s6-svstat -o up /run/service/crashy");
        (n.trim() == "4" && String::from_utf8_lossy(&up.stdout).trim() == "true").then_some(())
    });
    let o = sbx.sh("s6-svc -d /run/service/crashy && svctl wait down --timeout 2000 crashy");
    assert!(o.status.success(), "a stop waited for a backoff: {o:?}");
    sbx.stop();
}
