//! Enterprise-managed authorization (SEP-990): an upstream whose users' tokens come from their
//! sign-in at the company's provider. Two real oidc-providers: the company's (it issues ID
//! tokens and, after its policy, identity assertion grants) and the upstream's own
//! authorization server (it redeems the company's grants); the upstream is a TypeScript SDK
//! server that answers each caller by the subject of their token.

use super::*;

/// Sign in at the company as `login` through a host's browser: the host's access token.
async fn signed_in(gw: &Gateway, dir: &std::path::Path, port: u16, login: &str) -> String {
    let id = register(gw, "http://127.0.0.1/cb", "Host").await;
    let seen = in_chromium(gw, dir, &id, port, &[("FEDERATED_LOGIN", login)]).await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    let tokens = redeem(gw, &id, &seen).await;
    tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"))
        .to_string()
}

/// `own__whoami` called with `token`, once the upstream's catalog lists it: the call's result.
async fn whoami(gw: &Gateway, token: &str) -> Value {
    let mut c = gateway_tests::RawClient::initialize_as(&gw.mcp, json!({}), Some(token)).await;
    for _ in 0..100 {
        let r = c.request("tools/list", json!({})).await;
        let listed = r["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "own__whoami"));
        if listed {
            return c
                .request(
                    "tools/call",
                    json!({"name": "own__whoami", "arguments": {}}),
                )
                .await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("own__whoami was never listed\n{}", gw.log());
}

#[tokio::test]
async fn each_user_reaches_the_upstream_as_themselves_from_their_company_sign_in() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    // ID tokens of 30 s: each grant needs the sign-in's ID token refreshed first.
    let company = gateway_tests::Idp::start_with_env(
        json!([{"client_id": "gateway", "client_secret": "gateway-secret",
                "scope": "openid groups", "refresh": true,
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/callback")],
                "id_jag": {"client_id": "gateway-at-upstream"}}]),
        json!({"alice": {"groups": ["eng"]}, "bob": {"groups": ["eng"]},
               "mallory": {"groups": ["eng"], "no_id_jag": true}}),
        &[("IDP_ID_TOKEN_TTL", "30")],
    )
    .await;
    let upstream_server = gateway_tests::Idp::start_with_env(
        json!([{"client_id": "gateway-at-upstream", "client_secret": "upstream-secret",
                "scope": "tools", "jwt_bearer": true}]),
        json!({}),
        &[("IDP_TRUST", company.issuer.as_str())],
    )
    .await;
    let (_server, upstream) = gateway_tests::spawn_reporting_url(
        node("upstream/own_accounts.mjs").arg(&upstream_server.issuer),
    )
    .await;
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        &format!(
            "pat_sign_in = false\n[auth.server.oidc]\nissuer = \"{}\"\nclient_id = \"gateway\"\n\
             client_secret = {{ env = \"IDP_SECRET\" }}\nscopes = [\"groups\"]\n\
             [[auth.role_mappings]]\nclaim = \"groups\"\nvalue = \"eng\"\nrole = \"admin\"\n\
             [[upstreams]]\nname = \"own\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
             sharing = \"per_session\"\n[upstreams.user_oauth]\n\
             client_id = \"gateway-at-upstream\"\nclient_secret = {{ env = \"UPSTREAM_SECRET\" }}\n\
             catalog = \"first_user\"\nenterprise_managed = true\n\
             [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n",
            company.issuer
        ),
    );
    let env = [
        ("IDP_SECRET", "gateway-secret"),
        ("UPSTREAM_SECRET", "upstream-secret"),
        (
            "CREDENTIALS_KEY",
            "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=",
        ),
    ];
    let gw = start_at(&cfg, port, &env).await;

    // alice and bob sign in at the company, and nowhere else: each one's calls reach the
    // upstream as themselves, with no link and no page of the upstream's.
    let alice = signed_in(&gw, &dir, port, "alice").await;
    let r = whoami(&gw, &alice).await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "you are alice",
        "{r}\n{}",
        gw.log()
    );
    let bob = signed_in(&gw, &dir, port, "bob").await;
    let r = whoami(&gw, &bob).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");
    let r = whoami(&gw, &alice).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");

    let at_company = company.grants().await;
    let at_upstream = upstream_server.grants().await;
    assert!(
        at_company["id-jag"].as_u64() >= Some(2),
        "a grant for each user: {at_company}"
    );
    assert!(
        at_company["refresh_token"].as_u64() >= Some(1),
        "ID tokens about to expire are refreshed first: {at_company}"
    );
    assert!(
        at_upstream["urn:ietf:params:oauth:grant-type:jwt-bearer"].as_u64() >= Some(2),
        "{at_upstream}"
    );
    assert!(
        at_upstream.get("authorization_code").is_none(),
        "nobody consented at the upstream: {at_upstream}"
    );

    // The company's policy refuses mallory this upstream: her call says so; no link.
    let mallory = signed_in(&gw, &dir, port, "mallory").await;
    let r = whoami(&gw, &mallory).await;
    let said = r.to_string();
    assert!(
        said.contains("refused the grant") && said.contains("may not use"),
        "{r}"
    );
    assert!(!said.contains("/oauth/upstream/connect"), "{r}");

    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let rows: Vec<(&str, &str)> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "upstream.connect")
        .map(|r| {
            (
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    let key = |who: &str| format!("oauth:http://127.0.0.1:{port}#{who}");
    assert!(
        rows.contains(&(key("alice").as_str(), "ok"))
            && rows.contains(&(key("bob").as_str(), "ok"))
            && rows.contains(&(key("mallory").as_str(), "refused")),
        "{rows:?}"
    );
}
