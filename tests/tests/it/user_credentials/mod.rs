//! Each user's own account at an upstream behind its own authorization server (`user_oauth`):
//! a real MCP server (TypeScript SDK) that takes only tokens of its own OpenID provider
//! (oidc-provider) and records the user of each call; users sign in there in a browser (a
//! headless one that fills in the provider's login and consent forms), through the links the
//! gateway hands them.

use std::time::Duration;

use base64::Engine;
use gateway_tests::{
    free_port, last_json_line, node, scratch, spawn_reporting_url, Gateway, RawClient,
};
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

mod first_user;
mod forwarded_links;
mod moved;
mod own_accounts;
mod provider_outage;
mod registration;
mod replicas;
mod unconfirmable_links;

const ROLES: &str = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "member"
upstreams = ["*"]

[[roles]]
name = "fixtures-only"
upstreams = ["fx"]
"#;

/// Opens `url` in the headless browser, signing in to the gateway with the personal access
/// token `pat` (where the gateway asks who opens a connect link) and at the provider as
/// `login`: the page it ends on.
async fn browse(url: &str, pat: &str, login: &str) -> Value {
    let mut cmd = node("idp/browser.mjs");
    cmd.arg(url).arg(login).arg(pat);
    last_json_line(cmd, "the browser").await
}

/// A 2026-07-28 host's call of `whoami` with `token`.
async fn whoami_2026(gw: &Gateway, token: &str) -> Value {
    gateway_tests::request_2026_as(
        &gw.mcp,
        Some(token),
        "tools/call",
        "own__whoami",
        json!({"name": "own__whoami", "arguments": {}}),
    )
    .await
}

/// The connect link in a tool error's text.
fn link_in(text: &str) -> String {
    let at = text
        .find("http://")
        .unwrap_or_else(|| panic!("a link in {text:?}"));
    text[at..].split_whitespace().next().unwrap().to_string()
}

/// The first cookie a response sets, as a `Cookie` header's pair.
fn cookie_of(r: &reqwest::Response) -> String {
    let c = r.headers()["set-cookie"].to_str().unwrap();
    c.split(';').next().unwrap().to_string()
}

/// A connect link followed by hand, signed in on the gateway's page with `pat`: the answer
/// that leads to the upstream's authorization server.
async fn signed_in_and_started(http: &reqwest::Client, link: &str, pat: &str) -> reqwest::Response {
    let asked = http.get(link).send().await.unwrap();
    let csrf = cookie_of(&asked);
    let html = asked.text().await.unwrap();
    let value = |name: &str| {
        let key = format!("name=\"{name}\" value=\"");
        let at = html
            .find(&key)
            .unwrap_or_else(|| panic!("{name} in {html}"))
            + key.len();
        html[at..at + html[at..].find('"').unwrap()].to_string()
    };
    let signed_in = http
        .post(link.split('?').next().unwrap())
        .header("cookie", &csrf)
        .form(&[
            ("ticket", value("ticket")),
            ("csrf", value("csrf")),
            ("pat", pat.into()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    let user = cookie_of(&signed_in);
    http.get(link).header("cookie", user).send().await.unwrap()
}

/// An admin connects the catalog account at `own` (signing in at the provider as
/// `catalog-bot`), and the upstream comes up: the link they followed.
async fn connect_catalog(gw: &Gateway) -> String {
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/admin/v1/upstreams/own/connection",
            None,
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let url = link["url"].as_str().unwrap().to_string();
    let page = browse(&url, gw.admin_token.as_deref().unwrap(), "catalog-bot").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}\n{}",
        gw.log()
    );
    gw.wait_up(&["own"]).await;
    url
}

/// The page the user of `token` ends on when they ask for a link to connect their account at
/// `own` ahead of any call and open it, signing in at the provider as `login`.
async fn own_link_page(gw: &Gateway, token: &str, login: &str) -> Value {
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    browse(link["url"].as_str().unwrap(), token, login).await
}

/// The user of `token` connects their account at `own` ahead of any call, signing in at the
/// provider as `login`.
async fn connect_own(gw: &Gateway, token: &str, login: &str) {
    let page = own_link_page(gw, token, login).await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}\n{}",
        gw.log()
    );
}

