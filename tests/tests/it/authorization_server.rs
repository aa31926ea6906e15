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

use super::fixture_config;

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
    let v = last_json_line(cmd, "the SDK host").await;
    let mut steps = serde_json::Map::new();
    for s in v["steps"].as_array().unwrap() {
        steps.insert(s["name"].as_str().unwrap().to_string(), s.clone());
    }
    Value::Object(steps)
}

#[tokio::test]
async fn a_real_sdk_host_registers_signs_in_calls_refreshes_and_is_revoked_on_every_replica() {
    let db = postgres_database().await;
    let port = free_port();
    let cfg = config(&db, port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let mut replica = Gateway::start_with_env(&cfg, &[]).await;
    replica.admin_token = gw.admin_token.clone();
    replica.wait_up(&["fx"]).await;

    // What a host finds first: the protected resource names the gateway as its authorization
    // server, whose metadata offers registration and S256 only.
    let prm = gw
        .get_json("/.well-known/oauth-protected-resource/mcp")
        .await;
    let issuer = format!("http://127.0.0.1:{port}");
    assert_eq!(prm["authorization_servers"], json!([issuer]), "{prm}");
    let meta = gw.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(meta["issuer"], issuer);
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert!(meta["registration_endpoint"].is_string(), "{meta}");

    let pat = gw.token_for("ann", &["reader"]).await;
    let steps = sdk_host(&gw, &pat, Some(&replica), &[]).await;
    let ctx = || format!("{steps:#}\n{}", gw.log());

    assert_eq!(steps["connect"]["ok"], true, "{}", ctx());
    let client_id = steps["connect"]["clientId"].as_str().unwrap_or("");
    assert!(
        client_id.starts_with("mcpgw-"),
        "registered by DCR: {}",
        ctx()
    );
    assert_eq!(steps["pages"]["signInStatus"], 200);
    assert_eq!(
        steps["pages"]["namesClient"], true,
        "the consent page names the client"
    );
    let csp = steps["pages"]["csp"].as_str().unwrap_or("");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(steps["redirect"]["status"], 303);
    assert_eq!(steps["redirect"]["to"], "http://127.0.0.1:33418/callback");
    assert_eq!(steps["redirect"]["iss"], issuer.as_str());

    // The user's roles decide what the host sees and may call.
    let tools: Vec<&str> = steps["list"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| t.starts_with("fx__"))
        .collect();
    assert_eq!(tools, ["fx__echo"], "{}", ctx());
    assert_eq!(steps["call"]["text"], "hello", "{}", ctx());

    // A refresh through the SDK: new access and refresh tokens, and the call goes through.
    assert_eq!(steps["refreshed"]["ok"], true, "{}", ctx());
    assert_eq!(steps["refreshed"]["text"], "again");
    assert_eq!(
        steps["refreshed"]["newRefresh"], true,
        "refresh tokens rotate"
    );
    assert_eq!(steps["refreshed"]["newAccess"], true);

    // The administrator's revocation: refused at once here and on the other replica.
    let r = &steps["revoked"];
    assert_eq!(r["ok"], true, "{}", ctx());
    assert_eq!(r["subject"], "ann");
    assert_eq!(r["deleteStatus"], 204);
    assert_eq!(
        r["replicaBefore"], 200,
        "the token worked on the replica first"
    );
    assert_eq!(r["here"]["status"], 401, "{}", ctx());
    assert_eq!(r["replica"]["status"], 401, "{}", ctx());
    assert!(r["replica"]["challenge"]
        .as_str()
        .unwrap_or("")
        .contains("revoked"));

    // A spent refresh token used again revokes its whole grant.
    let p = &steps["replay"];
    assert_eq!(p["ok"], true, "{}", ctx());
    assert_eq!(p["firstStatus"], 200);
    assert_eq!(p["beforeStatus"], 200);
    assert_eq!(p["status"], 400);
    assert_eq!(p["error"], "invalid_grant");
    assert_eq!(
        p["after"]["status"], 401,
        "the family's access token is dead too"
    );

    // Every step is in the audit log; no token is in any log line.
    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["action"].as_str())
        .collect();
    for a in [
        "oauth.register",
        "oauth.grant",
        "oauth.token",
        "oauth.refresh",
        "admin.oauth_grant.revoke",
        "oauth.replay",
    ] {
        assert!(actions.contains(&a), "{a} audited: {actions:?}");
    }
    for log in [gw.log(), replica.log()] {
        assert!(!log.contains(&pat), "the PAT leaked into a log line");
        assert!(!log.contains("eyJ"), "a JWT leaked into a log line");
    }
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

#[tokio::test]
async fn attacks_on_the_flow_are_refused_with_a_clear_error() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "registrations_per_minute = 3",
    );
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let http = reqwest::Client::new();
    let register = || {
        http.post(format!("{}/oauth/register", gw.base))
            .json(&json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "A"}))
            .send()
    };
    let client: Value = register().await.unwrap().json().await.unwrap();
    let id = client["client_id"].as_str().unwrap().to_string();
    let (verifier, challenge) = pkce();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let good = |extra: &[(&'static str, String)]| {
        let mut q = auth_query(&id, &challenge, port);
        q.push(("state", "s1".into()));
        for (k, v) in extra {
            q.retain(|(n, _)| n != k);
            if !v.is_empty() {
                q.push((k, v.clone()));
            }
        }
        q
    };

    // PKCE downgrade: plain, or no challenge at all, goes back to the client as an error.
    for extra in [
        vec![("code_challenge_method", "plain".to_string())],
        vec![("code_challenge_method", String::new())],
        vec![
            ("code_challenge", String::new()),
            ("code_challenge_method", String::new()),
        ],
    ] {
        let mut w = Walk::new(&gw);
        let q = good(&extra);
        let pairs = as_pairs(&q);
        let r = w.authorize(&pairs).await;
        assert_eq!(r.status(), 303, "{extra:?}");
        let to = location(&r);
        assert_eq!(
            param(&to, "error").as_deref(),
            Some("invalid_request"),
            "{to}"
        );
        assert_eq!(param(&to, "state").as_deref(), Some("s1"));
    }

    // A redirect URI the client did not register, or an open redirect: a page, never a redirect.
    for uri in [
        "http://127.0.0.1:9/other",
        "https://evil.example/cb",
        "http://127.0.0.1:9/cb?x=https://evil.example",
    ] {
        let mut w = Walk::new(&gw);
        let q = good(&[("redirect_uri", uri.to_string())]);
        let pairs = as_pairs(&q);
        let r = w.authorize(&pairs).await;
        assert_eq!(r.status(), 400, "{uri}");
        assert!(r.headers().get("location").is_none(), "{uri}");
        assert!(r.text().await.unwrap().contains("redirect_uri is not one"));
    }

    // A token for another resource is not issued.
    let mut w = Walk::new(&gw);
    let q = good(&[("resource", "https://other.example/mcp".to_string())]);
    let pairs = as_pairs(&q);
    let to = location(&w.authorize(&pairs).await);
    assert_eq!(
        param(&to, "error").as_deref(),
        Some("invalid_target"),
        "{to}"
    );

    // Consent CSRF: the consent form posted without the browser's cookie (another site's
    // form), or with another browser's, is refused.
    let mut w = Walk::new(&gw);
    let q = good(&[]);
    let pairs = as_pairs(&q);
    let page = w.authorize(&pairs).await.text().await.unwrap();
    let consent = w
        .post(
            "/oauth/authorize",
            &[("ticket", &field(&page, "ticket")), ("pat", &pat)],
            &w.cookie.clone(),
        )
        .await
        .text()
        .await
        .unwrap();
    let ticket = field(&consent, "ticket");
    for cookie in ["", "mcpgw_oauth_csrf=forged"] {
        let r = w
            .post(
                "/oauth/consent",
                &[("ticket", &ticket), ("decision", "allow")],
                cookie,
            )
            .await;
        assert_eq!(r.status(), 403, "cookie {cookie:?}");
        assert!(r.headers().get("location").is_none());
    }
    // A changed ticket is refused too.
    let r = w
        .post(
            "/oauth/consent",
            &[("ticket", &format!("{ticket}x")), ("decision", "allow")],
            &w.cookie.clone(),
        )
        .await;
    assert_eq!(r.status(), 400);

    // A wrong token on the sign-in page: the page again, with the reason, and no code.
    let mut w = Walk::new(&gw);
    let page = w.authorize(&pairs).await.text().await.unwrap();
    let r = w
        .post(
            "/oauth/authorize",
            &[
                ("ticket", &field(&page, "ticket")),
                ("pat", "mcpgw_nope_nope"),
            ],
            &w.cookie.clone(),
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("location").is_none());
    assert!(r.text().await.unwrap().contains("not valid"));

    // The real walk, then the code used twice: the second use is refused and revokes the
    // tokens the first one got.
    let mut w = Walk::new(&gw);
    let back = w.through(&pairs, &pat).await;
    let code = param(&location(&back), "code").expect("a code");
    let exchange = |code: String, verifier: String| {
        http.post(format!("{}/oauth/token", gw.base))
            .form(&[
                ("grant_type", "authorization_code".to_string()),
                ("code", code),
                ("code_verifier", verifier),
                ("client_id", id.clone()),
                ("redirect_uri", "http://127.0.0.1:9/cb".to_string()),
            ])
            .send()
    };
    let wrong = exchange(code.clone(), "w".repeat(64)).await.unwrap();
    assert_eq!(wrong.status(), 400);
    assert_eq!(
        wrong.json::<Value>().await.unwrap()["error"],
        "invalid_grant"
    );
    // The verifier was wrong, and the code is spent with it: a code is tried once.
    let mut w = Walk::new(&gw);
    let code = param(&location(&w.through(&pairs, &pat).await), "code").unwrap();
    let first: Value = exchange(code.clone(), verifier.clone())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = first["access_token"].as_str().expect("tokens").to_string();
    let initialize = |token: String, path: &'static str| {
        http.post(format!("{}{path}", gw.base))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .send()
    };
    assert_eq!(
        initialize(access.clone(), "/mcp").await.unwrap().status(),
        200
    );
    let again = exchange(code, verifier.clone()).await.unwrap();
    assert_eq!(again.status(), 400);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["error"], "invalid_grant");
    assert!(again["error_description"]
        .as_str()
        .unwrap()
        .contains("already used"));
    assert_eq!(
        initialize(access, "/mcp").await.unwrap().status(),
        401,
        "the first use's token is revoked"
    );

    // A token for one virtual server is refused at the gateway's own endpoint.
    let mut w = Walk::new(&gw);
    let q = good(&[("resource", format!("{resource}/v/ops"))]);
    let vpairs = as_pairs(&q);
    let code = param(&location(&w.through(&vpairs, &pat).await), "code").unwrap();
    let t: Value = exchange(code, verifier.clone())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let r = initialize(t["access_token"].as_str().unwrap().to_string(), "/mcp")
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("/mcp/v/ops"));

    // A metadata document the gateway would have to fetch from loopback or a private range
    // (a cloud's metadata service): refused before any connection.
    for url in [
        "https://localhost:1/client.json",
        "https://127.0.0.1:1/client.json",
        "https://169.254.169.254/latest/client.json",
    ] {
        let r = Walk::new(&gw)
            .authorize(&[("client_id", url), ("response_type", "code")])
            .await;
        assert_eq!(r.status(), 400, "{url}");
        let page = r.text().await.unwrap();
        assert!(
            page.contains("loopback, private or reserved"),
            "{url}: {page}"
        );
    }

    // Revoking the personal access token a user signed in with takes their grants along.
    let mut w = Walk::new(&gw);
    let code = param(&location(&w.through(&pairs, &pat).await), "code").unwrap();
    let t: Value = exchange(code, verifier.clone())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = t["access_token"].as_str().unwrap().to_string();
    assert_eq!(
        initialize(access.clone(), "/mcp").await.unwrap().status(),
        200
    );
    let pat_id = pat.split('_').nth(1).unwrap();
    let (status, _) = gw
        .send(
            reqwest::Method::DELETE,
            &format!("/admin/v1/tokens/{pat_id}"),
            gw.admin_token.as_deref(),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(initialize(access, "/mcp").await.unwrap().status(), 401);
    let refreshed = http
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", t["refresh_token"].as_str().unwrap()),
            ("client_id", id.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), 400, "its refresh token is dead too");

    // A registration flood from one address: the fourth in a minute waits.
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(register().await.unwrap().status().as_u16());
    }
    assert_eq!(
        statuses,
        [201, 201, 429],
        "the first registration counted too"
    );

    let log = gw.log();
    assert!(
        !log.contains(&pat) && !log.contains("eyJ"),
        "no token in the log"
    );
}

