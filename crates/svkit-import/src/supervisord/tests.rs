//! The supervisord importer over fixtures in the shapes real images use
//! (tests/fixtures/import/supervisord); hostile input and a property in
//! `tests_input`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::{self as import, ImportError, Imported, Options};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/import/supervisord")
        .join(rel)
}

fn imp(rel: &str) -> Result<Imported, ImportError> {
    super::import(&fixture(rel), &Options::default())
}

fn slots(i: &Imported) -> Vec<Value> {
    i.slots
        .iter()
        .map(|s| serde_json::to_value(s).unwrap())
        .collect()
}

fn slot<'a>(v: &'a [Value], name: &str) -> &'a Value {
    v.iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no slot {name}: {v:#?}"))
}

fn notes(i: &Imported) -> Vec<String> {
    i.notes.iter().map(ToString::to_string).collect()
}

fn has_note(i: &Imported, line: usize, key: &str, part: &str) -> bool {
    i.notes
        .iter()
        .any(|n| n.at.line == Some(line) && n.key == key && n.why.contains(part))
}

#[test]
fn worked_example_maps_every_program() {
    let i = imp("laravel/supervisord.conf").unwrap();
    let v = slots(&i);
    assert_eq!(v.len(), 3);
    assert_eq!(
        slot(&v, "php-fpm")["command"],
        json!(["php-fpm8.2", "--nodaemonize", "--force-stderr"])
    );
    assert_eq!(
        slot(&v, "php-fpm").get("log"),
        None,
        "/dev/stdout is the container's output"
    );
    assert_eq!(
        slot(&v, "nginx")["command"],
        json!(["nginx", "-g", "daemon off;"])
    );
    assert_eq!(slot(&v, "nginx")["down_signal"], "QUIT");
    let w = slot(&v, "queue-worker_{instance}");
    assert_eq!(w["instances"]["names"], json!(["00", "01", "02", "03"]));
    assert_eq!(w["user"], "www-data");
    assert_eq!(w["cwd"], "/var/www/html");
    assert_eq!(w["stop_timeout_ms"], 3_600_000);
    assert_eq!(
        w["log"],
        json!({"dir": "/var/www/html/storage/logs/{instance}", "keep": 5, "max_bytes": 10_485_760})
    );
    assert_eq!(w["env"]["QUEUE_CONNECTION"], "redis");
    // autorestart=true: every exit restarts, none is permanent.
    assert_eq!(
        w["restart"],
        json!({"permanent_exit_codes": [], "max_deaths": 4, "within_s": 60})
    );
    for (line, key) in [
        (9, "unix_http_server"),
        (15, "supervisorctl"),
        (20, "priority"),
        (44, "stopasgroup"),
    ] {
        assert!(
            i.notes
                .iter()
                .any(|n| n.at.line == Some(line) && n.key == key),
            "{line} {key}: {:#?}",
            notes(&i)
        );
    }
    assert_eq!(i.files, 1);
}

#[test]
fn priority_as_order_waits_for_the_level_below() {
    let opts = Options {
        priority_as_order: true,
    };
    let i = super::import(&fixture("laravel/supervisord.conf"), &opts).unwrap();
    let v = slots(&i);
    assert_eq!(slot(&v, "php-fpm").get("depends_on"), None);
    assert_eq!(slot(&v, "nginx")["depends_on"], json!({"php-fpm": "up"}));
    assert_eq!(
        slot(&v, "queue-worker_{instance}")["depends_on"],
        json!({"nginx": "up"})
    );
    assert!(!i.notes.iter().any(|n| n.key == "priority"));
}

