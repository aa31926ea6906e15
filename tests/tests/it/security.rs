//! Security end to end: OAuth access tokens from a real OpenID provider (npm `oidc-provider`),
//! personal access tokens and their revocation across replicas, roles that see and call
//! different tools, rate limits, and an audit log that is complete and tamper-evident.

use std::time::Duration;

use gateway_tests::{python_client_as, Gateway, Idp, RawClient};
use serde_json::{json, Value};
use tokio::process::Command;

use super::{fixture_config, sqlite_url};

const RESOURCE: &str = "https://gateway.test/mcp";

const ROLES: &str = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "reader"
tools = ["fx__echo"]

[[roles]]
name = "ops"
upstreams = ["fx"]
"#;

/// A 2026-07-28 request with a bearer token (or none): (status, headers, body).
async fn call_as(
    url: &str,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = p.get("name").and_then(Value::as_str) {
        req = req.header("mcp-name", name);
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": p}))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

/// The upstream tools a list shows, after the gateway's own meta-tools (which every caller
/// gets first: they search and call only what the caller may use).
fn tool_names(body: &Value) -> Vec<String> {
    let all: Vec<String> = body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {body}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        all[..2],
        ["search_tools", "call_tool"],
        "meta-tools first: {body}"
    );
    all[2..].to_vec()
}

fn challenge(h: &reqwest::header::HeaderMap) -> String {
    h.get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// The payload of a JWT with a different header and no signature (`alg: none`).
fn unsigned(token: &str) -> String {
    use base64::Engine;
    let enc = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = token.split('.').nth(1).unwrap();
    format!(
        "{}.{payload}.",
        enc.encode(r#"{"alg":"none","typ":"at+jwt"}"#)
    )
}

#[tokio::test]
async fn oauth_access_tokens_from_a_real_identity_provider() {
    let clients = json!([
        {"client_id": "agent", "client_secret": "agent-secret", "scope": "mcp other"},
        {"client_id": "brief", "client_secret": "brief-secret", "scope": "mcp", "ttl": 1}
    ]);
    let idp = Idp::start(clients.clone()).await;
    let stranger = Idp::start(clients).await;
    let dir = gateway_tests::scratch();
    let config = format!(
        "{}\n[auth]\nmode = \"required\"\nresource = \"{RESOURCE}\"\nrequired_scopes = [\"mcp\"]\n\
         leeway_secs = 0\njwks_min_refresh_secs = 0\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"agent\"\nrole = \"ops\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"brief\"\nrole = \"reader\"\n{ROLES}",
        fixture_config(&sqlite_url(&dir), ""),
        idp.issuer
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    let list = |t: Option<String>| {
        let url = gw.mcp.clone();
        async move { call_as(&url, t.as_deref(), "tools/list", json!({})).await }
    };

    // No token: 401 naming the metadata, which names the issuer.
    let (status, h, _) = list(None).await;
    assert_eq!(status, 401);
    let c = challenge(&h);
    let meta_url = format!("{}/.well-known/oauth-protected-resource/mcp", gw.base);
    assert!(
        c.starts_with("Bearer ")
            && c.contains(&format!(
                "resource_metadata=\"{}",
                "https://gateway.test/.well-known/oauth-protected-resource/mcp"
            )),
        "{c}"
    );
    let meta: Value = reqwest::get(&meta_url).await.unwrap().json().await.unwrap();
    assert_eq!(meta["resource"], RESOURCE);
    assert_eq!(meta["authorization_servers"], json!([idp.issuer]));
    assert_eq!(meta["scopes_supported"], json!(["mcp"]));

    // The right audience and scope: in, with the role its claims map to.
    let good = idp.token("agent", "agent-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(good.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert!(tool_names(&body).contains(&"fx__pid".to_string()));
    let brief = idp.token("brief", "brief-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(brief.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        tool_names(&body),
        ["fx__echo"],
        "the reader role sees one tool"
    );

    let refused = |token: String, why: &'static str| {
        let url = gw.mcp.clone();
        async move {
            let (status, h, body) = call_as(&url, Some(&token), "tools/list", json!({})).await;
            assert_eq!(status, 401, "{why}: {body}");
            let c = challenge(&h);
            assert!(
                c.contains("error=\"invalid_token\"") && c.contains("resource_metadata="),
                "{why}: {c}"
            );
            c
        }
    };
    let c = refused(
        idp.token("agent", "agent-secret", "mcp", "https://other.test/mcp")
            .await,
        "wrong audience",
    )
    .await;
    assert!(c.contains("not for this resource"), "{c}");
    let c = refused(
        stranger
            .token("agent", "agent-secret", "mcp", RESOURCE)
            .await,
        "wrong issuer",
    )
    .await;
    assert!(c.contains("not trusted"), "{c}");
    let mut bad_sig = good.clone();
    let last = bad_sig.pop().unwrap();
    bad_sig.push(if last == 'A' { 'B' } else { 'A' });
    refused(bad_sig, "bad signature").await;
    refused(unsigned(&good), "alg none").await;
    refused("not.a.jwt".into(), "garbage").await;

    // Missing scope: 403 insufficient_scope.
    let other = idp.token("agent", "agent-secret", "other", RESOURCE).await;
    let (status, h, _) = list(Some(other)).await;
    assert_eq!(status, 403);
    let c = challenge(&h);
    assert!(
        c.contains("error=\"insufficient_scope\"") && c.contains("scope=\"mcp\""),
        "{c}"
    );

    // Expired (ttl 1 s, no leeway): waiting for the clock is the point here.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let c = refused(brief, "expired").await;
    assert!(c.contains("expired"), "{c}");

    // A key rotated out: once the gateway has seen the new key, the old one is refused.
    let (status, _, _) = list(Some(good.clone())).await;
    assert_eq!(status, 200);
    idp.rotate().await;
    let fresh = idp.token("agent", "agent-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(fresh.clone())).await;
    assert_eq!(status, 200, "a token signed with the new key: {body}");
    refused(good, "rotated-out key").await;

    // Real clients with the bearer token: the Python SDK and the Inspector CLI.
    let report = python_client_as(
        &gw.mcp,
        "default",
        &json!([["fx__echo", {"message": "through oauth"}]]),
        &gw.log(),
        Some(&fresh),
    )
    .await;
    assert_eq!(report["results"], json!(["through oauth"]));
    let report = python_client_as(&gw.mcp, "legacy", &json!([]), &gw.log(), Some(&fresh)).await;
    assert!(report["tools"].as_array().unwrap().len() > 1);
    let auth = format!("Authorization: Bearer {fresh}");
    let listed =
        gateway_tests::inspector(&gw.mcp, &["--method", "tools/list", "--header", &auth]).await;
    assert!(listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "fx__pid"));
}

async fn admin(
    gw: &Gateway,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method, format!("{}{path}", gw.base))
        .bearer_auth(gw.admin_token.as_deref().unwrap());
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn personal_access_tokens_are_shown_once_and_revoked_on_every_replica() {
    let db = gateway_tests::postgres_database().await;
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\n",
        fixture_config(&db, "")
    );
    let a = Gateway::start_secured(&config, &[]).await;
    let b = Gateway::start_secured(&config, &[]).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;

    let (status, created) = admin(
        &a,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "ci", "owner": "carol", "roles": ["reader"], "expires_in_days": 30})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().unwrap().to_string();
    let id = created["id"].as_str().unwrap().to_string();
    assert!(
        token.starts_with(&format!("mcpgw_{id}_")),
        "recognisable prefix: {token}"
    );
    let (status, bad) = admin(
        &a,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "x", "owner": "y", "roles": ["nope"]})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");

    // Stored as a hash only: the list and the database never hold the token.
    let (_, listed) = admin(&a, reqwest::Method::GET, "/admin/v1/tokens", None).await;
    assert!(!listed.to_string().contains(&token));
    let mine = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(mine["owner"], "carol");
    assert!(mine["expires_at"].as_i64().unwrap() > mine["created_at"].as_i64().unwrap());
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let stored: String = sqlx::query_scalar("SELECT token_hash FROM access_tokens WHERE id = $1")
        .bind(&id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(!stored.contains(&token[10..]) && stored.len() == 64);

    // Used on the other replica; last-used time recorded.
    let (status, _, body) = call_as(&b.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(tool_names(&body), ["fx__echo"]);
    let mut used = false;
    for _ in 0..40 {
        let (_, listed) = admin(&a, reqwest::Method::GET, "/admin/v1/tokens", None).await;
        used = listed
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str() && t["last_used_at"].is_i64());
        if used {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(used, "last_used_at is written");

    // Revoked on a: refused by a at once and by b as soon as the registry's notification
    // arrives (b trusts a verified token from memory for 10 s otherwise: the deadline here is far
    // shorter, so only the notification can make b refuse in time).
    let (status, revoked) = admin(
        &a,
        reqwest::Method::DELETE,
        &format!("/admin/v1/tokens/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(revoked["revoked_at"].is_i64());
    let (status, h, _) = call_as(&a.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge(&h).contains("revoked"), "{}", challenge(&h));
    let mut refused_by_b = None;
    for _ in 0..20 {
        let (status, h, _) = call_as(&b.mcp, Some(&token), "tools/list", json!({})).await;
        if status == 401 {
            refused_by_b = Some(challenge(&h));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = refused_by_b.expect("b refuses the revoked token within a second");
    assert!(refused.contains("revoked"), "{refused}");
    // A token that is ours in form but unknown, and a forged secret of a real id.
    let (status, _, _) = call_as(
        &a.mcp,
        Some(&format!("mcpgw_{id}_forged")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
    // The non-admin token is refused by the admin API; revocation is audited (the audit
    // writer is asynchronous: the row may take a moment).
    let mut audit = Value::Null;
    for _ in 0..40 {
        audit = admin(
            &a,
            reqwest::Method::GET,
            "/admin/v1/audit?action=admin.token.revoke",
            None,
        )
        .await
        .1;
        if audit[0]["target"] == id.as_str() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(audit[0]["target"], id.as_str(), "{audit}");
    assert_eq!(audit[0]["principal"], "pat:root");
}

/// A gateway requiring tokens, with [`ROLES`], in front of the fixture (`fx`, up).
async fn fixture_with_roles() -> Gateway {
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\n",
        fixture_config(super::SQLITE_IN_ITS_FOLDER, "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    gw
}

#[tokio::test]
async fn roles_see_and_call_different_tools_and_denials_are_audited() {
    let gw = fixture_with_roles().await;
    let mut tokens = Vec::new();
    // Rita also holds `reader-extra`, a role of the API's that grants nothing yet.
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader-extra",
        Some(json!({"name": "reader-extra"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    for (owner, role, roles) in [
        ("rita", "reader", json!(["reader", "reader-extra"])),
        ("otto", "ops", json!(["ops"])),
    ] {
        let (status, t) = admin(
            &gw,
            reqwest::Method::POST,
            "/admin/v1/tokens",
            Some(json!({"name": role, "owner": owner, "roles": roles})),
        )
        .await;
        assert_eq!(status, 201);
        tokens.push(t["token"].as_str().unwrap().to_string());
    }
    let mut reader = RawClient::initialize_as(&gw.mcp, json!({}), Some(&tokens[0])).await;
    let mut ops = RawClient::initialize_as(&gw.mcp, json!({}), Some(&tokens[1])).await;
    let names = |r: &Value| -> Vec<String> { tool_names(r) };
    let seen_by_reader = names(&reader.request("tools/list", json!({})).await);
    let seen_by_ops = names(&ops.request("tools/list", json!({})).await);
    assert_eq!(seen_by_reader, ["fx__echo"]);
    assert!(seen_by_ops.len() > 3 && seen_by_ops.contains(&"fx__pid".to_string()));

    // Denied looks exactly like unknown.
    let denied = reader
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await;
    let unknown = reader
        .request(
            "tools/call",
            json!({"name": "fx__nothing", "arguments": {}}),
        )
        .await;
    assert_eq!(denied["error"]["code"], unknown["error"]["code"]);
    assert_eq!(denied["error"]["message"], "unknown tool: fx__pid");
    let ok = reader
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "hi", "api_key": "k"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    let ok = ops
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await;
    assert!(ok["result"].is_object(), "{ok}");

    // Another principal cannot use the reader's session.
    let mut thief = RawClient::new(&gw.mcp);
    thief.session = reader.session.clone();
    thief.token = Some(tokens[1].clone());
    let resp = thief
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    assert_eq!(resp.status(), 404);

    // The audit log has the denial, the calls, arguments with the secret redacted.
    let mut rows = Value::Null;
    for _ in 0..50 {
        rows = gw.get_json("/admin/v1/audit?principal=pat:rita").await;
        if rows.as_array().is_some_and(|r| r.len() >= 3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rows = rows.as_array().unwrap();
    let denial = rows
        .iter()
        .find(|r| r["target"] == "fx__pid")
        .expect("denial audited");
    assert_eq!(denial["outcome"], "denied");
    assert_eq!(denial["action"], "tools/call");
    let echo = rows.iter().find(|r| r["target"] == "fx__echo").unwrap();
    assert_eq!(echo["outcome"], "ok");
    assert_eq!(echo["upstream"], "fx");
    assert!(echo["arguments"].as_str().unwrap().contains("[REDACTED]"));
    assert!(!echo["arguments"].as_str().unwrap().contains("\"k\""));
    assert!(echo["token_id"].is_string() && echo["session"].is_string());

    // A role the config file defines is changed there; the API says where (issue 37).
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader",
        Some(json!({"name": "reader", "tools": ["fx__echo", "fx__pid"]})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    // A role the API defines changes at once: the reader, granted it too, sees the ops tools.
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader-extra",
        Some(json!({"name": "reader-extra", "tools": ["fx__pid"]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let now = names(&reader.request("tools/list", json!({})).await);
    assert_eq!(now, ["fx__echo", "fx__pid"]);
    // A non-admin token is refused by the admin API.
    let resp = reqwest::Client::new()
        .get(format!("{}/admin/v1/tokens", gw.base))
        .bearer_auth(&tokens[1])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn rate_limits_answer_429_with_retry_after_per_principal() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\nrate_limit = {{ per_second = 1, burst = 3 }}\n",
        fixture_config(&sqlite_url(&dir), "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    let admin_token = gw.admin_token.clone().unwrap();
    let (_, t) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "busy", "owner": "bea", "roles": ["reader"]})),
    )
    .await;
    let busy = t["token"].as_str().unwrap().to_string();
    let mut statuses = Vec::new();
    let mut retry = None;
    for _ in 0..5 {
        let (status, h, _) = call_as(&gw.mcp, Some(&busy), "tools/list", json!({})).await;
        statuses.push(status);
        if status == 429 {
            retry = h
                .get("retry-after")
                .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        }
    }
    assert_eq!(&statuses[..3], [200, 200, 200], "the burst passes");
    assert!(statuses[3..].contains(&429), "{statuses:?}");
    assert!(retry.is_some_and(|s| s >= 1), "Retry-After in seconds");
    let (status, _, _) = call_as(&gw.mcp, Some(&admin_token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "another principal has its own budget");
}

/// The CLI's `audit verify` against a database: (exit ok, report).
async fn verify_cli(config_dir: &std::path::Path) -> (bool, Value) {
    let out = Command::new(gateway_tests::gateway_bin())
        .arg("--config")
        .arg(config_dir.join("gateway.toml"))
        .args(["audit", "verify"])
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr))),
    )
}

#[tokio::test]
async fn audit_log_keeps_every_call_through_shutdown_and_shows_tampering() {
    const N: usize = 10_000;
    let db = gateway_tests::postgres_database().await;
    let gw = Gateway::start(&fixture_config(&db, "")).await;
    gw.wait_up(&["fx"]).await;
    let http = reqwest::Client::new();
    let started = std::time::Instant::now();
    let calls = futures::stream::iter(0..N).map(|i| {
        let http = http.clone();
        let url = gw.mcp.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "fx__echo", "arguments": {"message": format!("m{i}")},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities": {}}}});
            let r = http
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "fx__echo")
                .json(&body)
                .send()
                .await
                .unwrap();
            r.status().as_u16()
        }
    });
    use futures::StreamExt;
    let statuses: Vec<u16> = calls.buffer_unordered(500).collect().await;
    assert!(statuses.iter().all(|s| *s == 200));
    // Shut down right after the last answer: the queue must still reach the database.
    let (status, dir) = gw.stop_keeping_dir().await;
    assert!(status.success());
    let elapsed = started.elapsed();
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let rows: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'tools/call'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(rows as usize, N, "every call has its audit row");
    assert!(
        elapsed < Duration::from_secs(60),
        "{N} calls took {elapsed:?}"
    );
    let (ok, report) = verify_cli(&dir).await;
    assert!(ok, "{report}");
    assert_eq!(report["checked"], N);

    // An edited row breaks the chain there: the CLI and the admin API say where.
    sqlx::query("UPDATE audit_log SET outcome = 'error' WHERE seq = 4321")
        .execute(&pool)
        .await
        .unwrap();
    let (ok, report) = verify_cli(&dir).await;
    assert!(!ok);
    assert_eq!(report["first_broken"]["seq"], 4321, "{report}");
    let gw = Gateway::start(&fixture_config(&db, "")).await;
    let api = gw.get_json("/admin/v1/audit/verify").await;
    assert_eq!(api["first_broken"]["seq"], 4321, "{api}");
    assert_eq!(api["ok"], false);
    // A deleted row is reported as missing.
    sqlx::query("DELETE FROM audit_log WHERE seq = 77")
        .execute(&pool)
        .await
        .unwrap();
    let (_, report) = verify_cli(&dir).await;
    assert_eq!(report["first_broken"]["seq"], 77, "{report}");
}

#[tokio::test]
async fn an_upstream_behind_oauth_gets_the_gateways_own_token_never_the_hosts() {
    let idp = Idp::start(json!([
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp"}
    ]))
    .await;
    // Gateway b: an upstream that requires OAuth tokens for its resource.
    let inner = "https://inner.test/mcp";
    let b = protected_upstream(&idp, inner).await;
    // Gateway a: b as an HTTP upstream with client credentials; hosts use PATs.
    let a_dir = gateway_tests::scratch();
    let a_config = format!(
        "[database]\nurl = \"{}\"\n{ROLES}\n[auth]\nmode = \"required\"\n\n[[upstreams]]\nname = \"inner\"\n\
         transport = \"http\"\nurl = \"{}\"\n\
         oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
         scopes = [\"mcp\"], resource = \"{inner}\" }}\n",
        sqlite_url(&a_dir),
        b.mcp,
        idp.issuer
    );
    let a = Gateway::start_secured(&a_config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["inner"]).await;
    let host_token = a.admin_token.clone().unwrap();
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&host_token),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "via oauth"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", a.log());
    assert_eq!(body["result"]["content"][0]["text"], "via oauth");
    // b saw the gateway's client, not the host's PAT.
    let mut rows = Value::Null;
    for _ in 0..50 {
        rows = b.get_json("/admin/v1/audit?action=tools/call").await;
        if rows.as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let principal = rows[0]["principal"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(principal, format!("oauth:{}#gw", idp.issuer), "{rows}");
    // A wrong secret: the upstream is reported down with the token endpoint's refusal.
    let c_dir = gateway_tests::scratch();
    let c = Gateway::start_with_env(
        &format!(
            "[database]\nurl = \"{}\"\n[[upstreams]]\nname = \"inner\"\ntransport = \"http\"\nurl = \"{}\"\n\
             oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }} }}\n",
            sqlite_url(&c_dir),
            b.mcp,
            idp.issuer
        ),
        &[("GW_SECRET", "wrong")],
    )
    .await;
    let mut health = Value::Null;
    for _ in 0..100 {
        health = c.get_json("/admin/v1/health").await;
        if health[0]["status"] == "down" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(health[0]["status"], "down", "{health}");
    assert!(health.to_string().contains("token request"), "{health}");
}

#[tokio::test]
async fn token_exchange_carries_the_hosts_user_to_the_upstream_never_the_hosts_token() {
    let a_resource = "https://gateway-a.test/mcp";
    let inner = "https://inner.test/mcp";
    let idp = Idp::start(json!([
        {"client_id": "ann", "client_secret": "ann-secret", "scope": "mcp"},
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp",
         "token_exchange": {"accept_audience": a_resource}}
    ]))
    .await;
    // Gateway b: the upstream, which accepts tokens of the IdP for its own resource and audits
    // who called.
    let b = protected_upstream(&idp, inner).await;
    // Gateway a: hosts sign in at the IdP; b is reached with each user's exchanged token.
    let a_dir = gateway_tests::scratch();
    let a_config = format!(
        "[database]\nurl = \"{}\"\n{ROLES}\n[[roles]]\nname = \"users\"\nupstreams = [\"inner\"]\n\n\
         [auth]\nmode = \"required\"\nresource = \"{a_resource}\"\nrequired_scopes = [\"mcp\"]\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"ann\"\nrole = \"users\"\n\n\
         [[upstreams]]\nname = \"inner\"\ntransport = \"http\"\nurl = \"{}\"\nsharing = \"per_session\"\n\
         oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
         scopes = [\"mcp\"], resource = \"{inner}\", token_exchange = true }}\n",
        sqlite_url(&a_dir),
        idp.issuer,
        b.mcp,
        idp.issuer
    );
    let a = Gateway::start_secured(&a_config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["inner"]).await;

    let ann = idp.token("ann", "ann-secret", "mcp", a_resource).await;
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&ann),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "as ann"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", a.log());
    assert_eq!(body["result"]["content"][0]["text"], "as ann", "{body}");
    // b saw ann (the exchanged token's subject), through a token of its own audience.
    let mut call = Value::Null;
    for _ in 0..50 {
        let rows = b.get_json("/admin/v1/audit?action=tools/call").await;
        if let Some(r) = rows.as_array().and_then(|r| r.first()) {
            call = r.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        call["principal"],
        format!("oauth:{}#ann", idp.issuer),
        "the user, not the gateway: {call}"
    );
    let ann_jti = jwt_claims(&ann)["jti"].clone();
    assert_ne!(call["token_id"], ann_jti, "b never got ann's own token");

    // A caller with a PAT has no identity the IdP could exchange: a clear refusal.
    let pat = a.token_for("bob", &["users"]).await;
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&pat),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "as bob"}}),
    )
    .await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        status != 200 || body.get("error").is_some(),
        "a PAT cannot reach a token-exchange upstream: {body}"
    );
    assert!(message.contains("OAuth access token"), "{body}");

    // Passthrough stays impossible: the config refuses token exchange on a shared connection.
    let out = std::process::Command::new(gateway_tests::gateway_bin())
        .args(["check-config", "--config"])
        .arg({
            let p = a_dir.join("shared.toml");
            std::fs::write(&p, a_config.replace("sharing = \"per_session\"\n", "")).unwrap();
            p
        })
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("per_session"));
}

/// A gateway serving the fixture that accepts the IdP's tokens for `resource` only (the client
/// `gw` gets the role `ops`): an upstream behind OAuth whose audit log says who called.
async fn protected_upstream(idp: &Idp, resource: &str) -> Gateway {
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\nresource = \"{resource}\"\nrequired_scopes = [\"mcp\"]\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"gw\"\nrole = \"ops\"\n",
        fixture_config(super::SQLITE_IN_ITS_FOLDER, ""),
        idp.issuer
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    gw
}

/// The claims of a JWT, unverified (the test only reads what it was given).
fn jwt_claims(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Issue 37, item 9: `mcp-gateway token revoke` writes the SQLite file from another process;
/// the running gateway refuses the token at once (it used to trust it for 10 s more).
#[tokio::test]
async fn a_token_revoked_from_the_command_line_is_refused_at_once_on_sqlite() {
    let gw = fixture_with_roles().await;
    let token = gw.token_for("ann", &["reader"]).await;
    let id = token.split('_').nth(1).unwrap().to_string();
    let (status, _, _) = call_as(&gw.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "the token works and is remembered");
    let out = gateway_tests::cli(&gw.dir.join("gateway.toml"), &["token", "revoke", &id]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let revoked = std::time::Instant::now();
    let mut status = 200;
    while revoked.elapsed() < Duration::from_secs(10) {
        status = call_as(&gw.mcp, Some(&token), "tools/list", json!({}))
            .await
            .0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401);
    assert!(
        revoked.elapsed() < Duration::from_secs(2),
        "refused within a moment, not after the 10 s a verdict is remembered: {:?}",
        revoked.elapsed()
    );
}
