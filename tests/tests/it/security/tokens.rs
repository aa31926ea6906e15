//! OAuth access tokens from a real OpenID provider, and personal access tokens shown once
//! and revoked on every replica and from the command line.

use super::*;

#[tokio::test]
async fn oauth_access_tokens_from_a_real_identity_provider() {
    let clients = json!([
        {"client_id": "agent", "client_secret": "agent-secret", "scope": "mcp other"},
        {"client_id": "brief", "client_secret": "brief-secret", "scope": "mcp", "ttl": 1}
    ]);
    let idp = Idp::start(clients.clone()).await;
    let stranger = Idp::start(clients).await;
    let dir = gateway_tests::scratch();
    let config = format!(
        "{}\n[auth]\nmode = \"required\"\nresource = \"{RESOURCE}\"\nrequired_scopes = [\"mcp\"]\n\
         leeway_secs = 0\njwks_min_refresh_secs = 0\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"agent\"\nrole = \"ops\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"brief\"\nrole = \"reader\"\n{ROLES}",
        fixture_config(&sqlite_url(&dir), ""),
        idp.issuer
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    let list = |t: Option<String>| {
        let url = gw.mcp.clone();
        async move { call_as(&url, t.as_deref(), "tools/list", json!({})).await }
    };

    // No token: 401 naming the metadata, which names the issuer.
    let (status, h, _) = list(None).await;
    assert_eq!(status, 401);
    let c = challenge(&h);
    let meta_url = format!("{}/.well-known/oauth-protected-resource/mcp", gw.base);
    assert!(
        c.starts_with("Bearer ")
            && c.contains(&format!(
                "resource_metadata=\"{}",
                "https://gateway.test/.well-known/oauth-protected-resource/mcp"
            )),
        "{c}"
    );
    let meta: Value = reqwest::get(&meta_url).await.unwrap().json().await.unwrap();
    assert_eq!(meta["resource"], RESOURCE);
    assert_eq!(meta["authorization_servers"], json!([idp.issuer]));
    assert_eq!(meta["scopes_supported"], json!(["mcp"]));

    // The right audience and scope: in, with the role its claims map to.
    let good = idp.token("agent", "agent-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(good.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert!(tool_names(&body).contains(&"fx__pid".to_string()));
    let brief = idp.token("brief", "brief-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(brief.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        tool_names(&body),
        ["fx__echo"],
        "the reader role sees one tool"
    );

    let refused = |token: String, why: &'static str| {
        let url = gw.mcp.clone();
        async move {
            let (status, h, body) = call_as(&url, Some(&token), "tools/list", json!({})).await;
            assert_eq!(status, 401, "{why}: {body}");
            let c = challenge(&h);
            assert!(
                c.contains("error=\"invalid_token\"") && c.contains("resource_metadata="),
                "{why}: {c}"
            );
            c
        }
    };
    let c = refused(
        idp.token("agent", "agent-secret", "mcp", "https://other.test/mcp")
            .await,
        "wrong audience",
    )
    .await;
    assert!(c.contains("not for this resource"), "{c}");
    let c = refused(
        stranger
            .token("agent", "agent-secret", "mcp", RESOURCE)
            .await,
        "wrong issuer",
    )
    .await;
    assert!(c.contains("not trusted"), "{c}");
    let mut bad_sig = good.clone();
    let last = bad_sig.pop().unwrap();
    bad_sig.push(if last == 'A' { 'B' } else { 'A' });
    refused(bad_sig, "bad signature").await;
    refused(unsigned(&good), "alg none").await;
    refused("not.a.jwt".into(), "garbage").await;

    // Missing scope: 403 insufficient_scope.
    let other = idp.token("agent", "agent-secret", "other", RESOURCE).await;
    let (status, h, _) = list(Some(other)).await;
    assert_eq!(status, 403);
    let c = challenge(&h);
    assert!(
        c.contains("error=\"insufficient_scope\"") && c.contains("scope=\"mcp\""),
        "{c}"
    );

    // Expired (ttl 1 s, no leeway): waiting for the clock is the point here.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let c = refused(brief, "expired").await;
    assert!(c.contains("expired"), "{c}");

    // A key rotated out: once the gateway has seen the new key, the old one is refused.
    let (status, _, _) = list(Some(good.clone())).await;
    assert_eq!(status, 200);
    idp.rotate().await;
    let fresh = idp.token("agent", "agent-secret", "mcp", RESOURCE).await;
    let (status, _, body) = list(Some(fresh.clone())).await;
    assert_eq!(status, 200, "a token signed with the new key: {body}");
    refused(good, "rotated-out key").await;

    // Real clients with the bearer token: the Python SDK and the Inspector CLI.
    let report = python_client_as(
        &gw.mcp,
        "default",
        &json!([["fx__echo", {"message": "through oauth"}]]),
        &gw.log(),
        Some(&fresh),
    )
    .await;
    assert_eq!(report["results"], json!(["through oauth"]));
    let report = python_client_as(&gw.mcp, "legacy", &json!([]), &gw.log(), Some(&fresh)).await;
    assert!(report["tools"].as_array().unwrap().len() > 1);
    let auth = format!("Authorization: Bearer {fresh}");
    let listed =
        gateway_tests::inspector(&gw.mcp, &["--method", "tools/list", "--header", &auth]).await;
    assert!(listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "fx__pid"));
}

