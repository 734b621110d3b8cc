//! Config loading: layers, defaults, instances, warnings, error collection.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::{Path, PathBuf};

use svkit::config::names::MAX_ARG_STRLEN;
use svkit::config::*;

fn layers(files: &[(&str, &str)]) -> Vec<(PathBuf, Vec<u8>)> {
    files
        .iter()
        .map(|(n, t)| (Path::new("/etc/svkit").join(n), t.as_bytes().to_vec()))
        .collect()
}

fn load(files: &[(&str, &str)], src: &dyn InstanceSource) -> Result<Validated, Vec<Diagnostic>> {
    match load_layers(&layers(files), src) {
        Ok(v) => Ok(v),
        Err(LoadError::Invalid(d)) => Err(d),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn defaults() {
    let v = load(
        &[("10.json", r#"{"slots": [{"name": "a", "command": ["a"]}]}"#)],
        &FixedInstances::default(),
    )
    .expect("valid");
    let m = &v.model;
    assert_eq!(m.sentinel_env, DEFAULT_SENTINEL_ENV);
    assert_eq!(m.state_dir, DEFAULT_STATE_DIR);
    assert_eq!(m.user, None);
    let s = &m.slots[0];
    assert_eq!(s.autostart, Autostart::Always);
    assert_eq!(s.restart, Restart::default());
    assert_eq!(s.restart.permanent_exit_codes, vec![78]);
    assert_eq!(s.log, None);
    assert_eq!(s.run_as(), None);
}

#[test]
fn later_layer_overrides_scalars_and_adds_slots() {
    let v = load(
        &[
            ("10-base.json", r#"{"user": "app", "default_program": "app", "slots": [{"name": "a", "command": ["a"]}]}"#),
            ("20-derived.json", r#"{"user": "other", "slots": [{"name": "b", "command": ["b"]}],
               "redirects": [{"match": ["app", "a"], "slot": "a", "also_start": ["b"]}]}"#),
        ],
        &FixedInstances::default(),
    )
    .expect("valid");
    assert_eq!(v.model.user.as_deref(), Some("other"));
    assert_eq!(v.model.default_program.as_deref(), Some("app"));
    let names: Vec<&str> = v.model.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    // The effective user is resolved after all layers.
    assert_eq!(v.model.slots[0].user.as_deref(), Some("other"));
    assert_eq!(v.model.redirects[0].also_start, ["b"]);
}

#[test]
fn instances_expand_everywhere_and_bad_discoveries_warn() {
    let src = FixedInstances(vec![(
        "/data/p".into(),
        vec![
            "zeta".into(),
            "UPPER".into(),
            "alpha".into(),
            "alpha".into(),
        ],
    )]);
    let v = load(
        &[(
            "10.json",
            r#"{"slots": [{"name": "gw-{instance}",
            "instances": {"names": ["default"], "from_dir": {"path": "/data/p"}},
            "command": ["app", "-p", "{instance}"], "env": {"P": "{instance}"},
            "cwd": "/data/{instance}", "log": {"dir": "/logs/{instance}"}}]}"#,
        )],
        &src,
    )
    .expect("valid");
    let names: Vec<&str> = v.model.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gw-default", "gw-alpha", "gw-zeta"]);
    let z = &v.model.slots[2];
    assert_eq!(z.command, ["app", "-p", "zeta"]);
    assert_eq!(z.env.get("P").map(String::as_str), Some("zeta"));
    assert_eq!(z.cwd.as_deref(), Some("/data/zeta"));
    assert_eq!(z.log.as_ref().map(|l| l.dir.as_str()), Some("/logs/zeta"));
    assert_eq!(z.instance.as_deref(), Some("zeta"));
    assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
    assert!(v.warnings[0].message.contains("\"UPPER\""));
}

#[test]
fn every_error_is_reported() {
    let d = load(
        &[
            ("10.json", r#"{"slots": [{"name": "A", "command": []}, {"name": "b", "command": ["b"], "log": {"dir": "rel", "keep": -1}}]}"#),
            ("20.json", r#"{"bogus": 1, "slots": [{"name": "b", "command": ["x"]}]}"#),
        ],
        &FixedInstances::default(),
    )
    .expect_err("invalid");
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    let has = |s: &str| text.iter().any(|t| t.contains(s));
    assert!(has("10.json:1:13: slots[0].name"), "{text:#?}");
    assert!(
        has("slots[0].command: command must not be empty"),
        "{text:#?}"
    );
    assert!(has("slots[1].log.dir"), "{text:#?}");
    assert!(has("slots[1].log.keep: -1 is outside"), "{text:#?}");
    assert!(has("20.json:1:2: bogus: unknown key"), "{text:#?}");
    assert!(
        has("20.json:1:25: slots[0].name: slot `b` is already defined at /etc/svkit/10.json:1:43"),
        "{text:#?}"
    );
    assert_eq!(d.len(), 6, "{text:#?}");
}

#[test]
fn fs_discovery_reads_subdirs_with_required_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for d in ["a", "b", ".hidden"] {
        std::fs::create_dir(tmp.path().join(d)).expect("mkdir");
    }
    std::fs::write(tmp.path().join("a/SOUL.md"), "x").expect("write");
    std::fs::write(tmp.path().join("file"), "x").expect("write");
    let dir = tmp.path().to_str().expect("utf-8");
    let mut all = FsInstances.discover(dir, None).expect("list");
    all.sort();
    assert_eq!(all, [".hidden", "a", "b"]);
    assert_eq!(
        FsInstances.discover(dir, Some("SOUL.md")).expect("list"),
        ["a"]
    );
    assert!(FsInstances
        .discover("/nonexistent/x", None)
        .expect("missing is empty")
        .is_empty());
}

#[test]
fn real_dir_layers_in_name_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("20-b.json"), r#"{"user": "b"}"#).expect("write");
    std::fs::write(tmp.path().join("10-a.json"), r#"{"user": "a"}"#).expect("write");
    std::fs::write(tmp.path().join(".30-hidden.json"), "garbage").expect("write");
    std::fs::write(tmp.path().join("notes.txt"), "garbage").expect("write");
    let v = svkit::config::load(tmp.path(), &FsInstances).expect("valid");
    assert_eq!(v.model.user.as_deref(), Some("b"));
    assert_eq!(v.model.files.len(), 2);
}

#[test]
fn a_discovered_instance_never_makes_a_declared_slot_a_duplicate() {
    let src = FixedInstances(vec![("/p".into(), vec!["a".into(), "b".into()])]);
    let v = load(
        &[(
            "10.json",
            r#"{"slots": [
            {"name": "s-{instance}", "instances": {"from_dir": {"path": "/p"}}, "command": ["x"]},
            {"name": "s-b", "command": ["x"]}]}"#,
        )],
        &src,
    )
    .expect("valid");
    let names: Vec<&str> = v.model.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["s-a", "s-b"]);
    assert_eq!(v.model.slots[1].instance, None, "the declared one");
    assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
    let w = v.warnings[0].to_string();
    assert!(
        w.contains("skipping discovered slot `s-b` (instance `b`): already defined at /etc/svkit/10.json:3:14"),
        "{w}"
    );
}

