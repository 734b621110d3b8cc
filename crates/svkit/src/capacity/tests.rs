use super::*;
use std::fs;
use std::os::unix::fs::symlink;

fn slots(n: usize, logged: usize) -> Vec<(String, bool)> {
    (0..n).map(|i| (format!("s{i}"), i < logged)).collect()
}

fn pairs(v: &[(String, bool)]) -> Vec<(&str, bool)> {
    v.iter().map(|(n, l)| (n.as_str(), *l)).collect()
}

fn with_overlay(mut need: Need) -> Need {
    need.others.push(Others {
        count: OVERLAY_OWN,
        place: Place::Scandir("/run/service".into()),
    });
    need
}

#[test]
fn a_slot_with_a_logger_counts_two_and_the_limit_itself_fits() {
    let limit = Limit::assumed("test");
    // 498 slots with loggers and s6-overlay's 3: 999 of 1,000.
    let s = slots(498, 498);
    let fit = with_overlay(Need::of_slots(pairs(&s)))
        .check(limit.clone())
        .expect("fits");
    assert_eq!(fit.need.total(), 999);
    // Exactly at the limit: s6-svscan takes its max-th service.
    let s = slots(499, 498);
    let fit = with_overlay(Need::of_slots(pairs(&s))).check(limit.clone());
    assert_eq!(fit.map(|f| f.need.total()), Ok(1000));
    // One more (the 499th logger): refused.
    let s = slots(499, 499);
    let e = with_overlay(Need::of_slots(pairs(&s)))
        .check(limit.clone())
        .expect_err("over");
    assert_eq!(e.need.total(), 1001);
    assert_eq!((e.need.slots, e.need.loggers), (499, 499));
    let s = slots(400, 400);
    assert!(with_overlay(Need::of_slots(pairs(&s))).check(limit).is_ok());
}

#[test]
fn the_refusal_names_every_count_the_limit_and_what_to_do() {
    let s = slots(602, 600);
    let mut need = Need::of_slots(pairs(&s));
    need.others.push(Others {
        count: 2,
        place: Place::Scandir("/run/service".into()),
    });
    need.others.push(Others {
        count: 3,
        place: Place::ServicesD("/etc/services.d".into()),
    });
    let limit = Limit { assumed: None };
    let e = need.check(limit).expect_err("over");
    let text = e.to_string();
    assert!(
        text.starts_with(
            "the config needs 1,207 s6 services (602 slots, 600 loggers, \
             2 others in /run/service, 3 to come from /etc/services.d); \
             s6-svscan here supervises at most 1,000 (its default: no -C in /proc/1/cmdline)"
        ),
        "{text}"
    );
    assert!(
        text.contains("declare fewer slots, or fewer with `log`"),
        "{text}"
    );
    assert!(text.contains("no setting raises the limit"), "{text}");
}

#[test]
fn totals_saturate_instead_of_overflowing() {
    let mut need = Need {
        slots: u32::MAX,
        loggers: u32::MAX,
        others: vec![Others {
            count: u32::MAX,
            place: Place::OverlayAssumed,
        }],
    };
    assert_eq!(need.total(), u32::MAX);
    need.slots = 1;
    assert!(need.check(Limit::assumed("x")).is_err());
}

#[test]
fn thousands_groups_digits() {
    for (n, s) in [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (1204, "1,204"),
        (160_000, "160,000"),
        (u32::MAX, "4,294,967,295"),
    ] {
        assert_eq!(thousands(n), s);
    }
}

#[test]
fn a_live_scandir_counts_foreign_services_but_not_svkits_own() {
    let t = tempfile::tempdir().expect("tempdir");
    let sd = t.path();
    for d in ["s6rc-fdholder", "shutdownd", "old/log", "a/log"] {
        fs::create_dir_all(sd.join(d)).expect("mkdir");
    }
    // `old` is svkit's and no longer declared: apply deletes it.
    fs::write(sd.join("old/.svkit"), "").expect("marker");
    fs::write(sd.join("a/.svkit"), "").expect("marker");
    let s = vec![("a".to_string(), true), ("b".to_string(), false)];
    let need = need_in(sd, pairs(&s)).expect("count");
    assert_eq!((need.slots, need.loggers), (2, 1));
    assert_eq!(
        need.others,
        vec![Others {
            count: 2,
            place: Place::Scandir(sd.to_path_buf()),
        }]
    );
    assert_eq!(need.total(), 5);
    assert!(matches!(
        need_in(&sd.join("missing"), pairs(&s)),
        Err(CapacityError::Io { .. })
    ));
}

