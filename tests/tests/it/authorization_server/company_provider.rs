//! Users sign in at the company's OAuth provider and get the roles of their groups.

use super::*;

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
    let gw = start_at(&cfg, port, &[("IDP_SECRET", "gateway-secret")]).await;
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

/// A connect link of a user who signs in through the gateway's server is confirmed at the
/// company's provider: whoever opens it signs in there, and goes on only as the link's user
/// (here bob, whose link alice opens first). One oidc-provider is both the company's provider
/// and the upstream's own authorization server.
#[tokio::test]
async fn a_connect_link_is_confirmed_at_the_company_provider() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let idp = gateway_tests::Idp::start_with_accounts(
        json!([{"client_id": "gateway", "client_secret": "gateway-secret",
                "scope": "openid email",
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/callback")]},
               {"client_id": "gateway-upstream", "client_secret": "upstream-secret",
                "scope": "openid tools", "refresh": true,
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/upstream/callback")]}]),
        json!({"alice": {}, "bob": {}}),
    )
    .await;
    let (_server, upstream) =
        gateway_tests::spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&idp.issuer))
            .await;
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        &format!(
            "[auth.server.oidc]\nissuer = \"{}\"\nclient_id = \"gateway\"\n\
             client_secret = {{ env = \"IDP_SECRET\" }}\ndisplay_name = \"Example Corp\"\n\
             [[upstreams]]\nname = \"own\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
             sharing = \"per_session\"\n[upstreams.user_oauth]\nclient_id = \"gateway-upstream\"\n\
             client_secret = {{ env = \"UPSTREAM_SECRET\" }}\ncatalog = \"first_user\"\n\
             [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n",
            idp.issuer
        ),
    );
    let key = "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=";
    let env = [
        ("IDP_SECRET", "gateway-secret"),
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key),
    ];
    let gw = start_at(&cfg, port, &env).await;

    // bob's host signs him in on the gateway's pages (with his token) and gets a token of the
    // gateway's server: his principal is the server's `bob`.
    let bob_pat = gw.token_for("bob", &["admin"]).await;
    let id = register(&gw, "http://127.0.0.1:9/cb", "Host").await;
    let (verifier, challenge) = pkce();
    let query = auth_query(&id, &challenge, port);
    let mut w = Walk::new(&gw);
    let code = param(
        &location(&w.through(&as_pairs(&query), &bob_pat).await),
        "code",
    )
    .unwrap();
    let tokens = exchange(&gw, &id, &code, &verifier, "http://127.0.0.1:9/cb").await;
    let bob = tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"));
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(bob),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let url = link["url"].as_str().unwrap();

    // alice opens it and signs in at the company's provider: she is not bob.
    let browse = |login: &'static str| {
        let mut cmd = node("idp/browser.mjs");
        cmd.arg(url).arg(login).arg("federated");
        last_json_line(cmd, "the browser")
    };
    let page = browse("alice").await;
    assert_eq!(page["status"], 403, "{page}\n{}", gw.log());
    assert!(
        page["text"].as_str().unwrap().contains("another user"),
        "{page}"
    );
    let bobs = || async {
        let (_, mine) = gw
            .send(
                reqwest::Method::GET,
                "/v1/connections",
                Some(bob),
                &Value::Null,
            )
            .await;
        mine["connections"].clone()
    };
    assert_eq!(bobs().await, json!([]));

    // bob signs in there as bob, goes on to the upstream's server, and is connected: the
    // upstream lists its tools with his account.
    let page = browse("bob").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}\n{}",
        gw.log()
    );
    let mine = bobs().await;
    assert_eq!(mine[0]["upstream"], "own", "{mine}");
    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let confirms: Vec<(&str, &str)> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "upstream.connect.confirm")
        .map(|r| {
            (
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    let alice_key = format!("oauth:{}#alice", idp.issuer);
    let bob_key = format!("oauth:http://127.0.0.1:{port}#bob");
    assert!(
        confirms.contains(&(alice_key.as_str(), "refused"))
            && confirms.contains(&(bob_key.as_str(), "ok")),
        "{confirms:?}"
    );
}
