//! docs/import.md's worked migration boots on s6-overlay's real `/init`:
//! the supervisord config imported by `svctl import` (its three programs
//! swapped for stand-ins, every other line as the doc has it), every slot
//! up, `svctl status` exiting 0.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

mod svctl_common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use svctl_common::*;

/// The doc's example with stand-ins for php-fpm, nginx and the workers
/// (a worker's stand-in keeps its %(process_num)).
fn example_with_stand_ins() -> String {
    let ini = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/import/supervisord/laravel/supervisord.conf"),
    )
    .unwrap();
    let mut n = 0;
    let out: Vec<String> = ini
        .lines()
        .map(|l| {
            if !l.starts_with("command=") {
                return l.to_owned();
            }
            n += 1;
            match n {
                1 => "command=sh -c \"trap 'exit 0' TERM; while :; do sleep 1; done\"".to_owned(),
                2 => "command=sleep 100000".to_owned(),
                _ => "command=sleep 10%(process_num)02d".to_owned(),
            }
        })
        .collect();
    assert_eq!(n, 3, "three programs in the example");
    out.join("\n") + "\n"
}

#[test]
fn the_worked_migration_boots_every_slot_up() {
    if !sandbox_or_skip("the_worked_migration_boots_every_slot_up") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("supervisord.conf");
    std::fs::write(&src, example_with_stand_ins()).unwrap();
    let o = Command::new(svkit_testkit::tool("svctl"))
        .arg("import")
        .arg(&src)
        .output()
        .unwrap();
    expect_code(&o, 0);
    let config = String::from_utf8(o.stdout).unwrap();
    assert!(config.contains("\"queue-worker_{instance}\""), "{config}");
    let fx = Fixture::new(&config);
    // The workers' directory= is the app's checkout, which the image has.
    fx.rootfs.file("var/www/html/artisan", "");
    let sbx = fx.boot();
    let slots = [
        "php-fpm",
        "nginx",
        "queue-worker_00",
        "queue-worker_01",
        "queue-worker_02",
        "queue-worker_03",
    ];
    let mut argv = vec!["svctl", "wait", "up", "--timeout", "60000"];
    argv.extend(slots);
    sbx.run(&argv, 0);
    poll("svctl status exits 0", Duration::from_secs(30), || {
        (sbx.exec(&["svctl", "status"]).status.code() == Some(0)).then_some(())
    });
    let o = sbx.run(&["svctl", "status"], 0);
    let table = stdout(&o);
    for s in slots {
        assert!(
            table.lines().any(|l| l.starts_with(s) && l.contains("up")),
            "{s}: {table}"
        );
    }
    // The workers run as www-data (in the app's dir: their run script's
    // `cd` would fail without it), and log to a dir each.
    assert_eq!(
        stdout(&sbx.sh("stat -c %U /proc/$(s6-svstat -o pid /run/service/queue-worker_02)")).trim(),
        "www-data"
    );
    assert!(sbx
        .root()
        .join("var/www/html/storage/logs/02/current")
        .exists());
}

/// Queue workers sized and owned by the container's environment
/// (`numprocs=%(ENV_WORKERS_COUNT)s`, `user=%(ENV_WWWUSER)s`), imported
/// and booted with `-e WORKERS_COUNT=2 -e WWWUSER=nobody`.
#[test]
fn workers_from_the_environment_boot_as_many_as_it_says() {
    if !sandbox_or_skip("workers_from_the_environment_boot_as_many_as_it_says") {
        return;
    }
    let ini = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/import/supervisord/env-workers.conf"),
    )
    .unwrap();
    let ini = ini.replace(
        "command=php /var/www/html/artisan queue:work --sleep=3 --tries=3 --max-time=3600",
        "command=sleep 10%(process_num)02d",
    );
    let ini = &ini[..ini.find("[program:horizon]").unwrap()];
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("supervisord.conf");
    std::fs::write(&src, ini).unwrap();
    let o = Command::new(svkit_testkit::tool("svctl"))
        .arg("import")
        .arg(&src)
        .output()
        .unwrap();
    expect_code(&o, 0);
    let config = String::from_utf8(o.stdout).unwrap();
    assert!(
        config.contains("\"count\": \"${WORKERS_COUNT}\""),
        "{config}"
    );
    let fx = Fixture::new(&config);
    let sbx = fx.boot_env(&["WORKERS_COUNT=2", "WWWUSER=nobody"]);
    let slots = ["laravel-worker_0", "laravel-worker_1"];
    let mut argv = vec!["svctl", "wait", "up", "--timeout", "60000"];
    argv.extend(slots);
    sbx.run(&argv, 0);
    let o = sbx.sh("ls /run/service | grep laravel-worker");
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), slots);
    assert_eq!(
        stdout(&sbx.sh("stat -c %U /proc/$(s6-svstat -o pid /run/service/laravel-worker_1)"))
            .trim(),
        "nobody"
    );
}
