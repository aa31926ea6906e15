//! Security end to end: OAuth access tokens from a real OpenID provider (npm `oidc-provider`),
//! personal access tokens and their revocation across replicas, roles that see and call
//! different tools, rate limits, and an audit log that is complete and tamper-evident.

use std::time::Duration;

use gateway_tests::{python_client_as, Gateway, Idp, RawClient};
use serde_json::{json, Value};
use tokio::process::Command;

use super::{fixture_config, sqlite_url, SQLITE_IN_ITS_FOLDER};

mod audit;
mod audit_retention;
mod endless_answers;
mod proofs;
mod redirects;
mod roles_and_limits;
mod tokens;
mod upstream_tokens;

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

/// A gateway requiring tokens, with [`ROLES`], in front of the fixture (`fx`, up).
async fn fixture_with_roles() -> Gateway {
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\n",
        fixture_config(SQLITE_IN_ITS_FOLDER, "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    gw
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

/// A gateway serving the fixture that accepts the IdP's tokens for `resource` only (the client
/// `gw` gets the role `ops`): an upstream behind OAuth whose audit log says who called.
async fn protected_upstream(idp: &Idp, resource: &str) -> Gateway {
    protected_upstream_with(idp, resource, &[]).await
}

/// [`protected_upstream`] listening where its resource says (`http://127.0.0.1:{port}/mcp`),
/// so that a client can find its authorization server from its metadata.
async fn protected_upstream_at(idp: &Idp, port: u16) -> Gateway {
    let listen = format!("127.0.0.1:{port}");
    let resource = format!("http://{listen}/mcp");
    protected_upstream_with(idp, &resource, &[("MCP_GATEWAY_LISTEN", &listen)]).await
}

async fn protected_upstream_with(idp: &Idp, resource: &str, env: &[(&str, &str)]) -> Gateway {
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\nresource = \"{resource}\"\nrequired_scopes = [\"mcp\"]\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"gw\"\nrole = \"ops\"\n",
        fixture_config(SQLITE_IN_ITS_FOLDER, ""),
        idp.issuer
    );
    let gw = Gateway::start_secured(&config, env).await;
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