#[tokio::test]
async fn the_sign_in_and_consent_pages_work_in_chromium_without_javascript() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    // A native app: its redirect is on loopback, on whatever port it gets.
    let client = register(&gw, "http://127.0.0.1/cb", "Native <b>App</b>").await;
    let seen = in_chromium(&gw, &dir, &client, port, &[("PAT", &pat)]).await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert_eq!(seen["signInTitle"], "Sign in to MCP Gateway");
    // The client's name is shown as text, never as markup.
    assert!(
        seen["signInText"]
            .as_str()
            .unwrap()
            .contains("Native <b>App</b>"),
        "{seen}"
    );
    assert!(seen["wrongTokenText"]
        .as_str()
        .unwrap()
        .contains("not valid"));
    let consent = seen["consentText"].as_str().unwrap();
    assert!(consent.contains("ann") && consent.contains("mcp") && consent.contains("127.0.0.1"));
    assert_eq!(seen["state"], "browser-state", "{seen:#}");
    assert_eq!(seen["iss"], format!("http://127.0.0.1:{port}"));
    assert_eq!(
        seen["errors"],
        json!([]),
        "no CSP violation or page error: {seen}"
    );
    assert!(seen["csp"][0]
        .as_str()
        .unwrap()
        .contains("default-src 'none'"));
    if let Some(w) = seen["scrollWidth"].as_u64() {
        assert!(w <= 400, "the pages fit 400 px: {w}");
    }

    // The code the browser brought back is good for tokens.
    let tokens = redeem(&gw, &client, &seen).await;
    assert_eq!(tokens["token_type"], "Bearer", "{tokens}");
    assert_eq!(tokens["scope"], "mcp");
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
    reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", seen["code"].as_str().expect("a code")),
            ("code_verifier", seen["verifier"].as_str().unwrap()),
            ("client_id", client_id),
            ("redirect_uri", seen["redirect"].as_str().unwrap()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
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

#[tokio::test]
async fn users_sign_in_at_the_company_provider_and_get_the_roles_of_their_groups() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let idp = gateway_tests::Idp::start_with_accounts(
        json!([{"client_id": "gateway", "client_secret": "gateway-secret",
                "scope": "openid groups email",
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/callback")]}]),
        json!({"alice": {"groups": ["eng"]}, "bob": {"groups": ["guests"]}}),
    )
    .await;
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        &format!(
            "pat_sign_in = false
[auth.server.oidc]
issuer = \"{}\"
client_id = \"gateway\"
\
             client_secret = {{ env = \"IDP_SECRET\" }}
scopes = [\"groups\"]
\
             display_name = \"Example Corp\"
\
             [[auth.role_mappings]]
claim = \"groups\"
value = \"eng\"
role = \"reader\"
",
            idp.issuer
        ),
    );
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(
        &cfg,
        &[
            ("MCP_GATEWAY_LISTEN", &listen),
            ("IDP_SECRET", "gateway-secret"),
        ],
    )
    .await;
    gw.wait_up(&["fx"]).await;
    let id = register(&gw, "http://127.0.0.1/cb", "Host").await;
    let id = id.as_str();

    let alice = in_chromium(&gw, &dir, id, port, &[("FEDERATED_LOGIN", "alice")]).await;
    assert!(alice["failure"].is_null(), "{alice:#}\n{}", gw.log());
    assert_eq!(alice["federatedButton"], "Sign in with Example Corp");
    assert!(alice["providerUrl"]
        .as_str()
        .unwrap()
        .starts_with(&idp.issuer));
    assert!(
        alice["consentText"].as_str().unwrap().contains("alice"),
        "{alice}"
    );
    assert_eq!(alice["state"], "browser-state");
    let tokens = redeem(&gw, id, &alice).await;
    let token = tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"));
    assert_eq!(
        fx_tools(&gw, token).await,
        ["fx__echo"],
        "eng maps to reader"
    );

    let bob = in_chromium(&gw, &dir, id, port, &[("FEDERATED_LOGIN", "bob")]).await;
    assert!(bob["failure"].is_null(), "{bob:#}");
    let tokens = redeem(&gw, id, &bob).await;
    let token = tokens["access_token"].as_str().unwrap();
    assert!(
        fx_tools(&gw, token).await.is_empty(),
        "guests map to no role"
    );

    // The provider's answer must come back to the browser that left, with its state, once.
    let mut w = Walk::new(&gw);
    let (_, challenge) = pkce();
    let query = auth_query(id, &challenge, port);
    let q = as_pairs(&query);
    let page = w.authorize(&q).await.text().await.unwrap();
    let cookie = w.cookie.clone();
    let left = w
        .post(
            "/oauth/federate",
            &[("ticket", &field(&page, "ticket"))],
            &cookie,
        )
        .await;
    assert_eq!(left.status(), 303);
    let trip = left.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let to = location(&left);
    assert!(to.as_str().starts_with(&idp.issuer), "{to}");
    assert_eq!(param(&to, "code_challenge_method").as_deref(), Some("S256"));
    assert!(param(&to, "nonce").is_some());
    let state = param(&to, "state").unwrap();
    let back = |state: String, cookies: String| {
        w.http
            .get(format!("{}/oauth/callback", gw.base))
            .query(&[("code", "whatever"), ("state", state.as_str())])
            .header("cookie", cookies)
            .send()
    };
    let r = back("another".into(), format!("{cookie}; {trip}"))
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "a state that is not this browser's");
    assert!(r.text().await.unwrap().contains("state mismatch"));
    let r = back(state.clone(), cookie.clone()).await.unwrap();
    assert_eq!(r.status(), 400, "another browser (no round-trip cookie)");
    let r = back(state, format!("{cookie}; {trip}")).await.unwrap();
    assert_eq!(r.status(), 403, "a code the provider never issued");
    assert!(r.headers().get("location").is_none());

    let grants = gw.get_json("/admin/v1/oauth/grants").await;
    let by: Vec<(&str, &str)> = grants
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["subject"].as_str().unwrap(),
                g["signed_in_with"].as_str().unwrap(),
            )
        })
        .collect();
    let via = format!("oidc:{}", idp.issuer);
    assert!(
        by.contains(&("alice", via.as_str())) && by.contains(&("bob", via.as_str())),
        "{by:?}"
    );
}

#[tokio::test]
async fn a_real_sdk_host_named_by_its_client_metadata_document_signs_in() {
    // The host's document, served over https by a private authority the gateway trusts.
    let doc_port = free_port();
    let certs = gateway_tests::scratch();
    let _documents = Command::new(peers().join("venv/bin/python"))
        .arg(gateway_tests::package_dir().join("clients/tls_server.py"))
        .arg(doc_port.to_string())
        .arg(&certs)
        .arg("http://127.0.0.1:33418/callback")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    gateway_tests::wait_port(doc_port).await;
    let ca = certs.join("ca.pem");
    let document = format!("https://localhost:{doc_port}/client.json");

    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "registration = \"off\"\nclient_metadata_allow_private = true",
    );
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(
        &cfg,
        &[
            ("MCP_GATEWAY_LISTEN", &listen),
            ("SSL_CERT_FILE", ca.to_str().unwrap()),
        ],
    )
    .await;
    gw.wait_up(&["fx"]).await;
    let meta = gw.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(meta["client_id_metadata_document_supported"], true);
    assert!(
        meta["registration_endpoint"].is_null(),
        "registration is off: {meta}"
    );

    let pat = gw.token_for("ann", &["reader"]).await;
    let steps = sdk_host(
        &gw,
        &pat,
        None,
        &[("CLIENT_METADATA_URL", &document), ("ONLY_CONNECT", "1")],
    )
    .await;
    assert_eq!(steps["connect"]["ok"], true, "{steps:#}\n{}", gw.log());
    assert_eq!(steps["connect"]["clientId"], document.as_str());
    assert_eq!(
        steps["pages"]["namesClient"], false,
        "another name: the document's"
    );
    assert_eq!(steps["call"]["text"], "hello", "{steps:#}");
    let clients = gw.get_json("/admin/v1/oauth/clients").await;
    let listed = clients
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client_id"] == document.as_str())
        .unwrap_or_else(|| panic!("{clients}"));
    assert_eq!(listed["source"], "cimd");
    assert_eq!(listed["metadata"]["client_name"], "Document Host");
}