/// What execve would refuse is a config error, with its place: one string
/// over MAX_ARG_STRLEN (argument or `NAME=value`), or argv and env together
/// over ARG_MAX. At the limit less one byte, it passes.
#[test]
fn what_the_kernel_refuses_to_exec_is_an_error() {
    let max = MAX_ARG_STRLEN - 1;
    let slot = |args: &[String], env: &[(&str, String)]| {
        let env: serde_json::Map<String, serde_json::Value> = env
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(v.clone())))
            .collect();
        serde_json::json!({ "slots": [ { "name": "a", "command": args, "env": env } ] }).to_string()
    };
    let big = "x".repeat(200_000);
    let d = load(
        &[(
            "10.json",
            &slot(&["a".into(), big], &[("V", "y".repeat(max))]),
        )],
        &FixedInstances::default(),
    )
    .expect_err("a 200 KB argument and a NAME=value over the limit");
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    let has = |s: &str| text.iter().any(|t| t.contains(s));
    assert!(has("10.json:1:"), "{text:#?}");
    assert!(
        has("slots[0].command[1]: this argument is 200000 bytes: the kernel passes no argument or environment string over 131071 bytes"),
        "{text:#?}"
    );
    assert!(
        has("slots[0].env.V: `NAME=value` is 131073 bytes"),
        "{text:#?}"
    );

    let v = load(
        &[(
            "10.json",
            &slot(
                &["a".into(), "x".repeat(max)],
                &[("V", "y".repeat(max - 2))],
            ),
        )],
        &FixedInstances::default(),
    );
    assert!(v.is_ok(), "at the limit: {:?}", v.err());

    // Just over this machine's ARG_MAX, as long as that fits in a config
    // file (4 MiB at most).
    let arg_max = nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX)
        .ok()
        .flatten()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(2 * 1024 * 1024);
    let n = arg_max / (max + 9) + 1;
    if n * (max + 3) > 4 * 1024 * 1024 - 1024 {
        svkit_testkit::skip(
            "what_the_kernel_refuses_to_exec_is_an_error",
            format!("ARG_MAX is {arg_max} here: more than a config file may hold"),
        );
        return;
    }
    let many: Vec<String> = (0..n).map(|_| "x".repeat(max)).collect();
    let d = load(
        &[("10.json", &slot(&many, &[]))],
        &FixedInstances::default(),
    )
    .expect_err("over ARG_MAX");
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(
            |t| t.contains("slots[0].command: command and env take") && t.contains("(ARG_MAX)")
        ),
        "{text:#?}"
    );
}

