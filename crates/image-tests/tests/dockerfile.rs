//! The facts the demo image's `Dockerfile` must hold,
//! read from the file itself, so a careless edit fails here before it
//! reaches a registry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;

use svkit_image_tests::*;

fn dockerfile() -> Dockerfile {
    Dockerfile::load(&repo_root().join("Dockerfile"))
}

/// The runtime image less its binaries: both ways of getting them (the
/// Rust builder, or prebuilt ones for an offline build) start from it.
fn base(d: &Dockerfile) -> &Stage {
    d.stage("base").expect("a stage named base")
}

/// The RUN of the final stage that installs s6-overlay.
fn s6_install_run(d: &Dockerfile) -> Instruction {
    let runs: Vec<&Instruction> = base(d)
        .all("RUN")
        .filter(|i| i.args.contains("s6-overlay"))
        .collect();
    assert_eq!(runs.len(), 1, "one RUN installs s6-overlay: {runs:#?}");
    runs[0].clone()
}

/// The text of one `case` arm (`PATTERN) ... ;;`) in a shell snippet.
fn case_arm<'a>(script: &'a str, pattern: &str) -> &'a str {
    let start = script
        .find(&format!("{pattern})"))
        .unwrap_or_else(|| panic!("no `{pattern})` arm in: {script}"));
    let arm = &script[start..];
    &arm[..arm.find(";;").unwrap_or(arm.len())]
}

/// base (Debian slim + s6-overlay + rootfs), then `prebuilt` before the
/// Rust builder (the legacy builder builds every stage before its target,
/// so `--target prebuilt` must never need the rust image), then the default
/// image: base plus the builder's binaries.
#[test]
fn stages_base_prebuilt_builder_then_the_image() {
    let d = dockerfile();
    let names: Vec<Option<&str>> = d.stages.iter().map(|s| s.alias.as_deref()).collect();
    assert_eq!(
        names,
        [Some("base"), Some("prebuilt"), Some("builder"), None],
        "{:?}",
        d.stages
    );
    let builder = d.stage("builder").expect("a stage named builder");
    assert!(
        builder.from.starts_with("rust:") && builder.from.contains("slim"),
        "builder from a slim Rust image: {}",
        builder.from
    );
    assert_eq!(base(&d).from, "debian:bookworm-slim");
    // Same Debian release on both sides: the binaries link against glibc.
    assert!(builder.from.contains("bookworm"), "{}", builder.from);
    assert_eq!(d.final_stage().from, "base");
    assert_eq!(d.stage("prebuilt").expect("prebuilt").from, "base");
    // The prebuilt stage copies exactly the binaries the builder ships.
    let copied: BTreeSet<String> = d
        .stage("prebuilt")
        .expect("prebuilt")
        .all("COPY")
        .flat_map(|i| i.rest())
        .filter_map(|w| w.strip_prefix("dist/bin/").map(String::from))
        .collect();
    let ws = workspace_packages();
    let bins: BTreeSet<String> = IMAGE_PACKAGES
        .iter()
        .flat_map(|p| ws.get(*p).cloned().unwrap_or_default())
        .collect();
    assert_eq!(copied, bins);
}

#[test]
fn s6_overlay_is_pinned_to_a_3_2_release() {
    let d = dockerfile();
    let args = base(&d).args();
    let v = args
        .get("S6_OVERLAY_VERSION")
        .expect("ARG S6_OVERLAY_VERSION in the runtime stage");
    let parts: Vec<&str> = v.split('.').collect();
    assert!(
        parts.len() == 4
            && parts[..2] == ["3", "2"]
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
        "s6-overlay pinned to an exact 3.2.x.y release, got {v:?}"
    );
    // The hashes below are those of exactly this release.
    assert_eq!(v, S6_OVERLAY_VERSION);
}

#[test]
fn s6_overlay_hashes_are_the_spec_values() {
    let d = dockerfile();
    let args = base(&d).args();
    for (tarball, arg, sha) in S6_OVERLAY_PINS {
        assert_eq!(
            args.get(arg).map(String::as_str),
            Some(sha),
            "ARG {arg} ({tarball}) must be the pinned value"
        );
    }
    match spec_pins() {
        Some((path, spec)) => {
            for (tarball, _, sha) in S6_OVERLAY_PINS {
                assert_eq!(
                    spec.get(tarball).map(String::as_str),
                    Some(sha),
                    "{tarball}: this test's copy differs from {}",
                    path.display()
                );
            }
        }
        None => svkit_testkit::skip(
            "s6_overlay_hashes_are_the_spec_values",
            "SPEC.md not found beside the repository (set SVKIT_SPEC): compared with this test's copy of its pin table only",
        ),
    }
}