#[test]
fn without_s6_overlay_its_own_and_the_default_are_assumed() {
    let t = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(t.path().join("etc/services.d/legacy/log")).expect("mkdir");
    let s = slots(10, 10);
    let fit = check_assumed(t.path(), pairs(&s), "PID 1 is bash").expect("fits");
    assert_eq!(fit.need.total(), 25);
    let text = fit.to_string();
    assert!(
        text.contains("3 of s6-overlay's own, assumed")
            && text.contains("2 to come from")
            && text.contains("at most 1,000 (its default, assumed; PID 1 is bash)"),
        "{text}"
    );
    let s = slots(498, 498);
    assert!(
        check_assumed(t.path(), pairs(&s), "x").is_err(),
        "996 + 3 + 2"
    );
}

// What is in a scandir and a `services.d`, as s6-svscan reads them.

fn mkdirs(base: &Path, rels: &[&str]) {
    for r in rels {
        fs::create_dir_all(base.join(r)).expect("mkdir");
    }
}

#[test]
fn the_scandir_is_read_as_s6_svscan_reads_it() {
    let t = tempfile::tempdir().expect("tempdir");
    let sd = t.path().join("service");
    let elsewhere = t.path().join("elsewhere");
    mkdirs(
        &sd,
        &[
            "plain",
            "logged/log",
            ".hidden/log",
            "mine/log",
            "declared-foreign",
            &"x".repeat(252),
        ],
    );
    mkdirs(&elsewhere, &["linked/log"]);
    fs::write(sd.join("mine/.svkit"), "").expect("marker");
    fs::write(sd.join("a-file"), "").expect("write");
    symlink(elsewhere.join("linked"), sd.join("linked")).expect("ln");
    symlink(t.path().join("dangling"), sd.join("dangling")).expect("ln");
    let declared = BTreeSet::from(["declared-foreign"]);
    let (n, names) = foreign(&sd, &declared).expect("read");
    // plain 1, logged 2, linked 2 (its log/ through the link).
    assert_eq!(n, 5, "{names:?}");
    assert!(names.contains("mine") && names.contains("declared-foreign"));
    assert!(!names.contains(".hidden") && !names.contains("a-file"));
    assert!(foreign(&t.path().join("none"), &declared).is_err());
}

#[test]
fn services_d_counts_what_services_up_has_not_linked_yet() {
    let t = tempfile::tempdir().expect("tempdir");
    mkdirs(
        t.path(),
        &[
            "etc/services.d/nginx/log",
            "etc/services.d/cron",
            "etc/services.d/linked",
            "etc/services.d/.skipped",
            "etc/services.d/gw",
            "etc/cont-profile.d/dev/services.d/one",
        ],
    );
    fs::write(t.path().join("etc/services.d/README"), "").expect("write");
    let dir = services_d(t.path(), None);
    let present = BTreeSet::from(["linked".to_string()]);
    let declared = BTreeSet::from(["gw"]);
    assert_eq!(legacy(&dir, &present, &declared), 3, "nginx 2, cron 1");
    assert_eq!(services_d(t.path(), Some("")), dir);
    let dev = services_d(t.path(), Some("dev"));
    assert_eq!(legacy(&dev, &present, &declared), 1);
    assert_eq!(legacy(&t.path().join("missing"), &present, &declared), 0);
}

// What stops s6-svscan's scan.

#[test]
fn only_what_cannot_be_stated_blocks() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    fs::create_dir_all(d.join("ok/log")).expect("mkdir");
    fs::create_dir(d.join("nolog")).expect("mkdir");
    fs::write(d.join("plain-file"), "").expect("write");
    symlink(d.join("ok"), d.join("linked")).expect("ln");
    symlink("/nonexistent/svkit-test", d.join(".hidden-dangling")).expect("ln");
    assert!(blockers(d).expect("read").is_empty());
    // A log that is not there is no logger, to s6 as here.
    symlink("/nonexistent/svkit-test", d.join("nolog/log")).expect("ln");
    assert!(blockers(d).expect("read").is_empty());
    symlink("/nonexistent/svkit-test", d.join("dangling")).expect("ln");
    fs::remove_file(d.join("nolog/log")).expect("rm");
    symlink("log", d.join("nolog/log")).expect("ln: a loop");
    let b = blockers(d).expect("read");
    let names: Vec<&str> = b.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["dangling", "nolog/log"]);
    assert_eq!(b[0].why.kind(), io::ErrorKind::NotFound);
    assert!(blockers(&d.join("nope")).is_err());
}

#[test]
fn a_blocked_scan_names_every_entry_and_what_to_do() {
    let blockers = vec![
        Blocker {
            name: "gone".into(),
            why: io::Error::from_raw_os_error(nix::libc::ENOENT),
        },
        Blocker {
            name: "a/log".into(),
            why: io::Error::from_raw_os_error(nix::libc::ELOOP),
        },
    ];
    let e = CapacityError::ScanBlocked {
        scandir: "/run/service".into(),
        blockers,
    };
    assert_eq!(
        e.to_string(),
        "s6-svscan cannot stat /run/service/gone (No such file or directory), \
         /run/service/a/log (Too many symbolic links encountered): its scan stops \
         there and starts no new service until it is gone (a dangling symlink?); remove \
         it, then try again"
    );
}
