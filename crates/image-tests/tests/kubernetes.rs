//! docs/kubernetes.md: its pod spec is valid against the Kubernetes schema
//! (`kubernetes-validate --strict`, the real checker), and the probes that
//! docs/image.md shows are that spec's, word for word. What the spec does
//! is checked on a real engine by tests/docker/run.sh (`kubernetes`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may fail loudly

use std::process::Command;

use svkit_image_tests::*;

pub const KUBERNETES_VALIDATE_INSTALL: &str = "pip install kubernetes-validate";

/// The one ```yaml block of `path`.
fn only_yaml(path: &str) -> String {
    let blocks = fenced_blocks(&read_repo_file(path), "yaml");
    assert_eq!(blocks.len(), 1, "{path} has exactly one ```yaml block");
    blocks.into_iter().next().expect("one block").1
}

/// docs/kubernetes.md's ```yaml blocks: the pod spec, the pod with HTTP
/// probes (`svkit serve`), the Prometheus scrape config.
fn k8s_yaml() -> Vec<String> {
    let blocks = fenced_blocks(&read_repo_file("docs/kubernetes.md"), "yaml");
    assert_eq!(
        blocks.len(),
        3,
        "docs/kubernetes.md has three ```yaml blocks"
    );
    blocks.into_iter().map(|(_, b)| b).collect()
}

fn validate_pod(validate: &std::path::Path, spec: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("pod.yaml");
    std::fs::write(&file, spec).expect("write pod.yaml");
    let out = Command::new(validate)
        .arg("--strict")
        .arg(&file)
        .output()
        .expect("run kubernetes-validate");
    assert!(
        out.status.success(),
        "kubernetes-validate --strict on docs/kubernetes.md's pod spec:\n{}{}\n{spec}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn pod_spec_validates_against_the_kubernetes_schema() {
    let Some(validate) = checker(
        "pod_spec_validates_against_the_kubernetes_schema",
        "kubernetes-validate",
        KUBERNETES_VALIDATE_INSTALL,
    ) else {
        return;
    };
    let yaml = k8s_yaml();
    let spec = &yaml[0];
    validate_pod(&validate, spec);
    // The HTTP probes of `svkit serve`: a pod of their own, as valid.
    let http = &yaml[1];
    validate_pod(&validate, http);
    for key in [
        "httpGet: { path: \"/readyz?slot=",
        "httpGet: { path: /livez",
        "prometheus.io/port",
    ] {
        assert!(http.contains(key), "the HTTP pod spec lacks {key}");
    }
    assert!(yaml[2].contains("metrics_path: /metrics"), "{}", yaml[2]);
    // What the docker scenario translates must be there to translate.
    for key in [
        "kind: Pod",
        "runAsNonRoot: true",
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "fsGroup:",
        "terminationGracePeriodSeconds:",
        "startupProbe:",
        "readinessProbe:",
        "livenessProbe:",
    ] {
        assert!(spec.contains(key), "the pod spec lacks {key}");
    }
}

#[test]
fn image_md_shows_the_pod_specs_probes() {
    let spec = k8s_yaml().swap_remove(0);
    let probes = only_yaml("docs/image.md");
    assert!(
        probes.contains("svctl wait") || probes.contains("\"svctl\""),
        "docs/image.md's yaml block shows no probe:\n{probes}"
    );
    assert!(
        spec.contains(&probes),
        "docs/image.md's probes are not a part of docs/kubernetes.md's pod spec, as written:\n{probes}"
    );
    assert!(
        read_repo_file("docs/image.md").contains("(kubernetes.md)"),
        "docs/image.md links docs/kubernetes.md"
    );
}