#[test]
fn the_shapes_of_real_configs() {
    let i = imp("many.conf").unwrap();
    let v = slots(&i);
    let web = slot(&v, "web");
    // %(ENV_PORT)s is the container's, at run time; the inline comment is gone.
    assert_eq!(
        web["command"],
        json!(["sh", "-c", "exec gunicorn app:wsgi --bind 0.0.0.0:${PORT}"])
    );
    assert!(has_note(&i, 7, "command", "$PORT"));
    // environment= with quotes and commas, over [supervisord]'s.
    assert_eq!(web["env"]["ALLOWED"], "a.example,b.example");
    assert_eq!(web["env"]["EMPTY"], "");
    assert_eq!(web["env"]["TZ"], "UTC");
    assert_eq!(web["restart"]["on_clean_exit"], "stop");
    assert_eq!(web["restart"]["permanent_exit_codes"], json!([3]));
    assert_eq!(web["restart"]["max_deaths"], 11);
    assert_eq!(web["down_signal"], "INT");
    // Continuation lines, a renamed slot, autorestart=false.
    let beat = slot(&v, "beat");
    assert_eq!(beat["command"].as_array().unwrap().len(), 7);
    assert!(has_note(&i, 17, "process_name", "`Beat` is slot `beat`"));
    assert_eq!(beat["restart"]["max_deaths"], 1);
    assert_eq!(beat["restart"]["on_clean_exit"], "stop");
    // A repeated key: the later wins, the earlier is reported.
    assert!(has_note(&i, 25, "priority", "later value wins"));
    // numprocs: a template, %(process_num)d and %% in the command.
    let w = slot(&v, "worker-{instance}");
    assert_eq!(w["instances"]["names"], json!(["1", "2", "3"]));
    assert_eq!(w["command"][5], "worker{instance}@%h");
    // Three programs logged into /var/log/app: a dir each.
    assert_eq!(w["log"]["dir"], "/var/log/app/worker-{instance}");
    assert_eq!(slot(&v, "cron")["log"]["dir"], "/var/log/app/cron");
    // A pipe: sh -c without exec; $VAR and a redirection: with exec.
    assert_eq!(
        slot(&v, "cron")["command"],
        json!(["sh", "-c", "crond -f 2>&1 | logger"])
    );
    assert_eq!(slot(&v, "cron")["restart"]["max_deaths"], 0);
    let ship = slot(&v, "shipper");
    assert_eq!(
        ship["command"][2],
        "exec /usr/bin/ship --host $LOG_HOST > /var/log/ship.out 2>&1"
    );
    assert_eq!(ship["autostart"], "never");
    // Unknown keys, groups, event listeners: reported, never fatal.
    assert!(has_note(
        &i,
        35,
        "frobnicate",
        "not a key supervisord knows"
    ));
    assert!(has_note(&i, 46, "group:app", "no groups"));
    assert!(has_note(
        &i,
        50,
        "eventlistener:crashmail",
        "event listener"
    ));
}

#[test]
fn crlf_and_no_final_newline() {
    let i = imp("crlf.conf").unwrap();
    let v = slots(&i);
    assert_eq!(slot(&v, "dos")["command"], json!(["sleep", "1000"]));
    assert_eq!(slot(&v, "dos")["env"], json!({"A": "1", "B": "2"}));
    assert_eq!(slot(&v, "last")["command"], json!(["sleep", "2"]));
}

#[test]
fn includes_are_followed_as_supervisord_does() {
    let i = imp("include/main.conf").unwrap();
    let v = slots(&i);
    let names: Vec<&str> = v.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    // [program:a] again in a later file: merged, the later command wins.
    assert_eq!(slot(&v, "a")["command"], json!(["sleep", "3000"]));
    // %(here)s: the including file's dir, absolute.
    let here = super::read::abspath(&fixture("include/conf.d"));
    assert_eq!(slot(&v, "b")["cwd"], here.to_str().unwrap());
    // An included file's [include] is not followed.
    assert!(i
        .notes
        .iter()
        .any(|n| n.at.file.ends_with("extra.ini") && n.why.contains("not followed")));
    assert_eq!(i.files, 4);
}

#[test]
fn bad_includes_are_located_errors() {
    let e = imp("cycle/supervisord.conf").unwrap_err();
    assert_eq!(e.at.line, Some(2), "{e}");
    assert!(e.what.contains("included again"), "{e}");
    let e = imp("missing/main.conf").unwrap_err();
    assert_eq!(e.at.line, Some(5), "{e}");
    assert!(e.what.contains("No such file"), "{e}");
    let e = imp("include-dir/main.conf").unwrap_err();
    assert!(e.what.contains("a directory"), "{e}");
    let e = imp("include-proc/main.conf").unwrap_err();
    assert_eq!(e.at.line, Some(2), "{e}");
    assert!(e.what.contains("/proc/self/mem"), "{e}");
}

#[test]
fn non_utf8_bytes_are_a_located_error() {
    let e = imp("latin1.conf").unwrap_err();
    assert_eq!(e.at.line, Some(3), "{e}");
    assert!(e.what.contains("not UTF-8"), "{e}");
}

