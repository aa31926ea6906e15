//! Each user calls the upstream with their own account: links, connections, refreshes,
//! revocation and what the catalog account reads.

use super::*;

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
    refuse_tokens_of(&upstream, "alice").await;
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
    cmd.env("CHROMIUM", crate::it::console::chromium())
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
