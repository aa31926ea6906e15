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

/// The user of `token` connects their account at `own` ahead of any call, signing in at the
/// provider as `login`.
async fn connect_own(gw: &Gateway, token: &str, login: &str) {
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let page = browse(link["url"].as_str().unwrap(), token, login).await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}\n{}",
        gw.log()
    );
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
                "scope": "openid tools", "refresh": true,
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

#[tokio::test]
async fn each_user_calls_the_upstream_with_their_own_account() {
    let dir = scratch();
    let port = free_port();
    let Own {
        idp,
        _server,
        upstream,
        config: cfg,
    } = own_upstream(&sqlite_url(&dir), port, "").await;
    let b64 = |k: [u8; 32]| base64::engine::general_purpose::STANDARD.encode(k);
    let (key, unused, rotated) = (b64([42; 32]), b64([7; 32]), b64([99; 32]));
    let listen = format!("127.0.0.1:{port}");
    let env = [
        ("MCP_GATEWAY_LISTEN", listen.as_str()),
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key.as_str()),
        ("OLD_CREDENTIALS_KEY", unused.as_str()),
    ];
    let gw = Gateway::start_secured(&cfg, &env).await;
    gw.wait_up(&["fx"]).await;

    // The catalog is read with an account an admin connects; until then the upstream is down
    // and says why.
    let own = own_health(&gw).await;
    assert_ne!(own["status"], "up", "{own}");
    connect_catalog(&gw).await;

    let alice_token = gw.token_for("alice", &["member"]).await;
    let bob_token = gw.token_for("bob", &["member"]).await;

    // alice's host declared URL elicitation: her first call asks her to open the link.
    let url_caps = json!({"elicitation": {"url": {}}});
    let mut alice = RawClient::initialize_as(&gw.mcp, url_caps.clone(), Some(&alice_token)).await;
    let first = whoami(&mut alice).await;
    assert_eq!(first["error"]["code"], -32042, "{first}");
    let elicitation = &first["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{first}");
    let mut stream = Box::pin(alice.listen().await);
    let page = browse(elicitation["url"].as_str().unwrap(), &alice_token, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    // Her host is told that the elicitation is complete.
    let complete = completion(&mut stream)
        .await
        .expect("the completion comes within 10 s");
    assert_eq!(
        complete["params"]["elicitationId"], elicitation["elicitationId"],
        "{complete}"
    );
    drop(stream);
    // The next call works, on the same session.
    let r = whoami(&mut alice).await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "you are alice",
        "{r}\n{}",
        gw.log()
    );

    // bob's host cannot open URLs: he gets the link in the tool's error, until he connects.
    let mut bob = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob_token)).await;
    for _ in 0..2 {
        let r = whoami(&mut bob).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("/oauth/upstream/connect?ticket="), "{text}");
    }
    // A link opened by someone else's browser cannot be finished with another's cookie: the
    // answer must come back to the browser that started.
    let r = whoami(&mut bob).await;
    let bob_link = link_in(r["result"]["content"][0]["text"].as_str().unwrap());
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let started = signed_in_and_started(&no_redirects, &bob_link, &bob_token).await;
    assert_eq!(started.status(), 302);
    let to_provider = url::Url::parse(started.headers()["location"].to_str().unwrap()).unwrap();
    assert!(
        to_provider.as_str().starts_with(&idp.issuer),
        "{to_provider}"
    );
    let param = |k: &str| {
        to_provider
            .query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string())
            .unwrap()
    };
    assert_eq!(param("code_challenge_method"), "S256");
    assert_eq!(param("resource"), upstream);
    let planted = no_redirects
        .get(format!("{}/oauth/upstream/callback", gw.base))
        .query(&[("code", "stolen"), ("state", param("state").as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(planted.status(), 400);
    assert!(planted.text().await.unwrap().contains("another browser"));
    let seen = recorded(&upstream, "calls").await;
    assert!(
        seen.iter().all(|c| c["sub"] == "alice"),
        "only alice's token was used for calls so far: {seen:?}"
    );
    let page = browse(&bob_link, &bob_token, "bob").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let r = whoami(&mut bob).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");
    let r = whoami(&mut alice).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");

    // A 2026-07-28 host (no session) of alice's calls with her account too; carol, who never
    // connected, gets her own link.
    let modern = whoami_2026(&gw, &alice_token).await;
    assert_eq!(
        modern["result"]["content"][0]["text"], "you are alice",
        "{modern}"
    );
    let carol_token = gw.token_for("carol", &["member"]).await;
    let modern = whoami_2026(&gw, &carol_token).await;
    assert_eq!(modern["result"]["isError"], true, "{modern}");
    assert!(
        modern
            .to_string()
            .contains("/oauth/upstream/connect?ticket="),
        "{modern}"
    );

    // The upstream stops taking alice's token: the gateway refreshes it and the call goes on.
    let first_jti = recorded(&upstream, "calls")
        .await
        .iter()
        .find(|c| c["sub"] == "alice")
        .unwrap()["jti"]
        .clone();
    reqwest::Client::new()
        .post(format!(
            "{}/test/refuse?sub=alice",
            upstream.trim_end_matches("/mcp")
        ))
        .send()
        .await
        .unwrap();
    let r = whoami(&mut alice).await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "you are alice",
        "{r}\n{}",
        gw.log()
    );
    let last = recorded(&upstream, "calls").await.last().unwrap().clone();
    assert_eq!(last["sub"], "alice");
    assert_ne!(last["jti"], first_jti, "a new token after the refresh");

    // Users see their own connections, admins everyone's: never a token.
    let (status, mine) = gw
        .send(
            reqwest::Method::GET,
            "/v1/connections",
            Some(&alice_token),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 200, "{mine}");
    let mine = mine["connections"].as_array().unwrap();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["upstream"], "own");
    assert_eq!(mine[0]["holder"], "user:pat:alice");
    let all = gw.get_json("/admin/v1/connections").await;
    let holders: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["holder"].as_str())
        .collect();
    assert_eq!(
        holders,
        ["catalog", "user:pat:alice", "user:pat:bob"],
        "{all}"
    );
    let text = format!("{mine:?}{all}");
    assert!(
        !text.contains("sealed") && !gateway_tests::has_jwt(&text),
        "no token shown: {text}"
    );

    // After a restart nothing needs connecting again: not after the key is rotated (the old
    // one kept as a previous key, what it sealed is sealed again when used), nor once the old
    // key is gone.
    drop((alice, bob));
    let rotation = [
        ("MCP_GATEWAY_LISTEN", listen.as_str()),
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", rotated.as_str()),
        ("OLD_CREDENTIALS_KEY", key.as_str()),
    ];
    let mut gw = gw.restart(&rotation).await;
    let mut without_old = rotation;
    without_old[3].1 = unused.as_str();
    for env in [&rotation, &without_old] {
        gw.wait_up(&["own"]).await;
        let mut alice =
            RawClient::initialize_as(&gw.mcp, url_caps.clone(), Some(&alice_token)).await;
        let r = whoami(&mut alice).await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            "you are alice",
            "{r}\n{}",
            gw.log()
        );
        if env[3].1 == key.as_str() {
            gw = gw.restart(&without_old).await;
        }
    }

    // alice revokes her connection: her next call asks again; bob's is untouched.
    let mut alice = RawClient::initialize_as(&gw.mcp, url_caps, Some(&alice_token)).await;
    let (status, _) = gw
        .send(
            reqwest::Method::DELETE,
            "/v1/connections/own",
            Some(&alice_token),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 204);
    let r = whoami(&mut alice).await;
    assert_eq!(r["error"]["code"], -32042, "{r}");
    let mut bob = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob_token)).await;
    let r = whoami(&mut bob).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");

    // In the console: bob (no admin right) sees only his own connections and disconnects; an
    // admin sees everyone's, makes the catalog account's link and revokes the catalog account,
    // after which the upstream is no longer up.
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/console_connections.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("USER_TOKEN", &bob_token)
        .env("ADMIN_TOKEN", gw.admin_token.as_deref().unwrap())
        .env("ARTIFACTS", &artifacts)
        .env("HOME", &dir);
    let seen = last_json_line(cmd, "the console test").await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert_eq!(seen["userTabs"], json!(["Connections"]), "{seen}");
    assert_eq!(seen["everyoneShown"], false, "{seen}");
    assert!(seen["myRow"].as_str().unwrap().contains("own"), "{seen}");
    assert_eq!(
        seen["afterSignOut"], 0,
        "nothing stays after signing out: {seen}"
    );
    assert_eq!(
        seen["holders"],
        json!(["catalog"]),
        "bob disconnected himself: {seen}"
    );
    for link in ["connectLink", "catalogLink"] {
        assert!(
            seen[link]
                .as_str()
                .unwrap_or_default()
                .contains("/oauth/upstream/connect?ticket="),
            "{link}: {seen}"
        );
    }
    assert_eq!(
        seen["dialogs"].as_array().unwrap().len(),
        2,
        "each asked first: {seen}"
    );
    assert_eq!(seen["errors"], json!([]));
    let (_, bobs) = gw
        .send(
            reqwest::Method::GET,
            "/v1/connections",
            Some(&bob_token),
            &Value::Null,
        )
        .await;
    assert_eq!(
        bobs["connections"],
        json!([]),
        "bob disconnected in the console"
    );
    let mut down = false;
    for _ in 0..100 {
        let health = gw.get_json("/admin/v1/health").await;
        let own = health
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == "own")
            .cloned();
        if own.is_some_and(|o| o["status"] != "up") {
            down = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(down, "without its catalog account the upstream is not up");

    // Connecting, refreshing and revoking are audit rows; no token is in any log line.
    let audit = gw.get_json("/admin/v1/audit?limit=500").await;
    let rows: Vec<(String, String)> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["action"].as_str().unwrap_or("").into(),
                r["principal"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    for (action, who) in [
        ("upstream.connect", "pat:alice"),
        ("upstream.connect", "pat:bob"),
        ("upstream.disconnect", "pat:alice"),
        ("upstream.disconnect", "pat:bob"),
        ("admin.connection.revoke", "pat:root"),
    ] {
        assert!(
            rows.iter().any(|(a, p)| a == action && p == who),
            "{action} by {who} in {rows:?}"
        );
    }
    assert!(
        !gateway_tests::has_jwt(&gw.log()),
        "no token in the log:\n{}",
        gw.log()
    );
    // oidc-provider binds tokens to the gateway's DPoP key (it advertises ES256 proofs); the
    // upstream, which knows only bearer tokens, got them as bearer tokens after its refusal.
    assert!(
        gw.log().contains("the upstream takes no DPoP proofs"),
        "{}",
        gw.log()
    );
}

#[tokio::test]
async fn under_first_user_the_catalog_is_read_with_the_first_connected_account() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "catalog = \"first_user\"").await;
    let gw = own_gateway(&own.config, port).await;

    // Nobody has connected: the upstream is down and says how to.
    let h = own_health(&gw).await;
    assert_ne!(h["status"], "up", "{h}");
    let why = h["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("POST /v1/connections/own"), "{h}");

    let alice = gw.token_for("alice", &["member"]).await;
    let bob = gw.token_for("bob", &["member"]).await;
    let carol = gw.token_for("carol", &["fixtures-only"]).await;
    let get = reqwest::Method::GET;
    let post = reqwest::Method::POST;

    // A user whose roles grant the upstream sees it to connect, and connects ahead of any call;
    // one whose roles do not cannot.
    let (_, mine) = gw
        .send(get.clone(), "/v1/connections", Some(&alice), &Value::Null)
        .await;
    assert_eq!(mine["connectable"], json!(["own"]), "{mine}");
    let (_, theirs) = gw
        .send(get.clone(), "/v1/connections", Some(&carol), &Value::Null)
        .await;
    assert_eq!(theirs["connectable"], json!([]), "{theirs}");
    let (status, _) = gw
        .send(
            post.clone(),
            "/v1/connections/own",
            Some(&carol),
            &json!({}),
        )
        .await;
    assert_eq!(status, 404);
    let (status, link) = gw
        .send(
            post.clone(),
            "/v1/connections/own",
            Some(&alice),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let page = browse(link["url"].as_str().unwrap(), &alice, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    gw.wait_up(&["own"]).await;
    let (_, mine) = gw
        .send(get.clone(), "/v1/connections", Some(&alice), &Value::Null)
        .await;
    assert_eq!(mine["connectable"], json!([]), "{mine}");
    assert_eq!(mine["connections"][0]["upstream"], "own", "{mine}");

    // The catalog was listed with alice's account; bob's calls still go with his own, which he
    // is asked to connect.
    let lists = recorded(&own.upstream, "lists").await;
    assert!(
        !lists.is_empty() && lists.iter().all(|l| l["sub"] == "alice"),
        "{lists:?}"
    );
    let mut b = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob)).await;
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let page = browse(
        &link_in(r["result"]["content"][0]["text"].as_str().unwrap()),
        &bob,
        "bob",
    )
    .await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");

    // alice disconnects: the catalog is read with the next account (bob's), and stays up.
    let (status, _) = gw
        .send(
            reqwest::Method::DELETE,
            "/v1/connections/own",
            Some(&alice),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 204);
    let mut by_bob = false;
    for _ in 0..100 {
        let lists = recorded(&own.upstream, "lists").await;
        by_bob = lists.iter().any(|l| l["sub"] == "bob");
        if by_bob {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        by_bob,
        "the catalog was not read again with bob's account\n{}",
        gw.log()
    );
    gw.wait_up(&["own"]).await;
    let calls = recorded(&own.upstream, "calls").await;
    assert!(calls.iter().all(|c| c["sub"] == "bob"), "{calls:?}");
    // oidc-provider binds the tokens (DPoP); the upstream takes bearer tokens only. It said so
    // once, for the first connection; the others (bob's session, the catalog read again with
    // his account) started with bearer tokens.
    assert_eq!(
        gw.log()
            .matches("the upstream takes no DPoP proofs")
            .count(),
        1,
        "{}",
        gw.log()
    );
    drop(own.idp);
}

/// A connect link is a bearer link: sent on to someone else (by mistake, or by someone who
/// wants the other's account), it must not connect the opener's account at the upstream to
/// the link's user. Whoever opens it signs in to the gateway as the user it was made for.
#[tokio::test]
async fn a_connect_link_opened_by_someone_else_does_not_connect_their_account() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "catalog = \"first_user\"").await;
    let gw = own_gateway(&own.config, port).await;
    let alice = gw.token_for("alice", &["member"]).await;
    let mallory = gw.token_for("mallory", &["member"]).await;
    let connections = |token: String| {
        let gw = &gw;
        async move {
            let (_, mine) = gw
                .send(
                    reqwest::Method::GET,
                    "/v1/connections",
                    Some(&token),
                    &Value::Null,
                )
                .await;
            mine["connections"].clone()
        }
    };

    // mallory asks for a link to connect her account and sends it to alice, who opens it and
    // would sign in at the upstream's provider as herself.
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(&mallory),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let url = link["url"].as_str().unwrap();
    let page = browse(url, &alice, "alice").await;
    assert_eq!(page["status"], 403, "{page}\n{}", gw.log());
    assert!(
        page["text"].as_str().unwrap().contains("another user"),
        "{page}"
    );
    assert_eq!(connections(mallory.clone()).await, json!([]));
    assert_eq!(connections(alice.clone()).await, json!([]));
    assert!(
        recorded(&own.upstream, "lists").await.is_empty(),
        "alice's account was never used"
    );

    // Without a token that is valid, nobody goes on either; a sign-in posted from another site
    // (no cookie of the page) is refused.
    let page = browse(url, "mcpgw_not-a-token", "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("not valid"),
        "{page}"
    );
    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let ticket = url.split("ticket=").nth(1).unwrap();
    let forged = plain
        .post(format!("{}/oauth/upstream/connect", gw.base))
        .form(&[("ticket", ticket), ("pat", mallory.as_str()), ("csrf", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    assert!(forged.headers().get("location").is_none());

    // The user the link was made for goes on to the upstream, and is connected: in Chromium,
    // where the pages' Content-Security-Policy holds.
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/connect_link.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("LINK", url)
        .env("PAT", &mallory)
        .env("LOGIN", "mallory")
        .env("ARTIFACTS", &artifacts)
        .env("HOME", &dir);
    let seen = last_json_line(cmd, "the browser").await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert!(
        seen["askText"]
            .as_str()
            .unwrap()
            .contains("gateway user mallory"),
        "{seen}"
    );
    assert!(
        seen["signedInText"]
            .as_str()
            .unwrap()
            .contains("Signed in as mallory"),
        "{seen}"
    );
    assert!(
        seen["landed"].as_str().unwrap().contains("Connected"),
        "{seen}"
    );
    assert_eq!(seen["csp"], json!([]), "no CSP violation: {seen}");
    let mine = connections(mallory.clone()).await;
    assert_eq!(mine[0]["upstream"], "own", "{mine}");

    // The refusal is an audit row that names both.
    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let refused = audit
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["action"] == "upstream.connect.confirm" && r["principal"] == "pat:alice")
        .cloned()
        .unwrap_or_else(|| panic!("a refusal row in {audit}"));
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert_eq!(refused["target"], "pat:mallory", "{refused}");
    assert_eq!(refused["upstream"], "own", "{refused}");
    drop(own.idp);
}

/// With two replicas, the browser may come back to the one the host is not on: the host's
/// session is told that its URL elicitation is complete all the same.
#[tokio::test]
async fn the_completion_reaches_a_host_on_another_replica() {
    let db = gateway_tests::postgres_database().await;
    // The browsers reach replica b (user_credentials.public_url): links and callbacks go there.
    let port_b = free_port();
    let own = own_upstream(&db, port_b, "").await;
    let key = base64::engine::general_purpose::STANDARD.encode([42; 32]);
    let public = format!("http://127.0.0.1:{port_b}");
    let listen_b = format!("127.0.0.1:{port_b}");
    let env = [
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key.as_str()),
        ("OLD_CREDENTIALS_KEY", key.as_str()),
        ("MCP_GATEWAY_USER_CREDENTIALS_PUBLIC_URL", public.as_str()),
    ];
    let a = Gateway::start_secured(&own.config, &env).await;
    let mut env_b = env.to_vec();
    env_b.push(("MCP_GATEWAY_LISTEN", listen_b.as_str()));
    let b = Gateway::start_secured(&own.config, &env_b).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;
    let link = connect_catalog(&a).await;
    assert!(link.starts_with(&public), "{link}");

    // alice's host is on replica a; she completes the elicitation through replica b.
    let alice = a.token_for("alice", &["member"]).await;
    let caps = json!({"elicitation": {"url": {}}});
    let mut host = RawClient::initialize_as(&a.mcp, caps, Some(&alice)).await;
    let first = whoami(&mut host).await;
    assert_eq!(first["error"]["code"], -32042, "{first}");
    let elicitation = &first["error"]["data"]["elicitations"][0];
    let mut stream = Box::pin(host.listen().await);
    let page = browse(elicitation["url"].as_str().unwrap(), &alice, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let complete = completion(&mut stream)
        .await
        .unwrap_or_else(|| panic!("no completion on replica a within 10 s\n{}", b.log()));
    assert_eq!(
        complete["params"]["elicitationId"], elicitation["elicitationId"],
        "{complete}"
    );
    drop(stream);
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    drop(own.idp);
}

/// An upstream whose authorization server takes registrations (RFC 7591) and knows no client of
/// the gateway: the gateway registers once, and uses that registration after a restart too
/// (before, every process registered again: users saw the gateway once more among their
/// authorized applications after each restart, on each replica).
#[tokio::test]
async fn the_gateway_registers_once_at_an_upstream_and_keeps_it_across_restarts() {
    let dir = scratch();
    let port = free_port();
    let idp = gateway_tests::Idp::start_registering(
        // A client of nobody's, for the scopes the provider offers.
        json!([{"client_id": "other", "client_secret": "other-secret", "scope": "openid tools",
                "redirect_uris": ["http://127.0.0.1:9/cb"]}]),
        json!({}),
    )
    .await;
    let (_server, upstream) =
        spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&idp.issuer)).await;
    let cfg = format!(
        "{}\n[[upstreams]]\nname = \"own\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
         sharing = \"per_session\"\n[upstreams.user_oauth]\ncatalog = \"first_user\"\n\
         [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n\
         [auth]\nmode = \"required\"\n{ROLES}",
        fixture_config(&sqlite_url(&dir), "")
    );
    let key = base64::engine::general_purpose::STANDARD.encode([42; 32]);
    let listen = format!("127.0.0.1:{port}");
    let env = [
        ("MCP_GATEWAY_LISTEN", listen.as_str()),
        ("CREDENTIALS_KEY", key.as_str()),
    ];
    let gw = Gateway::start_secured(&cfg, &env).await;
    gw.wait_up(&["fx"]).await;
    let alice = gw.token_for("alice", &["member"]).await;
    let bob = gw.token_for("bob", &["member"]).await;
    connect_own(&gw, &alice, "alice").await;
    assert_eq!(idp.registrations().await, 1);

    let gw = gw.restart(&env).await;
    gw.wait_up(&["fx", "own"]).await;
    connect_own(&gw, &bob, "bob").await;
    assert_eq!(
        idp.registrations().await,
        1,
        "the registration kept in the store was used again"
    );
    let mut b = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob)).await;
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");
}

