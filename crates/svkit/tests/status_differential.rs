//! Native status against `s6-svstat -o` on the same live services, in the
//! sandbox under real s6-svscan, for every state s6 can produce.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svstat;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};
use svkit::s6::status;
use svkit::slot::health::kept_down;
use svkit_testkit::{poll, sandbox_or_skip, stdout, svstat, Sandbox};
use svstat::{svstat_fields, SvstatFlavor, SVSTAT_FIELDS};

/// (name, run script, extra files, how to bring it into its state)
struct Case {
    name: &'static str,
    run: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// s6-svc options applied once the service is supervised.
    svc: &'static [&'static str],
    /// Shell condition on `s6-svstat -o ...` output ($1..) that says the
    /// state has been reached.
    reached: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "running",
        run: "exec sleep 1000",
        files: &[],
        svc: &[],
        reached: "[ $1 = true ]",
    },
    Case {
        name: "downed",
        run: "exec sleep 1000",
        files: &[],
        svc: &["-d"],
        reached: "[ $1 = false ] && [ $8 = SIGTERM ]",
    },
    Case {
        name: "never",
        run: "exec sleep 1000",
        files: &[("down", "")],
        svc: &[],
        reached: "[ $1 = false ]",
    },
    Case {
        name: "exited",
        run: "exit 3",
        files: &[("down", "")],
        svc: &["-o"],
        reached: "[ $7 = 3 ]",
    },
    Case {
        name: "killed",
        run: "exec sleep 1000",
        files: &[("down", "")],
        svc: &["-o", "-k"],
        reached: "[ $8 = SIGKILL ]",
    },
    Case {
        name: "paused",
        run: "exec sleep 1000",
        files: &[],
        svc: &["-p"],
        reached: "[ $5 = true ]",
    },
    Case {
        name: "ready",
        run: "echo >&3; exec sleep 1000",
        files: &[("notification-fd", "3\n")],
        svc: &[],
        reached: "[ $4 = true ]",
    },
    Case {
        name: "permafail",
        run: "exit 1",
        files: &[("finish", "#!/bin/sh\nexit 125\n")],
        svc: &[],
        reached: "[ $2 = false ] && [ $7 = 1 ]",
    },
    Case {
        name: "flapping",
        run: "exit 2",
        files: &[],
        svc: &[],
        reached: "[ $7 = 2 ]",
    },
];

/// The `s6-svstat` format rule of the s6 that runs in the sandbox:
/// s6-overlay's, named by its `/package/admin/s6` link (`s6-2.15.0.0`).
fn flavor(sbx: &Sandbox) -> SvstatFlavor {
    let out = sbx.exec(&["s6-linkname", "-f", "/package/admin/s6"]);
    let v = stdout(&out);
    let nums: Vec<u32> = v
        .trim()
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect();
    assert!(nums.len() >= 3, "no s6 version in {v:?}");
    if nums.as_slice() >= [2, 13, 2].as_slice() {
        SvstatFlavor::Since2_13_2
    } else {
        SvstatFlavor::Before2_13_2
    }
}

fn setup(sbx: &Sandbox) {
    let mut script = String::from("set -e\n");
    for c in CASES {
        let d = format!("/run/service/{}", c.name);
        script.push_str(&format!(
            "mkdir -p {d}\nprintf '#!/bin/sh\\n%s\\n' '{}' > {d}/run\nchmod 755 {d}/run\n",
            c.run
        ));
        for (f, body) in c.files {
            script.push_str(&format!(
                "printf '{}' > {d}/{f}\n",
                body.replace('\n', "\\n")
            ));
            if *f == "finish" {
                script.push_str(&format!("chmod 755 {d}/finish\n"));
            }
        }
    }
    script.push_str("s6-svscanctl -a /run/service\n");
    let o = sbx.sh(&script);
    assert!(
        o.status.success(),
        "setup: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for c in CASES {
        let d = format!("/run/service/{}", c.name);
        poll(
            &format!("{} supervised", c.name),
            Duration::from_secs(10),
            || {
                sbx.sh(&format!("s6-svok {d}"))
                    .status
                    .success()
                    .then_some(())
            },
        );
        for opt in c.svc {
            let o = sbx.sh(&format!("s6-svc {opt} {d}"));
            assert!(o.status.success(), "s6-svc {opt} {d}");
        }
    }
}

#[test]
fn native_status_matches_s6_svstat_in_every_state() {
    if !sandbox_or_skip("native_status_matches_s6_svstat_in_every_state") {
        return;
    }
    let sbx = Sandbox::start(&[], &["sleep", "100000"]);
    setup(&sbx);
    let flavor = flavor(&sbx);
    let root: PathBuf = sbx.root();
    for c in CASES {
        let dir = format!("/run/service/{}", c.name);
        poll(
            &format!("{} in its state", c.name),
            Duration::from_secs(20),
            || {
                let o = sbx.sh(&format!(
                    "set -- $(s6-svstat -o {} {dir}); {}",
                    SVSTAT_FIELDS.join(","),
                    c.reached
                ));
                o.status.success().then_some(())
            },
        );
        let native_dir = root.join(dir.trim_start_matches('/'));
        // A flapping service changes under us: compare only when the status
        // bytes were the same before and after s6-svstat looked.
        let (theirs, native, now) = poll(
            &format!("{} stable", c.name),
            Duration::from_secs(20),
            || {
                let before = std::fs::read(native_dir.join("supervise/status")).ok()?;
                let now = SystemTime::now();
                let theirs = svstat(&sbx, &dir, &SVSTAT_FIELDS.join(","));
                let native = status::read_slot(&native_dir).ok()?;
                let after = std::fs::read(native_dir.join("supervise/status")).ok()?;
                (before == after).then_some((theirs, native, now))
            },
        );
        compare(c.name, &theirs, &svstat_fields(&native, now, flavor));
        check_typed(c.name, &native);
    }
    sbx.stop();
}

fn compare(name: &str, theirs: &str, ours: &[(&'static str, String)]) {
    let theirs: Vec<&str> = theirs.split_whitespace().collect();
    assert_eq!(
        theirs.len(),
        ours.len(),
        "{name}: s6-svstat printed {theirs:?}"
    );
    for ((field, mine), their) in ours.iter().zip(&theirs) {
        if *field == "updownfor" || *field == "readyfor" {
            let (a, b): (i64, i64) = (mine.parse().unwrap_or(-99), their.parse().unwrap_or(-1));
            assert!(
                (a - b).abs() <= 1,
                "{name}.{field}: native {mine}, s6-svstat {their}"
            );
        } else {
            assert_eq!(
                mine, their,
                "{name}.{field}: native {mine}, s6-svstat {their}"
            );
        }
    }
}

/// The typed view agrees with what each state means.
fn check_typed(name: &str, st: &status::Status) {
    use status::LastExit;
    let ok = match name {
        "running" => st.up && st.want_up && st.pid.is_some(),
        "downed" => !st.up && !st.want_up && st.last_exit == LastExit::Signaled(15),
        "never" => !st.up && !st.normally_up && st.never_started,
        "exited" => !st.up && st.last_exit == LastExit::Exited(3),
        "killed" => !st.up && st.last_exit == LastExit::Signaled(9),
        "paused" => st.up && st.paused,
        "ready" => st.up && st.ready,
        "permafail" => !st.up && !st.want_up && st.normally_up && kept_down(&st.raw),
        "flapping" => st.want_up && st.deaths >= 1,
        _ => false,
    };
    assert!(ok, "{name}: typed status does not fit: {st:?}");
}