#[tokio::test]
async fn personal_access_tokens_are_shown_once_and_revoked_on_every_replica() {
    let db = gateway_tests::postgres_database().await;
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\n",
        fixture_config(&db, "")
    );
    let a = Gateway::start_secured(&config, &[]).await;
    let b = Gateway::start_secured(&config, &[]).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;

    let (status, created) = admin(
        &a,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "ci", "owner": "carol", "roles": ["reader"], "expires_in_days": 30})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().unwrap().to_string();
    let id = created["id"].as_str().unwrap().to_string();
    assert!(
        token.starts_with(&format!("mcpgw_{id}_")),
        "recognisable prefix: {token}"
    );
    let (status, bad) = admin(
        &a,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "x", "owner": "y", "roles": ["nope"]})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");

    // Stored as a hash only: the list and the database never hold the token.
    let (_, listed) = admin(&a, reqwest::Method::GET, "/admin/v1/tokens", None).await;
    assert!(!listed.to_string().contains(&token));
    let mine = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(mine["owner"], "carol");
    assert!(mine["expires_at"].as_i64().unwrap() > mine["created_at"].as_i64().unwrap());
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let stored: String = sqlx::query_scalar("SELECT token_hash FROM access_tokens WHERE id = $1")
        .bind(&id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(!stored.contains(&token[10..]) && stored.len() == 64);

    // Used on the other replica; last-used time recorded.
    let (status, _, body) = call_as(&b.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(tool_names(&body), ["fx__echo"]);
    let mut used = false;
    for _ in 0..40 {
        let (_, listed) = admin(&a, reqwest::Method::GET, "/admin/v1/tokens", None).await;
        used = listed
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str() && t["last_used_at"].is_i64());
        if used {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(used, "last_used_at is written");

    // Revoked on a: refused by a at once and by b as soon as the registry's notification
    // arrives (b trusts a verified token from memory for 10 s otherwise: the deadline here is far
    // shorter, so only the notification can make b refuse in time).
    let (status, revoked) = admin(
        &a,
        reqwest::Method::DELETE,
        &format!("/admin/v1/tokens/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(revoked["revoked_at"].is_i64());
    let (status, h, _) = call_as(&a.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge(&h).contains("revoked"), "{}", challenge(&h));
    let mut refused_by_b = None;
    for _ in 0..20 {
        let (status, h, _) = call_as(&b.mcp, Some(&token), "tools/list", json!({})).await;
        if status == 401 {
            refused_by_b = Some(challenge(&h));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = refused_by_b.expect("b refuses the revoked token within a second");
    assert!(refused.contains("revoked"), "{refused}");
    // A token that is ours in form but unknown, and a forged secret of a real id.
    let (status, _, _) = call_as(
        &a.mcp,
        Some(&format!("mcpgw_{id}_forged")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
    // The non-admin token is refused by the admin API; revocation is audited (the audit
    // writer is asynchronous: the row may take a moment).
    let mut audit = Value::Null;
    for _ in 0..40 {
        audit = admin(
            &a,
            reqwest::Method::GET,
            "/admin/v1/audit?action=admin.token.revoke",
            None,
        )
        .await
        .1;
        if audit[0]["target"] == id.as_str() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(audit[0]["target"], id.as_str(), "{audit}");
    assert_eq!(audit[0]["principal"], "pat:root");
}

/// Issue 37, item 9: `mcp-gateway token revoke` writes the SQLite file from another process;
/// the running gateway refuses the token at once (it used to trust it for 10 s more).
#[tokio::test]
async fn a_token_revoked_from_the_command_line_is_refused_at_once_on_sqlite() {
    let gw = fixture_with_roles().await;
    let token = gw.token_for("ann", &["reader"]).await;
    let id = token.split('_').nth(1).unwrap().to_string();
    let (status, _, _) = call_as(&gw.mcp, Some(&token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "the token works and is remembered");
    let out = gateway_tests::cli(&gw.dir.join("gateway.toml"), &["token", "revoke", &id]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let revoked = std::time::Instant::now();
    let mut status = 200;
    while revoked.elapsed() < Duration::from_secs(10) {
        status = call_as(&gw.mcp, Some(&token), "tools/list", json!({}))
            .await
            .0;
        if status == 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 401);
    assert!(
        revoked.elapsed() < Duration::from_secs(2),
        "refused within a moment, not after the 10 s a verdict is remembered: {:?}",
        revoked.elapsed()
    );
}