/// Makes the own-accounts server at `upstream` refuse every token of `sub` issued until now
/// (as a server does after a password change): the next call needs a refreshed one.
async fn refuse_tokens_of(upstream: &str, sub: &str) {
    reqwest::Client::new()
        .post(format!(
            "{}/test/refuse?sub={sub}",
            upstream.trim_end_matches("/mcp")
        ))
        .send()
        .await
        .unwrap();
}

/// The first `notifications/elicitation/complete` on a host's stream, if one comes within
/// 10 s.
async fn completion<S: futures::Stream<Item = Value> + Unpin>(stream: &mut S) -> Option<Value> {
    use futures::StreamExt;
    let wait = async {
        while let Some(m) = stream.next().await {
            if m["method"] == "notifications/elicitation/complete" {
                return Some(m);
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .ok()
        .flatten()
}

/// What the upstream recorded: `calls` (each tool call's user and token) or `lists` (each
/// tools/list's user).
async fn recorded(upstream: &str, what: &str) -> Vec<Value> {
    let base = upstream.trim_end_matches("/mcp");
    reqwest::get(format!("{base}/test/{what}"))
        .await
        .unwrap()
        .json::<Vec<Value>>()
        .await
        .unwrap()
}

async fn whoami(c: &mut RawClient) -> Value {
    c.request(
        "tools/call",
        json!({"name": "own__whoami", "arguments": {}}),
    )
    .await
}

/// The own-accounts server behind its provider, and a gateway config (listening on `port`)
/// with it as the `user_oauth` upstream `own`; `user_oauth` adds keys to its table.
struct Own {
    idp: gateway_tests::Idp,
    _server: tokio::process::Child,
    upstream: String,
    config: String,
}

async fn own_upstream(db: &str, port: u16, user_oauth: &str) -> Own {
    let idp = gateway_tests::Idp::start_with_accounts(
        json!([{"client_id": "gateway", "client_secret": "upstream-secret",
                "scope": "openid tools", "refresh": true, "rotate": true,
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/upstream/callback")]}]),
        json!({}),
    )
    .await;
    let (server, upstream) =
        spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&idp.issuer)).await;
    let config = format!(
        "{}\n[[upstreams]]\nname = \"own\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
         sharing = \"per_session\"\n[upstreams.user_oauth]\nclient_id = \"gateway\"\n\
         client_secret = {{ env = \"UPSTREAM_SECRET\" }}\n{user_oauth}\n\
         [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n\
         previous_keys = [{{ env = \"OLD_CREDENTIALS_KEY\" }}]\n\
         [auth]\nmode = \"required\"\n{ROLES}",
        fixture_config(db, "")
    );
    Own {
        idp,
        _server: server,
        upstream,
        config,
    }
}

/// The address an [`own_gateway`] on `port` listens on, and its sealing key.
fn own_listen_and_key(port: u16) -> (String, String) {
    let key = base64::engine::general_purpose::STANDARD.encode([42; 32]);
    (format!("127.0.0.1:{port}"), key)
}

/// An [`own_gateway`]'s environment: where it listens, the upstream's client secret, the key.
fn own_env<'a>(listen: &'a str, key: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("MCP_GATEWAY_LISTEN", listen),
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key),
        ("OLD_CREDENTIALS_KEY", key),
    ]
}

/// A gateway with `config` (an [`own_upstream`]'s) on `port`, with the upstream's client secret
/// and a sealing key, the fixture up.
async fn own_gateway(config: &str, port: u16) -> Gateway {
    let (listen, key) = own_listen_and_key(port);
    let gw = Gateway::start_secured(config, &own_env(&listen, &key)).await;
    gw.wait_up(&["fx"]).await;
    gw
}

async fn own_health(gw: &Gateway) -> Value {
    let health = gw.get_json("/admin/v1/health").await;
    health
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "own")
        .cloned()
        .unwrap()
}
