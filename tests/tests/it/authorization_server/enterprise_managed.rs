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
    // ID tokens of 30 s: each grant needs the sign-in's ID token refreshed first; refresh
    // tokens rotate, and a spent one used again revokes the sign-in.
    let company = gateway_tests::Idp::start_with_env(
        json!([{"client_id": "gateway", "client_secret": "gateway-secret",
                "scope": "openid groups", "refresh": true, "rotate": true,
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
             issuer = \"{}\"\n\
             [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n",
            company.issuer,
            // Pinned: the grants go to the upstream's own server, whatever its metadata says.
            upstream_server.issuer
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
        said.contains("gave no grant") && said.contains("may not use"),
        "{r}"
    );
    assert!(!said.contains("/oauth/upstream/connect"), "{r}");

    // bob's connect link (the console's Connect) goes through his company sign-in and
    // connects at once, with no page of the upstream's.
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(&bob),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let before = upstream_server.grants().await["urn:ietf:params:oauth:grant-type:jwt-bearer"]
        .as_u64()
        .unwrap();
    let mut browse = node("idp/browser.mjs");
    browse
        .arg(link["url"].as_str().unwrap())
        .arg("bob")
        .arg("federated");
    let page = last_json_line(browse, "the browser").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}
{}",
        gw.log()
    );
    let after = upstream_server.grants().await["urn:ietf:params:oauth:grant-type:jwt-bearer"]
        .as_u64()
        .unwrap();
    assert_eq!(after, before + 1, "one grant redeemed for the link");

    // An admin connects the catalog's account through its link, from her own company sign-in
    // (alice's group maps to admin); a token's admin has none, and the link's page says so.
    let catalog_link = |token: Option<String>| {
        let gw = &gw;
        async move {
            let (status, link) = gw
                .send(
                    reqwest::Method::POST,
                    "/admin/v1/upstreams/own/connection",
                    token.as_deref(),
                    &json!({}),
                )
                .await;
            assert_eq!(status, 200, "{link}");
            link["url"].as_str().unwrap().to_string()
        }
    };
    let mut browse = node("idp/browser.mjs");
    browse
        .arg(catalog_link(Some(alice.clone())).await)
        .arg("alice")
        .arg("federated");
    let page = last_json_line(browse, "the browser").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}\n{}",
        gw.log()
    );
    let all = gw.get_json("/admin/v1/connections").await;
    assert!(
        all.as_array()
            .unwrap()
            .iter()
            .any(|c| c["upstream"] == "own"
                && c["holder"] == "catalog"
                && c["connected_by"] == format!("oauth:http://127.0.0.1:{port}#alice")),
        "{all}"
    );
    let mut browse = node("idp/browser.mjs");
    browse
        .arg(catalog_link(None).await)
        .arg("admin")
        .arg(gw.admin_token.as_deref().unwrap());
    let page = last_json_line(browse, "the browser").await;
    assert!(
        page["text"]
            .as_str()
            .unwrap()
            .contains("sign-in at your company"),
        "{page}"
    );

    // A token's owner has no company sign-in: their call is handed the link, whose page offers
    // the company's sign-in.
    let carol = gw.token_for("carol", &["admin"]).await;
    let r = whoami(&gw, &carol).await;
    assert!(r.to_string().contains("/oauth/upstream/connect"), "{r}");

    // alice forgets her company sign-in: the upstream tokens it gave her go with it, and her
    // next call is handed the link rather than acting as her until they expire.
    let (status, body) = gw
        .send(
            reqwest::Method::DELETE,
            "/v1/connections/@company",
            Some(&alice),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    let r = whoami(&gw, &alice).await;
    assert!(r.to_string().contains("/oauth/upstream/connect"), "{r}");

    // ID tokens, grants and upstream tokens are JWTs: none reaches the gateway's log.
    assert!(!gateway_tests::has_jwt(&gw.log()), "a token in the log");

    // The writer batches: the rows come within a moment.
    let key = |who: &str| format!("oauth:http://127.0.0.1:{port}#{who}");
    let want = [
        (key("alice"), "ok"),
        (key("bob"), "ok"),
        (key("mallory"), "refused"),
    ];
    let mut rows = Vec::new();
    for _ in 0..100 {
        let audit = gw.get_json("/admin/v1/audit?limit=200").await;
        rows = audit
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == "upstream.connect")
            .map(|r| {
                (
                    r["principal"].as_str().unwrap().to_string(),
                    r["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>();
        if want
            .iter()
            .all(|(k, o)| rows.contains(&(k.clone(), o.to_string())))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        want.iter()
            .all(|(k, o)| rows.contains(&(k.clone(), o.to_string()))),
        "{rows:?}"
    );

    // The operator turns enterprise management off: no upstream needs the company sign-ins
    // any more, and they are forgotten.
    let company_rows = |all: &Value| {
        all.as_array()
            .unwrap()
            .iter()
            .filter(|c| c["upstream"] == "@company")
            .count()
    };
    assert!(company_rows(&gw.get_json("/admin/v1/connections").await) >= 2);
    let plain = cfg.replace("enterprise_managed = true\n", "");
    assert_ne!(plain, cfg);
    let listen = format!("127.0.0.1:{port}");
    let mut all_env = vec![("MCP_GATEWAY_LISTEN", listen.as_str())];
    all_env.extend_from_slice(&env);
    let gw = gw.restart_with(&plain, &all_env).await;
    gw.wait_up(&["fx"]).await;
    let all = gw.get_json("/admin/v1/connections").await;
    assert_eq!(company_rows(&all), 0, "{all}");
}

/// A host of the enterprise-managed kind signs its user in at the company's provider, exchanges
/// the ID token there for a grant naming the gateway's authorization server, and redeems it at
/// `/oauth/token`: a token with the roles of the user's groups, no page of the gateway's, no
/// refresh token. A grant is redeemed once, by the client it names. The Python SDK's
/// identity-assertion provider does the same as a real host.
#[tokio::test]
async fn a_host_redeems_its_users_company_grant_for_a_gateway_token() {
    let port = free_port();
    let host_cb = "http://127.0.0.1:9/cb";
    let company = gateway_tests::Idp::start_with_accounts(
        json!([{"client_id": "gateway", "client_secret": "gateway-secret",
                "scope": "openid groups",
                "redirect_uris": [format!("http://127.0.0.1:{port}/oauth/callback")]},
               {"client_id": "host-app", "client_secret": "host-secret",
                "scope": "openid groups", "redirect_uris": [host_cb],
                "id_jag": {"client_id": "set below"}}]),
        json!({"alice": {"groups": ["eng"]}}),
    )
    .await;
    // Two replicas of one store: a grant spent at one is spent at the other.
    let db = postgres_database().await;
    let cfg = config(
        &db,
        port,
        &format!(
            "pat_sign_in = false\n[auth.server.oidc]\nissuer = \"{}\"\nclient_id = \"gateway\"\n\
             client_secret = {{ env = \"IDP_SECRET\" }}\nscopes = [\"groups\"]\n\
             [[auth.server.clients]]\nclient_id = \"enterprise-agent\"\nredirect_uris = []\n\
             client_secret = {{ env = \"AGENT_SECRET\" }}\nidentity_assertion_grants = true\n\
             [[auth.role_mappings]]\nclaim = \"groups\"\nvalue = \"eng\"\nrole = \"reader\"\n",
            company.issuer
        ),
    );
    let seal = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [5u8; 32]);
    let env = [
        ("IDP_SECRET", "gateway-secret"),
        ("AGENT_SECRET", "agent-secret"),
        ("MCP_GATEWAY_USER_CREDENTIALS_KEY", seal.as_str()),
    ];
    let gw = start_at(&cfg, port, &env).await;
    let mut replica = Gateway::start_with_env(&cfg, &env).await;
    replica.admin_token = gw.admin_token.clone();
    replica.wait_up(&["fx"]).await;
    let issuer = format!("http://127.0.0.1:{port}");
    let meta = gw.get_json("/.well-known/oauth-authorization-server").await;
    assert!(
        meta["grant_types_supported"]
            .to_string()
            .contains("jwt-bearer")
            && meta["authorization_grant_profiles_supported"]
                == json!(["urn:ietf:params:oauth:grant-profile:id-jag"]),
        "{meta}"
    );
    // The host registered for this grant, with a secret; the company names it in its grants.
    let http = reqwest::Client::new();
    let registered = |auth: &'static str| {
        http.post(format!("{}/oauth/register", gw.base))
            .json(
                &json!({"redirect_uris": [host_cb], "client_name": "XAA host",
                          "token_endpoint_auth_method": auth,
                          "grant_types": ["urn:ietf:params:oauth:grant-type:jwt-bearer"]}),
            )
            .send()
    };
    let host: Value = registered("client_secret_basic")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (host_id, host_secret) = (
        host["client_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{host}")),
        host["client_secret"].as_str().unwrap(),
    );
    http.post(format!("{}/test/id-jag-client", company.issuer))
        .json(&json!({"client": "host-app", "client_id": host_id}))
        .send()
        .await
        .unwrap();

    // alice signs in to the host at the company (a browser), and the host gets her ID token.
    let (verifier, challenge) = pkce();
    let mut authorize = url::Url::parse(&format!("{}/auth", company.issuer)).unwrap();
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", "host-app")
        .append_pair("redirect_uri", host_cb)
        .append_pair("scope", "openid groups")
        .append_pair("state", "s")
        .append_pair("nonce", "n")
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let mut browser = node("idp/browser.mjs");
    browser
        .arg(authorize.as_str())
        .arg("alice")
        .env("STOP_AT", host_cb);
    let back = last_json_line(browser, "the browser").await;
    let code = param(
        &url::Url::parse(back["url"].as_str().unwrap_or_else(|| panic!("{back}"))).unwrap(),
        "code",
    )
    .unwrap_or_else(|| panic!("{back}"));
    let at_company = |form: Vec<(&'static str, String)>| {
        let sent = http
            .post(format!("{}/token", company.issuer))
            .basic_auth("host-app", Some("host-secret"))
            .form(&form)
            .send();
        async move { sent.await.unwrap().json::<Value>().await.unwrap() }
    };
    let signed = at_company(vec![
        ("grant_type", "authorization_code".into()),
        ("code", code),
        ("redirect_uri", host_cb.into()),
        ("code_verifier", verifier),
    ])
    .await;
    let id_token = signed["id_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{signed}"));
    // The host's grant for the gateway, exchanged for alice's ID token at the company.
    let grant_for_gateway = || {
        at_company(vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".into(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".into(),
            ),
            ("audience", issuer.clone()),
            ("resource", format!("{issuer}/mcp")),
            ("subject_token", id_token.into()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".into(),
            ),
        ])
    };
    let exchanged = grant_for_gateway().await;
    let grant = exchanged["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{exchanged}"));

    // Redeemed by another client of the gateway's: refused, and not spent.
    let other: Value = registered("client_secret_post")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let redeem_grant_at = |gw: &Gateway, id: &str, secret: &str, grant: &str| {
        http.post(format!("{}/oauth/token", gw.base))
            .basic_auth(id, Some(secret))
            .form(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", grant),
            ])
            .send()
    };
    let redeem_at = |gw: &Gateway, id: &str, secret: &str| redeem_grant_at(gw, id, secret, grant);
    let r = redeem_at(
        &gw,
        other["client_id"].as_str().unwrap(),
        other["client_secret"].as_str().unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert!(
        e["error_description"]
            .as_str()
            .unwrap()
            .contains("another client"),
        "{e}"
    );

    let r = redeem_at(&gw, host_id, host_secret).await.unwrap();
    assert_eq!(r.status(), 200);
    let tokens: Value = r.json().await.unwrap();
    let token = tokens["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}\n{}", gw.log()));
    assert!(tokens["refresh_token"].is_null(), "{tokens}");
    assert_eq!(
        fx_tools(&gw, token).await,
        ["fx__echo"],
        "alice's group eng maps to reader"
    );

    let r = redeem_at(&replica, host_id, host_secret).await.unwrap();
    assert_eq!(r.status(), 400, "a grant is redeemed once, on any replica");
    let e: Value = r.json().await.unwrap();
    assert!(
        e["error_description"]
            .as_str()
            .unwrap()
            .contains("used before"),
        "{e}"
    );
    // The ID token itself is not a grant.
    let r = http
        .post(format!("{}/oauth/token", gw.base))
        .basic_auth(host_id, Some(host_secret))
        .form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", id_token),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // A real host: the Python SDK's IdentityAssertionOAuthProvider, as a client the config
    // registered for grants (the company now names it in them), its grant fetched from the
    // company with the same sign-in.
    http.post(format!("{}/test/id-jag-client", company.issuer))
        .json(&json!({"client": "host-app", "client_id": "enterprise-agent"}))
        .send()
        .await
        .unwrap();
    let mut python = Command::new(peers().join("venv/bin/python"));
    python
        .arg(gateway_tests::package_dir().join("clients/python_id_jag_client.py"))
        .arg(&gw.mcp)
        .arg(&issuer)
        .arg("enterprise-agent")
        .arg("agent-secret")
        .arg(format!("{}/token", company.issuer))
        .arg("host-app")
        .arg("host-secret")
        .arg(id_token);
    let seen = last_json_line(python, "the Python host").await;
    saw_the_readers_tools(&gw, &seen, "from an enterprise host");
    assert_eq!(seen["revision"], "2026-07-28", "{seen}");
    assert_eq!(seen["grants"], 1, "{seen}");

    assert!(
        !gateway_tests::has_jwt(&gw.log()) && !gateway_tests::has_jwt(&replica.log()),
        "a token in the log"
    );
    // The company's provider goes down. A grant the host (the SDK's client, which the company
    // names now) fetched before is redeemed with the
    // provider's keys the gateway read before (it read them again at every redemption, so the
    // outage refused the grant as "not the company's", invalid_grant, and the SDK host dropped
    // its tokens). A replica that never read them cannot check the grant: "try again", 503.
    let before_outage = grant_for_gateway().await;
    let (early, late) = (
        before_outage["access_token"].as_str().unwrap().to_string(),
        grant_for_gateway().await["access_token"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    http.post(format!("{}/test/outage", company.issuer))
        .send()
        .await
        .unwrap();
    let r = redeem_grant_at(&gw, "enterprise-agent", "agent-secret", &early)
        .await
        .unwrap();
    let status = r.status();
    let body = r.text().await.unwrap();
    assert_eq!(status, 200, "{body}\n{}", gw.log());
    let unread = Gateway::start_with_env(&cfg, &env).await;
    let r = redeem_grant_at(&unread, "enterprise-agent", "agent-secret", &late)
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"], "temporarily_unavailable", "{e}");
    http.post(format!("{}/test/outage-over", company.issuer))
        .send()
        .await
        .unwrap();
    // Back: the keys are read again at the first try past the 10 s that bound how often a
    // failed read is repeated.
    let mut status = 0;
    for _ in 0..30 {
        let r = redeem_grant_at(&unread, "enterprise-agent", "agent-secret", &late)
            .await
            .unwrap();
        status = r.status().as_u16();
        if status != 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(status, 200, "the grant was not spent by the failed try");
    unread.stop().await;

    let grants = gw.get_json("/admin/v1/oauth/grants").await;
    let via = format!("id-jag:{}", company.issuer);
    assert!(
        grants
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["subject"] == "alice" && g["signed_in_with"] == via.as_str()),
        "{grants}"
    );
}