/// A user whose tokens come from a provider the gateway cannot sign them in with in a browser
/// (one of `auth.issuers`, no `[auth.server.oidc]`): their link cannot be confirmed and says
/// why; with `user_credentials.confirm_links = false` it goes on to the upstream unconfirmed.
#[tokio::test]
async fn a_link_whose_user_cannot_sign_in_here_says_so_unless_confirming_is_off() {
    let company = gateway_tests::Idp::start(json!([
        {"client_id": "agent", "client_secret": "agent-secret", "scope": "mcp"}
    ]))
    .await;
    for confirm in [true, false] {
        let dir = scratch();
        let port = free_port();
        let own = own_upstream(&sqlite_url(&dir), port, "").await;
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let issuers = format!(
            "[auth]\nmode = \"required\"\nresource = \"{resource}\"\nrequired_scopes = [\"mcp\"]\n\
             [[auth.issuers]]\nissuer = \"{}\"\n\
             [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"agent\"\nrole = \"member\"\n",
            company.issuer
        );
        let mut cfg = own
            .config
            .replace("[auth]\nmode = \"required\"\n", &issuers);
        if !confirm {
            cfg = cfg.replace(
                "[user_credentials]\n",
                "[user_credentials]\nconfirm_links = false\n",
            );
        }
        let gw = own_gateway(&cfg, port).await;
        let token = company
            .token("agent", "agent-secret", "mcp", &resource)
            .await;
        let (status, link) = gw
            .send(
                reqwest::Method::POST,
                "/v1/connections/own",
                Some(&token),
                &json!({}),
            )
            .await;
        assert_eq!(status, 200, "{link}\n{}", gw.log());
        let opened = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(link["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        if confirm {
            assert_eq!(opened.status(), 403);
            let text = opened.text().await.unwrap();
            assert!(text.contains("cannot check in a browser"), "{text}");
            assert!(text.contains("confirm_links"), "{text}");
        } else {
            assert_eq!(opened.status(), 302);
            let to = opened.headers()["location"].to_str().unwrap().to_string();
            assert!(to.starts_with(&own.idp.issuer), "{to}");
        }
    }
}

/// Every token an upstream server was presented, by audience.
async fn presented_audiences(upstream: &str) -> Vec<String> {
    recorded(upstream, "presented")
        .await
        .iter()
        .flat_map(|p| match &p["aud"] {
            Value::Array(a) => a
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
            v => v.as_str().map(String::from).into_iter().collect::<Vec<_>>(),
        })
        .collect()
}

#[tokio::test]
async fn a_users_token_for_one_server_never_reaches_another_under_the_same_name() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "").await;
    let (listen, key) = own_listen_and_key(port);
    let env = own_env(&listen, &key);
    let gw = own_gateway(&own.config, port).await;
    connect_catalog(&gw).await;
    let alice = gw.token_for("alice", &["member"]).await;
    connect_own(&gw, &alice, "alice").await;
    let mut host = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice)).await;
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    drop(host);

    // The operator points `own` at another server (same provider, another resource).
    let (_other_server, other) =
        spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&own.idp.issuer)).await;
    let moved = own.config.replace(&own.upstream, &other);
    assert_ne!(moved, own.config);
    let gw = gw.restart_with(&moved, &env).await;
    gw.wait_up(&["fx"]).await;
    // Every connection was made for the first server: the catalog's account is connected
    // again, alice is asked to connect again, and the second server never sees a token issued
    // for the first.
    connect_catalog(&gw).await;
    let mut host = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice)).await;
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["isError"], true, "{r}\n{}", gw.log());
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/oauth/upstream/connect?ticket="), "{text}");
    let seen = presented_audiences(&other).await;
    assert!(
        !seen.contains(&own.upstream),
        "a token for {} reached {other}: {seen:?}",
        own.upstream
    );
    let page = browse(&link_in(text), &alice, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    assert_eq!(recorded(&other, "calls").await.len(), 1);
    drop(host);
    let audit = gw
        .get_json("/admin/v1/audit?action=upstream.disconnect")
        .await;
    assert!(
        audit.to_string().contains("moved"),
        "the forgotten connection is audited: {audit}"
    );

    // The operator removes `own` from the file: its users' tokens go with it.
    let start = moved
        .find("[[upstreams]]\nname = \"own\"")
        .expect("own's table");
    let end = moved[start..].find("[user_credentials]").unwrap() + start;
    let removed = format!("{}{}", &moved[..start], &moved[end..]);
    let gw = gw.restart_with(&removed, &env).await;
    gw.wait_up(&["fx"]).await;
    let all = gw.get_json("/admin/v1/connections").await;
    assert_eq!(all, json!([]), "nothing of a removed upstream is kept");
}