#[test]
fn s6_overlay_is_downloaded_with_retries_and_verified_before_extraction() {
    let d = dockerfile();
    let run = s6_install_run(&d);
    let a = &run.args;
    assert!(
        a.contains("https://github.com/just-containers/s6-overlay/releases/download/v${S6_OVERLAY_VERSION}"),
        "the release URL pattern: {a}"
    );
    for needle in ["curl ", "--retry", "--fail"] {
        assert!(a.contains(needle), "the download uses `{needle}`: {a}");
    }
    for (_, arg, _) in S6_OVERLAY_PINS {
        assert!(a.contains(arg), "{arg} is used by the install step");
    }
    let check = a.find("sha256sum -c").expect("sha256sum -c");
    let extract = a.find("tar -C / -Jxpf").expect("tar -C / -Jxpf");
    assert!(check < extract, "verify before extracting");
    // xz-utils for -J, curl and CA certificates for the HTTPS download.
    for pkg in [
        "xz-utils",
        "curl",
        "ca-certificates",
        "--no-install-recommends",
    ] {
        assert!(a.contains(pkg), "apt-get install ... {pkg}: {a}");
    }
    // ADD cannot retry and would skip the hash check.
    for i in d.instructions().filter(|i| i.keyword == "ADD") {
        assert!(!i.args.contains("://"), "line {}: ADD of a URL", i.line);
    }
}

#[test]
fn both_architectures_are_mapped() {
    let d = dockerfile();
    let stage = base(&d);
    let arg_line = stage
        .all("ARG")
        .find(|i| {
            i.args
                .split_whitespace()
                .any(|w| w == "TARGETARCH" || w.starts_with("TARGETARCH="))
        })
        .expect("ARG TARGETARCH in the runtime stage (else it is empty there)")
        .line;
    let run = s6_install_run(&d);
    assert!(
        arg_line < run.line,
        "ARG TARGETARCH before the install step"
    );
    assert!(
        run.args.contains("TARGETARCH"),
        "the install step reads TARGETARCH"
    );
    let amd64 = case_arm(&run.args, "amd64");
    assert!(
        amd64.contains("x86_64") && amd64.contains("S6_OVERLAY_X86_64_SHA256"),
        "amd64 -> x86_64 with its hash: {amd64}"
    );
    let arm64 = case_arm(&run.args, "arm64");
    assert!(
        arm64.contains("aarch64") && arm64.contains("S6_OVERLAY_AARCH64_SHA256"),
        "arm64 -> aarch64 with its hash: {arm64}"
    );
    let other = case_arm(&run.args, "*");
    assert!(
        other.contains("exit 1"),
        "an unknown arch fails the build: {other}"
    );
    for t in ["noarch", "symlinks-noarch"] {
        assert!(run.args.contains(t), "the {t} tarball is installed");
    }
}

#[test]
fn entrypoint_is_init_then_svkit_wrap() {
    let d = dockerfile();
    let stage = base(&d);
    let ep = stage.last("ENTRYPOINT").expect("ENTRYPOINT");
    assert_eq!(
        ep.exec_form(),
        Some(ENTRYPOINT.map(String::from).to_vec()),
        "ENTRYPOINT must be exactly {ENTRYPOINT:?}, in exec form: {}",
        ep.args
    );
    let cmd = stage
        .last("CMD")
        .expect("a CMD")
        .exec_form()
        .expect("CMD in exec form");
    assert!(!cmd.is_empty(), "a non-empty CMD");
}

