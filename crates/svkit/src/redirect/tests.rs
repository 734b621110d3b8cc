use super::*;
use crate::config::{load_layers, FixedInstances};
use std::path::PathBuf;

fn model() -> Model {
    let json = br#"{
      "default_program": "app",
      "sentinel_env": "APP_SUPERVISED_CHILD",
      "slots": [
        { "name": "gateway-{instance}", "instances": { "names": ["default"] },
          "command": ["app", "gateway", "run"] },
        { "name": "dashboard", "command": ["app", "dashboard"], "autostart": { "if_env": "APP_DASHBOARD" } }
      ],
      "redirects": [
        { "match": ["app", "gateway", "run"], "slot": "gateway-default",
          "opt_out_flag": "--no-supervise", "opt_out_env": "APP_GATEWAY_NO_SUPERVISE",
          "also_start": ["dashboard"] }
      ]
    }"#;
    let files = vec![(PathBuf::from("/etc/svkit/10.json"), json.to_vec())];
    match load_layers(&files, &FixedInstances(vec![])) {
        Ok(v) => v.model,
        Err(e) => panic!("{e}"),
    }
}

fn argv(s: &str) -> Vec<OsString> {
    s.split_whitespace().map(OsString::from).collect()
}

fn s6() -> Facts {
    Facts::default()
}

#[test]
fn routing() {
    let on_path = |p: &OsStr| p == "app" || p == "sh";
    assert_eq!(route(&[], Some("app"), on_path), Ok(argv("app")));
    assert_eq!(route(&[], None, on_path), Err(RouteError::NothingToRun));
    assert_eq!(
        route(&argv("gateway run"), Some("app"), on_path),
        Ok(argv("app gateway run"))
    );
    assert_eq!(
        route(&argv("sh -c x"), Some("app"), on_path),
        Ok(argv("sh -c x"))
    );
    assert_eq!(
        route(&argv("/bin/true"), Some("app"), on_path),
        Ok(argv("/bin/true"))
    );
    assert_eq!(route(&argv("gateway"), None, on_path), Ok(argv("gateway")));
}

#[test]
fn redirects_when_nothing_opts_out() {
    let d = decide(&model(), &argv("app gateway run"), &s6());
    assert!(
        matches!(d, Decision::Redirect { ref rule } if rule.slot == "gateway-default"),
        "{d:?}"
    );
    let d = decide(&model(), &argv("app dashboard"), &s6());
    assert_eq!(
        d,
        Decision::Foreground {
            argv: argv("app dashboard"),
            warning: None,
            as_slot: None,
            displaces: None,
        }
    );
    // A prefix of the match is not a match.
    let d = decide(&model(), &argv("app gateway"), &s6());
    assert!(matches!(d, Decision::Foreground { .. }));
}

#[test]
fn opt_outs() {
    let m = model();
    // An opt-out runs in the foreground instead of the slot: the slot must
    // not run beside it.
    let want = Decision::Foreground {
        argv: argv("app gateway run"),
        warning: None,
        as_slot: Some("gateway-default".into()),
        displaces: Some("gateway-default".into()),
    };
    assert_eq!(
        decide(&m, &argv("app gateway run --no-supervise"), &s6()),
        want
    );
    assert_eq!(
        decide(&m, &argv("app gateway --no-supervise run"), &s6()),
        want
    );
    for (place, val, redirected) in [
        ("container", "1", false),
        ("process", "YES", false),
        ("container", "0", true),
        ("process", "", true),
    ] {
        let mut f = s6();
        let env = if place == "container" {
            &mut f.container_env
        } else {
            &mut f.process_env
        };
        env.insert("APP_GATEWAY_NO_SUPERVISE".into(), val.into());
        let d = decide(&m, &argv("app gateway run"), &f);
        assert_eq!(
            matches!(d, Decision::Redirect { .. }),
            redirected,
            "{place}={val}: {d:?}"
        );
    }
    // The slot's own program (the sentinel) displaces nothing, even with
    // the opt-out flag in its command.
    let mut f = s6();
    f.process_env
        .insert("APP_SUPERVISED_CHILD".into(), "gateway-default".into());
    let own = Decision::Foreground {
        argv: argv("app gateway run"),
        warning: None,
        as_slot: None,
        displaces: None,
    };
    assert_eq!(decide(&m, &argv("app gateway run"), &f), own);
    assert_eq!(decide(&m, &argv("app gateway run --no-supervise"), &f), own);
    // The sentinel in the container env (a leaked docker -e) is not ours.
    let mut f = s6();
    f.container_env
        .insert("APP_SUPERVISED_CHILD".into(), "x".into());
    assert!(matches!(
        decide(&m, &argv("app gateway run"), &f),
        Decision::Redirect { .. }
    ));
}

#[test]
fn no_s6_means_foreground_with_one_warning() {
    let f = Facts {
        s6_missing: Some("PID 1 is docker-init, not s6-svscan".into()),
        ..Facts::default()
    };
    match decide(&model(), &argv("app gateway run --no-supervise"), &f) {
        Decision::Foreground {
            warning: None,
            as_slot: Some(s),
            displaces: None,
            ..
        } if s == "gateway-default" => {}
        d => {
            panic!("opt-out needs no warning, runs as its slot and has no slot to displace: {d:?}")
        }
    }
    match decide(&model(), &argv("app gateway run"), &f) {
        Decision::Foreground {
            argv: a,
            warning: Some(w),
            as_slot: Some(_),
            displaces: None,
        } => {
            assert_eq!(a, argv("app gateway run"));
            assert!(
                w.contains("s6 supervision unavailable") && w.contains("docker-init"),
                "{w}"
            );
        }
        d => panic!("{d:?}"),
    }
}

/// A redirect runs its slot's own command: words after the match would be
/// dropped, so it is refused; opted out, they reach the foreground run.
#[test]
fn extra_words_are_refused_not_dropped() {
    let m = model();
    match decide(&m, &argv("app gateway run --port 9999"), &s6()) {
        Decision::Refused { rule, extra } => {
            assert_eq!(rule.slot, "gateway-default");
            assert_eq!(extra, argv("--port 9999"));
        }
        d => panic!("{d:?}"),
    }
    match decide(
        &m,
        &argv("app gateway run --port 9999 --no-supervise"),
        &s6(),
    ) {
        Decision::Foreground { argv: a, .. } => assert_eq!(a, argv("app gateway run --port 9999")),
        d => panic!("{d:?}"),
    }
}

#[test]
fn each_error_names_the_dependency_and_its_condition() {
    let on = || "db".to_string();
    let cases = [
        (
            DepsError::NotStarted {
                on: on(),
                condition: Condition::Ready,
            },
            "it depends on db (ready), which is down and whose autostart does not hold (`svctl start db` starts it)",
        ),
        (
            DepsError::Failed {
                on: on(),
                condition: Condition::Completed,
            },
            "it depends on db (completed), which failed for good (see `svctl status db`)",
        ),
        (
            DepsError::Timeout {
                on: on(),
                condition: Condition::Up,
                after: DEPENDS_TIMEOUT,
            },
            "it depends on db (up), which was not up within 120 s",
        ),
    ];
    for (e, want) in cases {
        assert_eq!(e.to_string(), want);
        assert_eq!(e.exit_code(), exit::NOT_OK);
    }
}