pub(super) fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn what_supervisord_refuses_is_refused_where_it_is() {
    let t = tempfile::tempdir().unwrap();
    for (text, line, part) in [
        ("[program:a]\n", 1, "no command"),
        ("[program:a]\ncommand=x\nnumprocs=2\n", 1, "%(process_num)"),
        (
            "[program:a]\ncommand=x\nnumprocs=%(ENV_N)s\n",
            1,
            "known only when the container runs but process_name has no %(process_num)",
        ),
        (
            "[program:a]\ncommand=x\nnumprocs=1%(ENV_N)s\n",
            3,
            "or %(ENV_X)s alone",
        ),
        (
            "[program:a]\nprocess_name=a%(process_num)s\ncommand=x %(numprocs)d\nnumprocs=%(ENV_N)s\n",
            3,
            "`%(numprocs)` is known only when the container runs",
        ),
        (
            "[program:a]\nprocess_name=a%(process_num)s\ncommand=x %(process_num)03d\nnumprocs=%(ENV_N)s\n",
            4,
            "written otherwise elsewhere",
        ),
        (
            "[program:a]\ncommand=run %(nope)s\n",
            2,
            "cannot be expanded",
        ),
        (
            "[program:a]\ncommand=x\nautorestart=sometimes\n",
            3,
            "autorestart",
        ),
        ("[program:a]\ncommand=x\nexitcodes=0,300\n", 3, "exitcodes"),
        (
            "[program:a]\ncommand=x\nenvironment=A=b c\n",
            3,
            "environment",
        ),
        (
            "[program:a]\ncommand=x\nstopsignal=BOGUS\n",
            3,
            "stopsignal",
        ),
        ("[program:a]\ncommand='unclosed\n", 2, "quotation"),
        ("command=x\n", 1, "before any [section]"),
        ("[program:a]\njunk line\n", 2, "neither"),
        (
            "[program:a]\ncommand=x\n[program:A]\ncommand=y\n",
            3,
            "as the program at",
        ),
    ] {
        let p = write(t.path(), "s.conf", text.as_bytes());
        let e = super::import(&p, &Options::default()).unwrap_err();
        assert_eq!(
            (e.at.line, e.what.contains(part)),
            (Some(line), true),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn detection_by_name_and_content() {
    use crate::{detect, Format};
    assert_eq!(detect(&fixture("many.conf")).unwrap(), Format::Supervisord);
    let t = tempfile::tempdir().unwrap();
    let p = write(t.path(), "Procfile.dev", b"web: run\n");
    assert_eq!(detect(&p).unwrap(), Format::Procfile);
    std::fs::create_dir_all(t.path().join("tree/svc")).unwrap();
    write(&t.path().join("tree/svc"), "run", b"#!/bin/sh\n");
    assert_eq!(detect(&t.path().join("tree")).unwrap(), Format::S6);
    let p = write(t.path(), "x.txt", b"hello\n");
    assert!(detect(&p).unwrap_err().what.contains("--from"));
}

#[test]
fn every_path_merges_into_one_checked_config() {
    let paths = [
        fixture("laravel/supervisord.conf"),
        fixture("include/main.conf"),
    ];
    let out = import::import(
        &paths,
        Some(import::Format::Supervisord),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out.imported.slots.len(), 6);
    let text = out.text;
    assert!(
        text.starts_with(
            "{\n  \"slots\": [\n    {\n      \"name\": \"php-fpm\",\n      \"command\""
        ),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    // The same program twice: the second path is named.
    let twice = [fixture("many.conf"), fixture("many.conf")];
    match import::import(&twice, None, &Options::default()) {
        Err(import::Failure::Invalid(e)) => assert!(e.what.contains("slots[5].name"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_value_may_hold_the_words_that_stand_in_for_run_time_variables() {
    // The importer marks a run-time variable with a word while it splits
    // `environment=`: text that holds that word (whole, or once its
    // quotes are gone) stays as written, beside a variable.
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("supervisord.conf");
    std::fs::write(
        &f,
        "[program:a]\ncommand=x\nenvironment=A=\"xSVKITVAR0SVKITVARy\",\
         B=\"%(ENV_HOME)s/SVKITVAR1\",C=SVKIT\"VAR\"\n",
    )
    .unwrap();
    let i = super::import(&f, &Options::default()).unwrap();
    let v = slots(&i);
    let a = slot(&v, "a");
    assert_eq!(a["env"]["A"], "xSVKITVAR0SVKITVARy");
    assert_eq!(a["env"]["C"], "SVKITVAR");
    assert_eq!(
        a["command"],
        json!(["sh", "-c", "export B=\"${HOME}/SVKITVAR1\"; exec x"])
    );
}

#[test]
fn numprocs_and_user_from_the_environment_read_the_containers() {
    let i = imp("env-workers.conf").unwrap();
    let v = slots(&i);
    let w = slot(&v, "laravel-worker_{instance}");
    assert_eq!(w["instances"], json!({"count": "${WORKERS_COUNT}"}));
    assert_eq!(w["user"], "${WWWUSER}");
    assert!(has_note(
        &i,
        13,
        "numprocs",
        "instances.count `${WORKERS_COUNT}`"
    ));
    assert!(has_note(
        &i,
        12,
        "user",
        "`${WWWUSER}`: read from the container's environment"
    ));
    // 02d wrote 00, 01, …: a count writes 0, 1, …, and says so.
    assert!(has_note(&i, 8, "process_name", "named `0`, `1`"));
    let h = slot(&v, "horizon-{instance}");
    assert_eq!(h["instances"], json!({"count": "${HORIZONS}"}));
    assert_eq!(
        h["command"],
        json!(["php", "artisan", "horizon", "--name=horizon-{instance}"])
    );
    assert_eq!(h["user"], "app-${TENANT}");
    assert!(has_note(&i, 22, "numprocs_start", "numbered from 0"));
    assert!(
        !has_note(&i, 19, "process_name", "named `0`"),
        "{:#?}",
        notes(&i)
    );
}
