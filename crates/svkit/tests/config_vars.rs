//! `${VAR}` in `user` and `instances.count`, read from the environment the
//! instance source gives: complete (the boot, plan, apply) or not (check).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::path::{Path, PathBuf};

use svkit::config::users::{unknown_users, PasswdFile};
use svkit::config::vars::Env;
use svkit::config::*;

/// The container's environment, as `state::LiveInstances` gives it.
struct Container(Vec<(&'static str, &'static str)>, bool);

impl InstanceSource for Container {
    fn discover(&self, _: &str, _: Option<&str>) -> std::io::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn env(&self) -> Env {
        Env {
            vars: (self.0.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            complete: self.1,
        }
    }
}

fn load(json: &str, src: &dyn InstanceSource) -> Result<Validated, Vec<String>> {
    let files = vec![(
        PathBuf::from("/etc/svkit/10.json"),
        json.as_bytes().to_vec(),
    )];
    match load_layers(&files, src) {
        Ok(v) => Ok(v),
        Err(LoadError::Invalid(d)) => Err(d.iter().map(ToString::to_string).collect()),
        Err(e) => panic!("unexpected {e}"),
    }
}

fn names(v: &Validated) -> Vec<(&str, Option<&str>)> {
    (v.model.slots.iter())
        .map(|s| (s.name.as_str(), s.user.as_deref()))
        .collect()
}

const WORKERS: &str = r#"{"user": "${APP_USER:-app}", "slots": [
  {"name": "w-{instance}", "instances": {"count": "${WORKERS:-4}"}, "command": ["x"],
   "user": "${WWWUSER}"}]}"#;

#[test]
fn the_environment_gives_the_count_and_the_user() {
    let env = Container(vec![("WORKERS", "3"), ("WWWUSER", "www-data")], true);
    let v = load(WORKERS, &env).expect("valid");
    let w = Some("www-data");
    assert_eq!(names(&v), [("w-0", w), ("w-1", w), ("w-2", w)]);
    assert_eq!(v.model.user.as_deref(), Some("app"), "the default");
    assert_eq!(v.model.templates[0].user.as_deref(), w);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    // Unset, or set empty: the default.
    for workers in [vec![], vec![("WORKERS", "")]] {
        let env = Container([workers, vec![("WWWUSER", "www-data")]].concat(), true);
        assert_eq!(load(WORKERS, &env).expect("valid").model.slots.len(), 4);
    }
}

#[test]
fn a_count_joins_the_other_instance_sources() {
    let json = r#"{"slots": [{"name": "w-{instance}", "command": ["x"],
      "instances": {"names": ["main", "1"], "count": 3, "from_dir": {"path": "/p"}}}]}"#;
    let src = FixedInstances(vec![("/p".into(), vec!["2".into(), "extra".into()])]);
    let v = load(json, &src).expect("valid");
    let got: Vec<&str> = v.model.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(got, ["w-main", "w-1", "w-0", "w-2", "w-extra"]);
    let zero = json.replace("3", "0").replace("\"1\"", "\"x\"");
    let v = load(&zero, &FixedInstances::default()).expect("valid");
    assert_eq!(v.model.slots.len(), 2, "a count of 0 adds none");
}

#[test]
fn an_unset_variable_without_a_default_is_a_located_error() {
    let e = load(
        WORKERS.replace(":-4", "").as_str(),
        &Container(vec![], true),
    )
    .unwrap_err();
    assert_eq!(
        e,
        [
            "/etc/svkit/10.json:2:42: slots[0].instances.count: `${WORKERS}`: WORKERS is not set in the container's environment and has no default (`${WORKERS:-DEFAULT}`)",
            "/etc/svkit/10.json:3:4: slots[0].user: `${WWWUSER}`: WWWUSER is not set in the container's environment and has no default (`${WWWUSER:-DEFAULT}`)",
        ]
    );
}