#[test]
fn runtime_user_is_app_with_a_fixed_uid_and_data_home() {
    let d = dockerfile();
    let stage = base(&d);
    let useradd = stage
        .all("RUN")
        .find(|i| i.args.contains("useradd"))
        .expect("the runtime user is created with useradd");
    let a = &useradd.args;
    assert!(
        a.contains("--uid") && a.contains("--gid"),
        "fixed uid/gid: {a}"
    );
    assert!(a.contains("--home-dir /data"), "home /data: {a}");
    assert!(a.contains(" app"), "user app: {a}");
    let volume = stage.last("VOLUME").expect("VOLUME");
    assert!(
        volume
            .args
            .split_whitespace()
            .any(|w| w.trim_matches(['[', ']', '"', ',']) == "/data"),
        "VOLUME /data: {}",
        volume.args
    );
    // The config's user is the one created, its state lives on the volume.
    let dir = repo_root().join("rootfs/etc/svkit");
    let mut configs = 0;
    for e in std::fs::read_dir(&dir).expect("rootfs/etc/svkit").flatten() {
        if e.path().extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        configs += 1;
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(e.path()).expect("read config"))
                .expect("config is JSON");
        if let Some(u) = v.get("user") {
            assert_eq!(u, "app", "{}: user", e.path().display());
        }
        if let Some(s) = v.get("state_dir").and_then(|s| s.as_str()) {
            assert!(
                s.starts_with("/data/"),
                "state_dir {s} must be on the /data volume"
            );
        }
    }
    assert!(configs > 0, "no config in {}", dir.display());
}

#[test]
fn no_root_user_left_or_the_reason_is_documented() {
    let d = dockerfile();
    match base(&d).last("USER") {
        Some(u) => {
            let who = u.args.split(':').next().unwrap_or("").trim();
            assert!(
                who != "root" && who != "0",
                "line {}: the last USER is root",
                u.line
            );
        }
        None => {
            // s6-overlay's /init runs as root; the slots and the foreground
            // CMD drop to `app`. The Dockerfile must say so.
            let text: String = d
                .comments
                .iter()
                .map(|(_, c)| c.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                text.contains("No USER") && text.contains("s6-setuidgid"),
                "no USER instruction: the Dockerfile must explain why (a `No USER` comment naming s6-setuidgid)"
            );
        }
    }
}

#[test]
fn healthcheck_is_svctl_status() {
    let d = dockerfile();
    let hc: Vec<&Instruction> = base(&d).all("HEALTHCHECK").collect();
    assert_eq!(hc.len(), 1, "one HEALTHCHECK");
    assert!(hc[0].args.contains("svctl status"), "{}", hc[0].args);
    assert!(hc[0].args.contains("CMD"), "{}", hc[0].args);
}

