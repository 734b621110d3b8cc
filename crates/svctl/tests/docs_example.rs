//! The example in docs/config.md passes `svctl check`, and the doc names
//! every key the config accepts.

use std::path::Path;
use std::process::Command;

fn doc() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    std::fs::read_to_string(p).expect("docs/config.md")
}

#[test]
fn doc_example_passes_check() {
    let doc = doc();
    let start = doc.find("<!-- svkit:example -->").expect("example marker");
    let rest = &doc[start..];
    let open = rest.find("```json\n").expect("json fence") + "```json\n".len();
    let close = rest[open..].find("```").expect("closing fence");
    let example = &rest[open..open + close];
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("10-example.json"), example).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_svctl"))
        .arg("check")
        .arg("--config-dir")
        .arg(tmp.path())
        .output()
        .expect("run svctl");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn doc_names_every_key() {
    let doc = doc();
    for key in [
        "user",
        "state_dir",
        "sentinel_env",
        "default_program",
        "slots",
        "redirects",
        "name",
        "instances",
        "names",
        "from_dir",
        "path",
        "require_file",
        "command",
        "cwd",
        "env",
        "autostart",
        "if_env",
        "log",
        "dir",
        "stdout",
        "keep",
        "max_bytes",
        "restart",
        "permanent_exit_codes",
        "on_clean_exit",
        "backoff",
        "max_s",
        "reset_after_s",
        "max_deaths",
        "within_s",
        "readiness",
        "notification_fd",
        "check",
        "interval_ms",
        "timeout_ms",
        "down_signal",
        "stop_timeout_ms",
        "match",
        "slot",
        "opt_out_flag",
        "opt_out_env",
        "also_start",
    ] {
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/config.md lacks `{key}`"
        );
    }
}