#[test]
fn where_the_environment_is_not_the_run_s_it_is_a_warning() {
    // svctl check, maybe on a build host: the rest is checked.
    let env = Container(vec![], true);
    let v = load(WORKERS.replace(":-4", "").as_str(), &Checking(&env)).expect("valid");
    assert_eq!(v.model.slots.len(), 0, "no count known");
    let w: Vec<&str> = v.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with("/etc/svkit/10.json:2:42: slots[0].instances.count: `${WORKERS}`: WORKERS is not set here and has no default: the boot and `svctl apply` refuse the config unless the container's environment sets it"), "{w:?}");
    // A user it cannot know is not looked up.
    let json = r#"{"slots": [{"name": "a", "command": ["x"], "user": "${WWWUSER}"}]}"#;
    let v = load(json, &Checking(&env)).expect("valid");
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("etc")).unwrap();
    std::fs::write(t.path().join("etc/passwd"), "root:x:0:0::/:/bin/sh\n").unwrap();
    let db = PasswdFile::under_root(t.path()).unwrap();
    assert!(unknown_users(&v.model, &db).is_empty());
    // A syntax error is one wherever it is checked.
    let bad = json.replace("${WWWUSER}", "${WWWUSER");
    assert!(load(&bad, &Checking(&env)).unwrap_err()[0].contains("without its `}`"));
}

#[test]
fn a_user_from_the_environment_is_looked_up_as_one_written_out() {
    let json = r#"{"slots": [{"name": "a", "command": ["x"], "user": "${WWWUSER}"}]}"#;
    let v = load(json, &Container(vec![("WWWUSER", "ghost")], true)).expect("valid");
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("etc")).unwrap();
    std::fs::write(t.path().join("etc/passwd"), "root:x:0:0::/:/bin/sh\n").unwrap();
    let db = PasswdFile::under_root(t.path()).unwrap();
    let d: Vec<String> = unknown_users(&v.model, &db)
        .iter()
        .map(ToString::to_string)
        .collect();
    let passwd = t.path().join("etc/passwd");
    assert_eq!(
        d,
        [format!(
            "/etc/svkit/10.json:1:44: slots[0].user: unknown user `ghost` (slot a): not in {}; s6-setuidgid could not start the slot as it",
            Path::new(&passwd).display()
        )]
    );
    let e = load(json, &Container(vec![("WWWUSER", "Bad User")], true)).unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(
        e[0].contains("slots[0].user: `${WWWUSER}` is `Bad User`: a user name must match"),
        "{e:?}"
    );
}

#[test]
fn bad_counts_are_located_errors() {
    let env = Container(vec![("E", ""), ("HUGE", "99999999999"), ("W", "3")], true);
    for (count, part) in [
        (r#""${""#, "without its `}`"),
        (r#""${1X}""#, "`${1X}`: `1X` is no NAME ([A-Za-z_][A-Za-z0-9_]*): only `${NAME}` and `${NAME:-default}`"),
        (r#""$W""#, "a `$` that does not start"),
        (r#""${E:-}""#, "`${E:-}` is ``: expected a whole number 0..1000"),
        (r#""${E}""#, "is ``: expected a whole number"),
        (r#""${HUGE}""#, "is `99999999999`: expected a whole number 0..1000 (s6-svscan supervises at most 1000 services)"),
        (r#""four""#, "`four`: expected a whole number"),
        (r#""+3""#, "`+3`: expected"),
        (r#"" 3""#, "` 3`: expected"),
        ("1001", "`1001`: expected a whole number 0..1000"),
        ("-1", "`-1`: expected"),
        ("2.5", "`2.5`: expected"),
        ("true", "expected a number, or a string such as \"${WORKERS:-4}\""),
    ] {
        let json = format!(
            r#"{{"slots": [{{"name": "w-{{instance}}", "instances": {{"count": {count}}}, "command": ["x"]}}]}}"#
        );
        let e = load(&json, &env).unwrap_err();
        assert_eq!(e.len(), 1, "{count}: {e:?}");
        assert!(
            e[0].starts_with("/etc/svkit/10.json:1:51: slots[0].instances.count: ") && e[0].contains(part),
            "{count}: {e:?}"
        );
    }
    // The limit itself fits in a count.
    let json = r#"{"slots": [{"name": "w-{instance}", "instances": {"count": "${N:-1000}"}, "command": ["x"]}]}"#;
    assert_eq!(load(json, &env).expect("valid").model.slots.len(), 1000);
}
