//! The processes loadgen starts itself: the conformance fixture and gateways in front of an
//! upstream, each from the same target directory as loadgen.

use std::process::Stdio;
use std::time::Duration;

use gateway_tests::spawn_reporting_url;
use tokio::process::Command;

/// A gateway process and the folder of its config and database (removed when dropped, after
/// the process is killed).
pub type Running = (tokio::process::Child, gateway_tests::Scratch);

/// Starts the conformance fixture (answers in microseconds); returns it and its MCP URL.
pub async fn fixture(bin_dir: &std::path::Path) -> (tokio::process::Child, String) {
    spawn_reporting_url(Command::new(bin_dir.join("conformance-fixture")).stderr(Stdio::null()))
        .await
}

/// Starts the gateway binary `bin` in front of `upstream` and waits until it is up; with `auth`,
/// authentication is required and a personal access token with the admin role is made first.
pub async fn gateway(
    bin: &std::path::Path,
    upstream: &str,
    auth: bool,
) -> anyhow::Result<(Running, String, Option<String>)> {
    let dir = gateway_tests::scratch();
    let config = dir.join("gateway.toml");
    // The same text the benchmark scripts use (`scripts/bench-gateway-config`).
    let template = include_str!("../../../../scripts/bench-gateway.toml");
    let template = match auth {
        true => template,
        false => template.split("# with --auth").next().unwrap_or(template),
    };
    let text = template
        .replace("{dir}", &dir.display().to_string())
        .replace("{upstream}", upstream);
    std::fs::write(&config, text)?;
    let token = if auth {
        let out = Command::new(bin)
            .arg("--config")
            .arg(&config)
            .args([
                "token", "create", "--name", "load", "--owner", "load", "--role", "admin",
            ])
            .output()
            .await?;
        anyhow::ensure!(out.status.success(), "token create failed");
        Some(String::from_utf8(out.stdout)?.trim().to_string())
    } else {
        None
    };
    let (child, gateway) = spawn_reporting_url(
        Command::new(bin)
            .arg("--config")
            .arg(&config)
            .env("MCP_GATEWAY_LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", "warn")
            .stderr(Stdio::null()),
    )
    .await;
    let http = reqwest::Client::new();
    let base = gateway.trim_end_matches("/mcp");
    for _ in 0..100 {
        let mut req = http.get(format!("{base}/admin/v1/health"));
        if let Some(t) = &token {
            req = req.bearer_auth(t);
        }
        let h: serde_json::Value = req.send().await?.json().await?;
        if h[0]["status"] == "up" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(((child, dir), gateway, token))
}
