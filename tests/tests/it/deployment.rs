//! Deployment artefacts: the Helm chart lints, renders with default and all-options values into
//! manifests valid against the Kubernetes schemas, and renders a configuration the gateway's own
//! loader accepts; the Dockerfile copies only files that exist.

use std::path::{Path, PathBuf};

use gateway_tests::{gateway_bin, peers, scratch};
use serde_json::Value;

fn repo() -> PathBuf {
    gateway_tests::package_dir().parent().unwrap().to_path_buf()
}

fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn helm() -> std::process::Command {
    std::process::Command::new(peers().join("bin/helm"))
}

/// Renders the chart; checks the manifests and the configuration in them; returns the manifests.
fn render_and_check(values: Option<&Path>, expect_upstreams: &[&str]) -> String {
    let chart = repo().join("helm/mcp-gateway");
    let mut cmd = helm();
    cmd.args(["template", "release"]).arg(&chart);
    if let Some(v) = values {
        cmd.arg("-f").arg(v);
    }
    let manifests = run(&mut cmd);
    let dir = scratch();
    let file = dir.join("manifests.yaml");
    std::fs::write(&file, &manifests).unwrap();
    // ServiceMonitor is a CRD: no schema ships for it, the tool says so and does not fail.
    run(
        std::process::Command::new(peers().join("venv/bin/kubernetes-validate"))
            .args(["--strict", "--quiet"])
            .arg(&file),
    );

    let config_map = manifests
        .split("\n---")
        .find(|d| d.contains("kind: ConfigMap"))
        .expect("a ConfigMap");
    let json_start = config_map
        .find("gateway.json: |")
        .expect("gateway.json key")
        + "gateway.json: |".len();
    let json: String = config_map[json_start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    ") || l.is_empty())
        .map(|l| l.get(4..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let parsed: Value = serde_json::from_str(&json).expect("the ConfigMap holds JSON");
    assert_eq!(parsed["server"]["listen"], "0.0.0.0:8080");
    let path = dir.join("gateway.json");
    std::fs::write(&path, json).unwrap();
    let out = run(std::process::Command::new(gateway_bin())
        .args(["check-config", "--config"])
        .arg(&path)
        .env("MCP_GATEWAY_DATABASE_URL", "postgres://u:p@db/x"));
    for u in expect_upstreams {
        assert!(out.contains(u), "upstream {u} missing from {out}");
    }
    manifests
}

#[test]
fn helm_chart_lints_renders_validates_and_configures_the_gateway() {
    run(helm().arg("lint").arg(repo().join("helm/mcp-gateway")));
    render_and_check(None, &[]);
    let all = render_and_check(
        Some(&repo().join("tests/helm/all-options.yaml")),
        &["time", "fs"],
    );
    // What operators switch on lands in the manifests (each part validated above).
    for needle in [
        "kind: NetworkPolicy",
        "kubernetes.io/metadata.name: ingress-nginx",
        "preStop:",
        "seconds: 10",
        "startupProbe:",
        "envFrom:",
        "mountPath: /etc/ssl/corporate",
        "topologySpreadConstraints:",
        "team: platform",
        "value: \"info,gateway::upstream=debug\"",
        "\"helm.sh/hook\": test",
        "value: \"0.0.0.0:9090\"",
        "containerPort: 9090",
        "port: ops",
        "kubernetes.io/metadata.name: monitoring",
    ] {
        assert!(all.contains(needle), "{needle} missing from the manifests");
    }
}

#[test]
fn the_chart_schema_is_the_gateways_config_schema_and_helm_enforces_it() {
    let out = std::process::Command::new(gateway_bin())
        .args(["config-schema", "--chart-values"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let generated: Value = serde_json::from_slice(&out.stdout).unwrap();
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("helm/mcp-gateway/values.schema.json")).unwrap(),
    )
    .unwrap();
    assert!(
        generated == committed,
        "helm/mcp-gateway/values.schema.json is stale: regenerate it with \
         `mcp-gateway config-schema --chart-values > helm/mcp-gateway/values.schema.json`"
    );
    assert!(
        generated["$defs"]["UpstreamWire"]["properties"]["tools"].is_object(),
        "curation is in the schema"
    );
    for (set, complaint) in [
        ("config.server.lisen=x", "lisen"),
        ("config.upstreams[0].transport=stdoi", "transport"),
    ] {
        let out = helm()
            .args(["template", "r"])
            .arg(repo().join("helm/mcp-gateway"))
            .args(["--set", "config.upstreams[0].name=a", "--set", set])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(complaint),
            "{set} must be refused by the schema: {err}"
        );
    }
}

#[test]
fn helm_refuses_several_replicas_without_postgres() {
    let out = helm()
        .args(["template", "r"])
        .arg(repo().join("helm/mcp-gateway"))
        .args(["--set", "replicaCount=2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Postgres"));
    let out = helm()
        .args(["template", "r"])
        .arg(repo().join("helm/mcp-gateway"))
        .args([
            "--set",
            "replicaCount=2",
            "--set",
            "database.url=postgres://x/y",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("session key"));
}

#[test]
fn dockerfile_copies_files_that_exist() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let mut copied = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for src in &parts[1..parts.len() - 1] {
            assert!(
                repo().join(src).exists(),
                "Dockerfile copies {src}, which does not exist"
            );
            copied += 1;
        }
    }
    assert!(copied >= 6, "the Dockerfile copies the workspace");
}
