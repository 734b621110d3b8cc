//! Property: whatever the argv and env values (any Unicode, quotes, `$()`,
//! backticks, newlines, backslashes, empty strings), the rendered `run`
//! executed by /bin/sh hands the program exactly those bytes. The program
//! is `/bin/sh -c DUMP`, which prints its argv and env NUL-separated.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use svkit::config::{load_layers, FixedInstances};
use svkit::render::{render_slot, RenderEnv};

/// Prints the arg count, each arg, then the environment, all NUL-terminated.
const DUMP: &str = "printf '%s\\0' \"$#\" \"$@\"; env -0";

fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-'\"$`\\\\\n\t (){}*?~#;&|<>=!a-z]{0,12}",
        Just(String::new()),
        Just("'".to_string()),
        Just("$(touch /tmp/svkit-pwned)".to_string()),
        Just("`id`".to_string()),
        Just("\\".to_string()),
        Just("\n".to_string()),
        Just("-n".to_string()),
    ]
    .prop_map(|s| s.replace('\0', ""))
}

fn run_case(args: &[String], env: &BTreeMap<String, String>) -> Result<(), TestCaseError> {
    let mut command = vec![
        "/bin/sh".to_string(),
        "-c".into(),
        DUMP.into(),
        "dump".into(),
    ];
    command.extend(args.iter().cloned());
    let cfg = serde_json::json!({
        "slots": [{ "name": "prop", "command": command, "env": env, "cwd": "/" }]
    });
    let files = vec![(
        Path::new("/etc/svkit/10.json").to_path_buf(),
        serde_json::to_vec(&cfg).map_err(|e| TestCaseError::fail(e.to_string()))?,
    )];
    let v = load_layers(&files, &FixedInstances::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let renv = RenderEnv {
        with_contenv: None,
        s6_bin: None,
        as_root: false,
    };
    let slot = &v.model.slots[0];
    let rendered = render_slot(&v.model, slot, &renv, true);
    let run = rendered
        .file("run")
        .ok_or_else(|| TestCaseError::fail("no run"))?;
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(String::from_utf8_lossy(&run.contents).into_owned())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(
        out.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut fields = out.stdout.split(|&b| b == 0);
    let n: usize = fields
        .next()
        .and_then(|f| std::str::from_utf8(f).ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| TestCaseError::fail("no arg count"))?;
    let got_args: Vec<String> = fields
        .by_ref()
        .take(n)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    prop_assert_eq!(&got_args, &args.to_vec());
    let got_env: BTreeMap<String, String> = fields
        .filter(|f| !f.is_empty())
        .filter_map(|f| {
            let s = String::from_utf8_lossy(f).into_owned();
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    for (k, v) in env {
        prop_assert_eq!(got_env.get(k), Some(v), "env {}", k);
    }
    prop_assert_eq!(got_env.get("SVKIT_SLOT").map(String::as_str), Some("prop"));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn run_passes_argv_and_env_exactly(
        args in proptest::collection::vec(nasty(), 0..6),
        env in proptest::collection::btree_map("T_[A-Za-z0-9_]{0,6}", nasty(), 0..4),
    ) {
        run_case(&args, &env)?;
    }
}

#[test]
fn fixed_nasty_cases() {
    let args: Vec<String> = [
        "", "'", "''", "\"", "$HOME", "$(id)", "`id`", "\\", "\\'", "a\nb", "-e", "--", "*", "~",
        "#", "ünï☃", "'\"'\"'", " ", "\t\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let env: BTreeMap<String, String> = args
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("T_{i}"), v.clone()))
        .collect();
    if let Err(e) = run_case(&args, &env) {
        panic!("{e}");
    }
}
