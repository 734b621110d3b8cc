use super::*;
use std::fs;

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
    let limit = Limit {
        max: 1000,
        source: Source::Pid1 { explicit: false },
    };
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
