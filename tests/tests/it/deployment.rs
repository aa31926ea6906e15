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

/// The gateway's configuration (gateway.json) in rendered manifests.
fn config_json(manifests: &str) -> String {
    let config_map = manifests
        .split("\n---")
        .find(|d| d.contains("kind: ConfigMap"))
        .expect("a ConfigMap");
    let json_start = config_map
        .find("gateway.json: |")
        .expect("gateway.json key")
        + "gateway.json: |".len();
    config_map[json_start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    ") || l.is_empty())
        .map(|l| l.get(4..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
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

    let json = config_json(&manifests);
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
    // The build context leaves out build output and local state.
    let ignore = std::fs::read_to_string(repo().join(".dockerignore")).unwrap();
    for pattern in ["target/", ".git/", "**/*.db", "**/node_modules/"] {
        assert!(
            ignore.lines().any(|l| l == pattern),
            "{pattern} not ignored"
        );
    }
}

/// The image's HEALTHCHECK asks the running gateway (the image has no curl): healthy while it
/// serves, not once it is gone.
#[tokio::test]
async fn the_image_healthcheck_asks_the_gateway_it_describes() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("CMD [\"mcp-gateway\"") && l.contains("healthcheck"))
        .expect("a HEALTHCHECK running mcp-gateway");
    let cmd: Vec<String> = serde_json::from_str(line.trim().trim_start_matches("CMD ")).unwrap();
    assert_eq!(cmd[1..3], ["--config", "/etc/mcp-gateway/gateway.toml"]);
    let dir = gateway_tests::scratch();
    let config = super::fixture_config(&super::sqlite_url(&dir), "");
    let gw = gateway_tests::Gateway::start(&config).await;
    let addr = gw.base.trim_start_matches("http://").to_string();
    let config_path = gw.dir.join("gateway.toml");
    let check = || {
        std::process::Command::new(gateway_tests::gateway_bin())
            .arg("--config")
            .arg(&config_path)
            .args(&cmd[3..])
            .env("MCP_GATEWAY_LISTEN", addr.replace("127.0.0.1", "0.0.0.0"))
            .output()
            .unwrap()
    };
    let out = check();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("healthy"));
    gw.stop().await;
    assert!(
        !check().status.success(),
        "a stopped gateway is not healthy"
    );
}

/// SQLite is kept on a PersistentVolumeClaim unless told otherwise, and then the chart says
/// loudly what is lost; a gateway without authentication on any host name does not start.
#[test]
fn helm_keeps_sqlite_on_a_volume_or_warns_loudly_and_refuses_an_open_gateway() {
    let chart = repo().join("helm/mcp-gateway");
    let render = |sets: &[&str]| {
        let mut cmd = helm();
        cmd.args(["template", "r"]).arg(&chart);
        for s in sets {
            cmd.args(["--set", s]);
        }
        run(&mut cmd)
    };
    let kept = render(&[]);
    assert!(kept.contains("kind: PersistentVolumeClaim"), "{kept}");
    assert!(kept.contains("claimName: r-mcp-gateway-data"));
    assert!(kept.contains("type: Recreate"));
    let postgres = render(&["database.url=postgres://u:p@db/x"]);
    assert!(!postgres.contains("PersistentVolumeClaim") && !postgres.contains("Recreate"));
    let claim = render(&["persistence.existingClaim=mine"]);
    assert!(claim.contains("claimName: mine") && !claim.contains("kind: PersistentVolumeClaim"));
    let lost = render(&["persistence.enabled=false"]);
    assert!(!lost.contains("PersistentVolumeClaim"));
    let notes = run(helm()
        .args(["install", "--dry-run", "r"])
        .arg(&chart)
        .args(["--set", "persistence.enabled=false"]));
    assert!(
        notes.contains("WARNING") && notes.contains("LOST every time the pod restarts"),
        "{notes}"
    );

    // auth.mode = none with the chart's allowed_hosts = ["*"]: the configuration is refused.
    let open = render(&["config.auth.mode=none"]);
    let dir = scratch();
    let path = dir.join("gateway.json");
    std::fs::write(&path, config_json(&open)).unwrap();
    let out = std::process::Command::new(gateway_bin())
        .args(["check-config", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("auth.mode: \"none\" with server.allowed_hosts"),
        "{err}"
    );
}
