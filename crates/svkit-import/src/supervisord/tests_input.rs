//! The supervisord importer on hostile input, and a property: whatever it
//! accepts is a valid config; anything else is a located error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use proptest::prelude::*;

use super::tests::write;
use crate::{self as import, Options};

#[test]
fn hostile_input_is_a_clear_error_or_a_result() {
    let t = tempfile::tempdir().unwrap();
    // Binary junk.
    let junk: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let p = write(t.path(), "junk", &junk);
    assert!(super::import(&p, &Options::default()).is_err());
    // 10 MB: one program among 10 MB of comments.
    let mut big = String::from("[program:a]\ncommand=sleep 1\n");
    while big.len() < 10_000_000 {
        big.push_str("; a comment line that pads the file to ten megabytes..........\n");
    }
    let p = write(t.path(), "big.conf", big.as_bytes());
    assert_eq!(
        super::import(&p, &Options::default()).unwrap().slots.len(),
        1
    );
    // 10,000 programs: more than s6-svscan supervises.
    let many: String = (0..10_000)
        .map(|i| format!("[program:p{i}]\ncommand=sleep {i}\n"))
        .collect();
    let p = write(t.path(), "many.conf", many.as_bytes());
    let e = super::import(&p, &Options::default()).unwrap_err();
    assert!(e.what.contains("s6-svscan"), "{e}");
    // A FIFO is never read (a read would wait forever).
    let fifo = t.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let e = super::import(&fifo, &Options::default()).unwrap_err();
    assert!(e.what.contains("not a regular file"), "{e}");
}

/// Keys a program may hold: those the importer reads, then others it
/// reports.
fn keys() -> Vec<&'static str> {
    let others = ["umask", "bogus"];
    super::program::KNOWN
        .iter()
        .copied()
        .chain(others)
        .collect()
}

const VALUES: &[&str] = &[
    "sleep 1",
    "sh -c 'a | b'",
    "x %(ENV_HOME)s",
    "%(program_name)s_%(process_num)02d",
    "%(process_num)d",
    "true",
    "false",
    "unexpected",
    "0",
    "1",
    "3",
    "-1",
    "99999999999",
    "0,2",
    "TERM",
    "QUIT",
    "/var/log/x.log",
    "/dev/stdout",
    "NONE",
    "AUTO",
    "10MB",
    "A=\"1,2\",B=c",
    "A=%(ENV_X)s",
    "root",
    "www-data",
    "Bad User",
    "/srv",
    "rel/dir",
    "%%",
    "%(here)s",
    "'",
    "\"a b\"",
    "x\\",
    "",
];

/// Pairs a real config could hold, so that many cases import.
const PAIRS: &[(&str, &str)] = &[
    ("numprocs", "3"),
    ("process_name", "%(program_name)s_%(process_num)02d"),
    ("process_name", "%(program_name)s-x"),
    ("process_name", "Web.%(process_num)d"),
    ("numprocs_start", "7"),
    ("autostart", "false"),
    ("autorestart", "unexpected"),
    ("autorestart", "false"),
    ("exitcodes", "0,2"),
    ("stopsignal", "QUIT"),
    ("stopwaitsecs", "3"),
    ("user", "www-data"),
    ("stdout_logfile", "/var/log/x.log"),
    ("stdout_logfile", "/dev/stdout"),
    (
        "stdout_logfile",
        "/var/log/%(program_name)s-%(process_num)d.log",
    ),
    ("stdout_logfile_maxbytes", "10MB"),
    ("stdout_logfile_backups", "3"),
    ("environment", "A=\"1,2\",B=c"),
    ("environment", "A=%(ENV_X)s,N=%(process_num)d"),
    ("directory", "/srv/%(program_name)s"),
    ("directory", "rel/dir"),
    ("priority", "5"),
    ("startsecs", "0"),
    ("startretries", "9"),
    ("umask", "022"),
    ("bogus", "x"),
    ("command", "sh -c 'a | b'"),
    ("command", "x %(ENV_HOME)s > /log"),
    ("command", "run --n %(process_num)03d"),
    ("command", "a ; b"),
    ("user", "%(program_name)s"),
];

const HEADERS: &[&str] = &[
    "[program:a]",
    "[program:B_2]",
    "[program:a]",
    "[program:w]",
    "[supervisord]",
    "[group:g]",
    "[eventlistener:e]",
];

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (0..PAIRS.len()).prop_map(|i| format!("{} = {}", PAIRS[i].0, PAIRS[i].1)),
        2 => (prop::sample::select(keys()), 0..VALUES.len()).prop_map(|(k, v)| format!("{k} = {}", VALUES[v])),
        1 => (0..VALUES.len()).prop_map(|v| format!("  {}", VALUES[v])),
        1 => "[ -~]{0,20}",
        1 => Just("; comment".to_owned()),
    ]
}

/// A section: its header, usually a plain command, then keys.
fn section() -> impl Strategy<Value = String> {
    (
        0..HEADERS.len(),
        proptest::option::weighted(0.8, 0..4usize),
        proptest::collection::vec(line(), 0..6),
    )
        .prop_map(|(h, cmd, lines)| {
            let mut s = format!("{}\n", HEADERS[h]);
            if let Some(c) = cmd {
                let c = [
                    "sleep 1",
                    "sh -c 'a | b'",
                    "x %(ENV_HOME)s",
                    "run %(process_num)d",
                ][c];
                s.push_str(&format!("command = {c}\n"));
            }
            for l in lines {
                s.push_str(&l);
                s.push('\n');
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Anything the importer accepts is a config `svctl check` accepts;
    /// anything else is a located error; never a panic.
    #[test]
    fn accepted_means_valid(sections in proptest::collection::vec(section(), 0..4)) {
        let t = tempfile::tempdir().unwrap();
        let p = write(t.path(), "s.conf", sections.concat().as_bytes());
        match super::import(&p, &Options::default()) {
            Ok(i) => {
                let text = import::render(&i.slots);
                let files = vec![(PathBuf::from("/etc/svkit/10.json"), text.into_bytes())];
                let v = svkit::config::load_layers(&files, &svkit::config::FixedInstances::default());
                prop_assert!(v.is_ok(), "{:?}", v.err().map(|e| e.to_string()));
            }
            Err(e) => prop_assert!(e.at.file == p, "{e}"),
        }
    }
}
