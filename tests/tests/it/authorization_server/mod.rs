//! The gateway as the OAuth authorization server of its hosts (`[auth.server]`), tried by a real
//! host: the TypeScript SDK's OAuth client registers itself, signs a user in on the gateway's
//! pages with a personal access token, calls tools with the token it gets, refreshes it, and
//! loses it when an administrator revokes the grant, on both replicas of one Postgres store.
//! Attacks on the flow are refused with a clear error.

use std::time::Duration;

use gateway_tests::{
    free_port, last_json_line, node, peer_path, peers, postgres_database, Gateway,
};
use serde_json::{json, Value};
use tokio::process::Command;

use super::{console, fixture_config, sqlite_url};
mod attacks;
mod bound_tokens;
mod browser_and_console;
mod company_provider;
mod enterprise_managed;
mod keys;
mod lapsed;
mod outage;
mod rust_sdk;
mod sdk_hosts;

const ROLES: &str = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "reader"
tools = ["fx__echo"]
"#;

/// A config with the authorization server on, for a gateway at `port`.
fn config(db: &str, port: u16, server_extra: &str) -> String {
    format!(
        "{}\n[auth]\nmode = \"required\"\nresource = \"http://127.0.0.1:{port}/mcp\"\n\
         [auth.server]\n{server_extra}\n{ROLES}",
        fixture_config(db, "")
    )
}

/// A gateway with `cfg` (from [`config`] for `port`) listening on `port`, with `env`, the
/// fixture up.
async fn start_at(cfg: &str, port: u16, env: &[(&str, &str)]) -> Gateway {
    let listen = format!("127.0.0.1:{port}");
    let mut all = vec![("MCP_GATEWAY_LISTEN", listen.as_str())];
    all.extend_from_slice(env);
    let gw = Gateway::start_secured(cfg, &all).await;
    gw.wait_up(&["fx"]).await;
    gw
}

/// A PKCE pair: the verifier and its S256 challenge.
fn pkce() -> (String, String) {
    use base64::Engine;
    use sha2::Digest;
    let verifier = "v".repeat(64);
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// A client registered by DCR with one redirect URI: its id.
async fn register(gw: &Gateway, redirect: &str, name: &str) -> String {
    let client: Value = reqwest::Client::new()
        .post(format!("{}/oauth/register", gw.base))
        .json(&json!({"redirect_uris": [redirect], "client_name": name}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    client["client_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{client}"))
        .to_string()
}

/// The authorization request of `client_id` (redirect `http://127.0.0.1:9/cb`) for the
/// gateway at `port`.
fn auth_query(client_id: &str, challenge: &str, port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client_id.into()),
        ("redirect_uri", "http://127.0.0.1:9/cb".into()),
        ("code_challenge", challenge.into()),
        ("code_challenge_method", "S256".into()),
        ("resource", format!("http://127.0.0.1:{port}/mcp")),
    ]
}

/// The tokens `pat`'s user gets for `client_id` (redirecting to `redirect`) from the gateway
/// at `port`: the pages walked, the code exchanged with its PKCE verifier.
async fn signed_in(gw: &Gateway, client_id: &str, redirect: &str, port: u16, pat: &str) -> Value {
    let (verifier, challenge) = pkce();
    let mut query = auth_query(client_id, &challenge, port);
    query.retain(|(k, _)| *k != "redirect_uri");
    query.push(("redirect_uri", redirect.into()));
    let code = param(
        &location(&Walk::new(gw).through(&as_pairs(&query), pat).await),
        "code",
    )
    .expect("a code");
    exchange(gw, client_id, &code, &verifier, redirect).await
}

