//! Attacks on the flow are refused with a clear error.

use super::*;

#[tokio::test]
async fn attacks_on_the_flow_are_refused_with_a_clear_error() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "registrations_per_minute = 3",
    );
    let gw = start_at(&cfg, port, &[]).await;
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

    // A form posted again (a double click, the back button, a replay from the same browser):
    // one code, then a page that says so, and no second code.
    let mut w = Walk::new(&gw);
    let page = w.authorize(&pairs).await.text().await.unwrap();
    let cookie = w.cookie.clone();
    let mut form = vec![("ticket", field(&page, "ticket")), ("pat", pat.clone())];
    let mut path = "/oauth/authorize";
    let mut r = w.post(path, &as_pairs(&form), &cookie).await;
    if r.status() != 303 {
        let consent = r.text().await.unwrap();
        form = vec![
            ("ticket", field(&consent, "ticket")),
            ("decision", "allow".to_string()),
        ];
        path = "/oauth/consent";
        r = w.post(path, &as_pairs(&form), &cookie).await;
    }
    assert_eq!(r.status(), 303);
    assert!(param(&location(&r), "code").is_some());
    let again = w.post(path, &as_pairs(&form), &cookie).await;
    assert_eq!(again.status(), 400, "{path} posted again");
    assert!(again.headers().get("location").is_none());
    assert!(again.text().await.unwrap().contains("already completed"));

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
        !log.contains(&pat) && !gateway_tests::has_jwt(&log),
        "no token in the log"
    );
}