/// Config-dir oddities get an error that names them: a byte order mark, a
/// directory named like a layer, a file over the size limit (read no
/// further than one byte past it).
#[test]
fn config_dir_oddities_are_named() {
    let text = |r: Result<Vec<(PathBuf, Vec<u8>)>, LoadError>| -> Vec<String> {
        match r.and_then(|files| load_layers(&files, &FixedInstances::default()).map(|_| ())) {
            Ok(()) => panic!("accepted"),
            Err(LoadError::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
            Err(e) => panic!("unexpected {e}"),
        }
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let bom = tmp.path().join("bom");
    std::fs::create_dir(&bom).expect("mkdir");
    std::fs::write(bom.join("10.json"), b"\xef\xbb\xbf{\"slots\": []}").expect("write");
    let t = text(read_layers(&bom));
    assert!(
        t.iter()
            .any(|l| l.contains("10.json:1:1:") && l.contains("byte order mark")),
        "{t:#?}"
    );

    let dir = tmp.path().join("dir");
    std::fs::create_dir_all(dir.join("20.json")).expect("mkdir");
    std::fs::write(dir.join("10.json"), "{}").expect("write");
    let t = text(read_layers(&dir));
    assert!(
        t.iter()
            .any(|l| l.contains("20.json") && l.contains("a directory named like a config layer")),
        "{t:#?}"
    );

    let big = tmp.path().join("big");
    std::fs::create_dir(&big).expect("mkdir");
    let mut body = b"{\"slots\": []".to_vec();
    body.resize(5 << 20, b' ');
    body.push(b'}');
    std::fs::write(big.join("10.json"), &body).expect("write");
    let files = read_layers(&big).expect("read");
    assert_eq!(
        files[0].1.len(),
        (4 << 20) + 1,
        "read no further than the limit"
    );
    let t = text(Ok(files));
    assert!(
        t.iter().any(|l| l.contains("over 4194304 bytes (4 MiB)")),
        "{t:#?}"
    );
}

#[test]
fn http_renders_the_serve_slot_and_bad_values_are_located() {
    let none = load(
        &[("10.json", r#"{"slots": [{"name": "a", "command": ["a"]}]}"#)],
        &FixedInstances::default(),
    )
    .expect("valid");
    assert_eq!(none.model.http, None);
    assert!(
        none.model.slot(SERVE_SLOT).is_none(),
        "no key: nothing runs"
    );

    let v = load(
        &[
            ("10.json", r#"{"http": {"listen": "unix:/run/x.sock"}, "slots": [{"name": "a", "command": ["a"]}]}"#),
            ("20.json", r#"{"user": "app", "http": {"listen": "127.0.0.1:9090", "token_file": "/run/secrets//t"}}"#),
        ],
        &FixedInstances::default(),
    )
    .expect("valid");
    let h = v.model.http.as_ref().expect("http");
    assert_eq!(h.listen, Listen::Tcp("127.0.0.1:9090".parse().unwrap()));
    assert_eq!(h.token_file.as_deref(), Some("/run/secrets/t"));
    let s = v.model.slot(SERVE_SLOT).expect("the serve slot");
    assert_eq!(s.command, ["svkit", "serve"]);
    assert_eq!(s.run_as(), None, "root, for the control FIFOs");
    assert_eq!(s.autostart, Autostart::Always);

    let d = load(
        &[
            (
                "10.json",
                r#"{"http": {"listen": "0.0.0.0", "token_file": "rel", "x": 1}}"#,
            ),
            ("20.json", r#"{"http": {"listen": "unix:rel"}}"#),
            (
                "30.json",
                r#"{"http": {"listen": "[::]:0", "token_file": "/a/../b"}}"#,
            ),
            ("50.json", r#"{"http": {"listen": ":9090"}}"#),
        ],
        &FixedInstances::default(),
    )
    .expect_err("invalid");
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    let has = |s: &str| text.iter().any(|t| t.contains(s));
    assert!(has("10.json:1:53: http: unknown field `x`"), "{text:#?}");
    assert!(
        has("20.json:1:11: http.listen: `unix:rel`: must be an absolute path"),
        "{text:#?}"
    );
    assert!(
        has("30.json:1:11: http.listen: `[::]:0`: must be IP:PORT"),
        "{text:#?}"
    );
    assert!(
        has("30.json:1:31: http.token_file: `/a/../b` must not contain"),
        "{text:#?}"
    );
    assert!(
        has("50.json:1:11: http.listen: `:9090`: must be IP:PORT"),
        "{text:#?}"
    );
    assert_eq!(d.len(), 5, "{text:#?}");

    let d = load(
        &[(
            "40.json",
            r#"{"http": {"listen": "[::1]:9090"}, "slots": [{"name": "svkit-serve", "command": ["x"]}]}"#,
        )],
        &FixedInstances::default(),
    )
    .expect_err("the slot's name is taken");
    assert_eq!(
        d[0].to_string(),
        "/etc/svkit/40.json:1:47: slots[0].name: slot `svkit-serve` is already defined at /etc/svkit/40.json:1:2 (http)"
    );
}
