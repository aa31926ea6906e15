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