/// What the token endpoint answers for `code`.
async fn exchange(
    gw: &Gateway,
    client_id: &str,
    code: &str,
    verifier: &str,
    redirect: &str,
) -> Value {
    reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", verifier),
            ("client_id", client_id),
            ("redirect_uri", redirect),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A host's client ID metadata document (redirecting to `redirect`), served over https by a
/// private authority.
struct DocumentHost {
    server: tokio::process::Child,
    /// Where the authority's certificate is (`ca.pem`, for `SSL_CERT_FILE`).
    certs: gateway_tests::Scratch,
    /// The document's URL: the host's `client_id`.
    url: String,
}

/// What `[auth.server]` takes for hosts named by documents only, served from loopback.
const DOCUMENTS_ONLY: &str = "registration = \"off\"\nclient_metadata_allow_private = true";

impl DocumentHost {
    async fn start(redirect: &str) -> Self {
        let port = free_port();
        let certs = gateway_tests::scratch();
        let server = Command::new(peers().join("venv/bin/python"))
            .arg(gateway_tests::package_dir().join("clients/tls_server.py"))
            .arg(port.to_string())
            .arg(&certs)
            .arg(redirect)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        gateway_tests::wait_port(port).await;
        let url = format!("https://localhost:{port}/client.json");
        Self { server, certs, url }
    }

    /// The authority's certificate, for the gateway's `SSL_CERT_FILE`.
    fn ca(&self) -> String {
        self.certs.join("ca.pem").to_str().unwrap().to_string()
    }
}

fn as_pairs<'q>(q: &'q [(&'static str, String)]) -> Vec<(&'static str, &'q str)> {
    q.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Runs the SDK host script and returns its steps by name.
async fn sdk_host(
    gw: &Gateway,
    pat: &str,
    replica: Option<&Gateway>,
    extra: &[(&str, &str)],
) -> Value {
    let mut cmd = node("clients/oauth_sdk_client.mjs");
    cmd.env("MCP_URL", &gw.mcp)
        .env("PAT", pat)
        .env("ADMIN_URL", &gw.base)
        .env("ADMIN_TOKEN", gw.admin_token.as_deref().unwrap())
        .env("PATH", peer_path());
    if let Some(r) = replica {
        cmd.env("REPLICA_MCP_URL", &r.mcp);
    }
    cmd.envs(extra.iter().copied());
    steps_of(&last_json_line(cmd, "the SDK host").await)
}

/// A host script's steps (`{"steps": [{"name", …}]}`) by their names.
fn steps_of(seen: &Value) -> Value {
    let mut steps = serde_json::Map::new();
    for s in seen["steps"].as_array().unwrap() {
        steps.insert(s["name"].as_str().unwrap().to_string(), s.clone());
    }
    Value::Object(steps)
}

/// What a host script that ran `signInCallAndRefresh` (`tests/clients/oauth_host.mjs`) saw
/// against `gw`: registered by DCR, settled on `revision`, the consent page named it, the
/// reader's tools listed and one called, and, its access token spoilt, refreshed without the
/// user (both tokens new).
fn signed_in_called_and_refreshed(gw: &Gateway, seen: &Value, revision: &str) {
    let steps = steps_of(seen);
    let ctx = || format!("{seen:#}\n{}", gw.log());
    assert_eq!(steps["connect"]["ok"], true, "{}", ctx());
    assert!(
        steps["connect"]["clientId"]
            .as_str()
            .unwrap_or("")
            .starts_with("mcpgw-"),
        "registered by DCR: {}",
        ctx()
    );
    assert_eq!(steps["connect"]["revision"], revision, "{}", ctx());
    assert_eq!(steps["pages"]["namesClient"], true, "{}", ctx());
    let tools = steps["list"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", ctx()));
    assert!(
        tools.contains(&json!("fx__echo")) && !tools.contains(&json!("fx__pid")),
        "the reader's tools: {}",
        ctx()
    );
    assert_eq!(steps["call"]["text"], "hello", "{}", ctx());
    let r = &steps["refreshed"];
    assert_eq!(r["ok"], true, "{}", ctx());
    assert_eq!(r["text"], "again");
    assert_eq!(r["signIns"], 1, "refreshed without the user: {}", ctx());
    assert_eq!(r["newAccess"], true);
    assert_eq!(r["newRefresh"], true, "refresh tokens rotate");
}

/// One browser's walk through the pages, by hand: the authorize request, the sign-in form and
/// the consent form, with the pages' cookie. Returns the final answer (the redirect).
struct Walk {
    http: reqwest::Client,
    base: String,
    cookie: String,
}

fn field(html: &str, name: &str) -> String {
    let key = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {html}"))
        + key.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

impl Walk {
    fn new(gw: &Gateway) -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: gw.base.clone(),
            cookie: String::new(),
        }
    }

    async fn authorize(&mut self, query: &[(&str, &str)]) -> reqwest::Response {
        let r = self
            .http
            .get(format!("{}/oauth/authorize", self.base))
            .query(query)
            .send()
            .await
            .unwrap();
        if let Some(c) = r.headers().get("set-cookie") {
            self.cookie = c.to_str().unwrap().split(';').next().unwrap().to_string();
        }
        r
    }

    async fn post(&self, path: &str, form: &[(&str, &str)], cookie: &str) -> reqwest::Response {
        self.http
            .post(format!("{}{path}", self.base))
            .header("cookie", cookie)
            .form(form)
            .send()
            .await
            .unwrap()
    }

    /// Signs in and allows: the redirect back to the client (at once when the user consented
    /// to this client before).
    async fn through(&mut self, query: &[(&str, &str)], pat: &str) -> reqwest::Response {
        let page = self.authorize(query).await.text().await.unwrap();
        let cookie = self.cookie.clone();
        let signed_in = self
            .post(
                "/oauth/authorize",
                &[("ticket", &field(&page, "ticket")), ("pat", pat)],
                &cookie,
            )
            .await;
        if signed_in.status() == 303 {
            return signed_in;
        }
        let consent = signed_in.text().await.unwrap();
        self.post(
            "/oauth/consent",
            &[
                ("ticket", &field(&consent, "ticket")),
                ("decision", "allow"),
            ],
            &cookie,
        )
        .await
    }
}

fn location(r: &reqwest::Response) -> url::Url {
    url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap()
}

fn param(u: &url::Url, k: &str) -> Option<String> {
    u.query_pairs()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.to_string())
}

/// The browser script's walk (`tests/browser/oauth_pages.mjs`) for a registered native client.
async fn in_chromium(
    gw: &Gateway,
    dir: &std::path::Path,
    client_id: &str,
    port: u16,
    env: &[(&str, &str)],
) -> Value {
    let artifacts = dir.join(format!("artifacts-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/oauth_pages.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("BASE", &gw.base)
        .env("CLIENT_ID", client_id)
        .env("RESOURCE", format!("http://127.0.0.1:{port}/mcp"))
        .env("ARTIFACTS", &artifacts)
        .env("HOME", dir)
        .envs(env.iter().copied());
    last_json_line(cmd, "the browser").await
}

/// The tokens for the code a browser walk brought back.
async fn redeem(gw: &Gateway, client_id: &str, seen: &Value) -> Value {
    exchange(
        gw,
        client_id,
        seen["code"].as_str().expect("a code"),
        seen["verifier"].as_str().unwrap(),
        seen["redirect"].as_str().unwrap(),
    )
    .await
}

/// What a host script printed (`{"tools", "text"}`) after it listed the tools and called
/// `fx__echo` with `said`: the reader's tools (the echo, not the pid), and the echo's answer.
fn saw_the_readers_tools(gw: &Gateway, seen: &Value, said: &str) {
    let tools = seen["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{seen}\n{}", gw.log()));
    assert!(
        tools.contains(&json!("fx__echo")) && !tools.contains(&json!("fx__pid")),
        "the reader's tools: {seen}"
    );
    assert_eq!(seen["text"], said, "{seen}");
}

/// The `fx__` tools an access token's user sees.
async fn fx_tools(gw: &Gateway, token: &str) -> Vec<String> {
    let mut c = gateway_tests::RawClient::initialize_as(&gw.mcp, json!({}), Some(token)).await;
    let r = c.request("tools/list", json!({})).await;
    r["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("fx__"))
        .map(str::to_string)
        .collect()
}