#[tokio::test]
async fn the_python_sdk_oauth_client_provider_signs_in_and_calls() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let mut cmd = Command::new(peers().join("venv/bin/python"));
    cmd.arg(gateway_tests::package_dir().join("clients/python_oauth_client.py"))
        .arg(&gw.mcp)
        .arg(&pat);
    let seen = last_json_line(cmd, "the Python host").await;
    assert!(
        seen["client_id"].as_str().unwrap().starts_with("mcpgw-"),
        "{seen}"
    );
    assert_eq!(seen["iss"], format!("http://127.0.0.1:{port}"));
    assert_eq!(seen["text"], "from python", "{seen}");
    let tools = seen["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("fx__echo")) && !tools.contains(&json!("fx__pid")),
        "{seen}"
    );

    // An administrator revokes everything the user authorized.
    let (status, _) = gw
        .send(
            reqwest::Method::DELETE,
            "/admin/v1/oauth/users/ann/grants",
            gw.admin_token.as_deref(),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 204);
    let grants = gw.get_json("/admin/v1/oauth/grants?subject=ann").await;
    let grants = grants.as_array().unwrap();
    assert!(
        !grants.is_empty() && grants.iter().all(|g| g["revoked_at"].is_i64()),
        "{grants:?}"
    );
}

#[tokio::test]
async fn mcp_remote_signs_in_through_the_gateway_and_bridges_calls() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let callback_port = free_port().to_string();
    let mut bridge = Command::new(peers().join("node_modules/.bin/mcp-remote"))
        .args([gw.mcp.as_str(), callback_port.as_str(), "--allow-http"])
        .env("PATH", peer_path())
        // Its tokens and registration go under HOME (~/.mcp-auth).
        .env("HOME", &dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(bridge.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            said.push_str(&line);
            said.push('\n');
            if let Some(at) = line.find("/oauth/authorize?") {
                let start = line[..at].rfind("http").unwrap();
                return line[start..].trim().to_string();
            }
        }
        panic!("mcp-remote ended without a sign-in URL: {said}")
    })
    .await
    .expect("mcp-remote asks the user to sign in within a minute");

    // The user's browser: the gateway's pages, then back to mcp-remote's own callback.
    let mut w = Walk::new(&gw);
    let page = w.http.get(&url).send().await.unwrap();
    if let Some(c) = page.headers().get("set-cookie") {
        w.cookie = c.to_str().unwrap().split(';').next().unwrap().to_string();
    }
    let page = page.text().await.unwrap();
    let cookie = w.cookie.clone();
    let consent = w
        .post(
            "/oauth/authorize",
            &[("ticket", &field(&page, "ticket")), ("pat", &pat)],
            &cookie,
        )
        .await
        .text()
        .await
        .unwrap();
    let back = w
        .post(
            "/oauth/consent",
            &[
                ("ticket", &field(&consent, "ticket")),
                ("decision", "allow"),
            ],
            &cookie,
        )
        .await;
    let to = location(&back);
    assert_eq!(
        to.port().map(|p| p.to_string()),
        Some(callback_port.clone()),
        "{to}"
    );
    let done = reqwest::get(to.as_str()).await.unwrap();
    assert!(
        done.status().is_success(),
        "mcp-remote took the code: {}",
        done.status()
    );
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });

    // The bridge now speaks MCP on stdio, signed in as ann.
    let mut stdin = bridge.stdin.take().unwrap();
    let mut stdout = BufReader::new(bridge.stdout.take().unwrap()).lines();
    let mut exchange = async |msg: Value| -> Value {
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        if msg.get("id").is_none() {
            return Value::Null;
        }
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
                .await
                .expect("mcp-remote answers within a minute")
                .unwrap()
                .expect("mcp-remote stays up");
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if v.get("id") == msg.get("id") {
                return v;
            }
        }
    };
    let init = exchange(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "desktop", "version": "1"}}}),
    )
    .await;
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let r = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "fx__echo", "arguments": {"message": "bridged"}}}))
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "bridged", "{r}");
    let grants = gw.get_json("/admin/v1/oauth/grants?subject=ann").await;
    assert_eq!(grants.as_array().unwrap().len(), 1, "{grants}");
}