#[test]
fn builder_builds_only_the_image_packages() {
    let d = dockerfile();
    let builder = d.stage("builder").expect("builder stage");
    let builds: Vec<&Instruction> = builder
        .all("RUN")
        .filter(|i| i.args.contains("cargo build"))
        .collect();
    assert_eq!(builds.len(), 1, "one cargo build");
    let a = &builds[0].args;
    let words: Vec<&str> = a.split_whitespace().collect();
    for flag in ["--release", "--locked"] {
        assert!(words.contains(&flag), "cargo build {flag}: {a}");
    }
    for flag in ["--workspace", "--all", "--all-targets", "--bins"] {
        assert!(
            !words.contains(&flag),
            "cargo build {flag} builds too much: {a}"
        );
    }
    // The cargo command: from `cargo build` to the next `&&` or `;`.
    let cargo = &a[a.find("cargo build").expect("cargo build")..];
    let cargo = &cargo[..cargo.find(['&', ';']).unwrap_or(cargo.len())];
    let cargo_words: Vec<&str> = cargo.split_whitespace().collect();
    let packages: BTreeSet<&str> = cargo_words
        .windows(2)
        .filter(|w| w[0] == "-p" || w[0] == "--package")
        .map(|w| w[1])
        .collect();
    for flag in ["--release", "--locked"] {
        assert!(cargo_words.contains(&flag), "cargo build {flag}: {cargo}");
    }
    for flag in ["--workspace", "--all", "--all-targets", "--bins"] {
        assert!(
            !cargo_words.contains(&flag),
            "cargo build {flag} builds too much: {cargo}"
        );
    }
    assert_eq!(
        packages,
        IMAGE_PACKAGES.into_iter().collect::<BTreeSet<_>>()
    );
    for i in d.instructions() {
        for dev in DEV_ONLY_PACKAGES {
            assert!(
                !i.args.contains(dev),
                "line {}: {} mentions the dev-only {dev}",
                i.line,
                i.keyword
            );
        }
    }
    // Every package exists, and exactly its binaries are shipped.
    let ws = workspace_packages();
    let mut bins = BTreeSet::new();
    for p in IMAGE_PACKAGES {
        let b = ws
            .get(p)
            .unwrap_or_else(|| panic!("-p {p}: no such workspace package ({:?})", ws.keys()));
        assert!(!b.is_empty(), "package {p} has no binary");
        bins.extend(b.iter().cloned());
    }
    // .cargo/config.toml names the host tuple: target/TUPLE/release/.
    assert!(
        a.contains(r#"rel="target/$(rustc --print host-tuple)/release""#),
        "the binaries are copied out of target/HOST-TUPLE/release: {a}"
    );
    let copied: BTreeSet<String> = a
        .split_whitespace()
        .filter_map(|w| w.strip_prefix(r#""${rel}/"#)?.strip_suffix('"'))
        .map(String::from)
        .collect();
    assert_eq!(
        copied, bins,
        "the binaries copied out of target/TUPLE/release"
    );
    let to_bin = d
        .final_stage()
        .all("COPY")
        .find(|i| i.flag("from").as_deref() == Some("builder"))
        .expect("COPY --from=builder in the runtime stage");
    assert_eq!(
        to_bin.rest().last().map(String::as_str),
        Some("/usr/local/bin/")
    );
}

#[test]
fn rootfs_is_copied_and_its_hooks_are_executable() {
    let d = dockerfile();
    assert!(
        base(&d)
            .all("COPY")
            .any(|i| i.flag("from").is_none() && i.rest() == ["rootfs/", "/"]),
        "COPY rootfs/ / in the runtime stage"
    );
    for hook in [
        "rootfs/etc/cont-init.d/50-svkit-reconcile",
        "rootfs/etc/cont-finish.d/50-svkit-stop",
    ] {
        let p = repo_root().join(hook);
        let mode = std::fs::metadata(&p)
            .unwrap_or_else(|e| panic!("{hook}: {e}"))
            .permissions()
            .mode();
        assert!(mode & 0o111 == 0o111, "{hook} is not executable ({mode:o})");
    }
    let stop = read_repo_file("rootfs/etc/cont-finish.d/50-svkit-stop");
    assert!(
        stop.contains("svctl stop --all --wait --timeout"),
        "the cont-finish hook stops every slot"
    );
    let init = read_repo_file("rootfs/etc/cont-init.d/50-svkit-reconcile");
    assert!(
        init.contains("svkit-reconcile"),
        "the cont-init hook runs svkit-reconcile"
    );
}

#[test]
fn s6_overlay_settings() {
    let d = dockerfile();
    let env = base(&d).env();
    assert_eq!(
        env.get("S6_BEHAVIOUR_IF_STAGE2_FAILS").map(String::as_str),
        Some("2"),
        "a failing svkit-reconcile must stop the container"
    );
    // The cont-finish hook bounds itself at svctl's 5 s + 1 s; the backstop
    // must not cut it shorter.
    let finish: u64 = env
        .get("S6_KILL_FINISH_MAXTIME")
        .expect("S6_KILL_FINISH_MAXTIME (s6-overlay 3.2.3.0 waits forever without it)")
        .parse()
        .expect("S6_KILL_FINISH_MAXTIME in ms");
    assert!(
        finish > 6000,
        "S6_KILL_FINISH_MAXTIME={finish} cuts the hook short"
    );
    // `docker exec C s6-svstat ...` needs the s6 binaries on the image's
    // PATH: no public hash pins symlinks-arch for release builds.
    let path = env.get("PATH").expect("ENV PATH");
    assert!(path.starts_with("/command:"), "{path}");
    // docker stop ends the container with 0 (README, docs/image.md): the
    // image must not switch that to the CMD's 143 behind the docs' back.
    assert!(!env.contains_key("S6_CMD_RECEIVE_SIGNALS"), "{env:?}");
}

#[test]
fn dockerignore_keeps_the_build_inputs() {
    let text = read_repo_file(".dockerignore");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if lines.contains(&"*") {
        for keep in [
            "!Cargo.toml",
            "!Cargo.lock",
            "!.cargo/",
            "!crates/",
            "!rootfs/",
        ] {
            assert!(
                lines.contains(&keep),
                ".dockerignore must re-include {keep}"
            );
        }
    }
    assert!(
        lines.iter().any(|l| l.ends_with("target")),
        ".dockerignore must leave target/ out of the context"
    );
}