#[tokio::test]
async fn the_console_lists_sign_ins_and_revokes_a_grant_and_blocks_a_client() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let id = register(&gw, "http://127.0.0.1:9/cb", "Laptop host").await;
    let id = id.as_str();
    let (verifier, challenge) = pkce();
    let query = auth_query(id, &challenge, port);
    let q = as_pairs(&query);
    let back = Walk::new(&gw).through(&q, &pat).await;
    let seen = json!({"code": param(&location(&back), "code"), "verifier": verifier,
                      "redirect": "http://127.0.0.1:9/cb"});
    let tokens = redeem(&gw, id, &seen).await;
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(fx_tools(&gw, &access).await, ["fx__echo"]);
    let grants = gw.get_json("/admin/v1/oauth/grants").await;
    let grant = grants[0]["id"].as_str().unwrap().to_string();

    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/console_sign_ins.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("CONSOLE_TOKEN", gw.admin_token.as_deref().unwrap())
        .env("GRANT_ID", &grant)
        .env("CLIENT_ID", id)
        .env("ARTIFACTS", &artifacts)
        .env("HOME", &dir);
    let seen = last_json_line(cmd, "the browser").await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert!(seen["grantRow"].as_str().unwrap().contains("ann"), "{seen}");
    assert!(
        seen["grantRow"].as_str().unwrap().contains("Laptop host"),
        "{seen}"
    );
    assert!(
        seen["clientRow"].as_str().unwrap().contains("dcr"),
        "{seen}"
    );
    assert_eq!(
        seen["dialogs"].as_array().unwrap().len(),
        2,
        "each asked first: {seen}"
    );
    assert_eq!(seen["errors"], json!([]));

    // Revoked in the console: the host's token is refused; blocked: no new sign-in either.
    let r = reqwest::Client::new()
        .post(&gw.mcp)
        .bearer_auth(&access)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let page = Walk::new(&gw).authorize(&q).await;
    assert_eq!(page.status(), 403);
    assert!(page.text().await.unwrap().contains("blocked"));
}
