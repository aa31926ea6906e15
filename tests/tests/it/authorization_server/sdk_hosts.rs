//! Real hosts sign in through the gateway: the TypeScript SDK (registered, and named by its
//! client metadata document), the Python SDK's OAuth client provider and mcp-remote.

use super::*;

/// Both replicas seal the signing keys under `user_credentials.key`: whoever reads the database
/// cannot sign tokens, and the replica that did not make the key still opens it.
#[tokio::test]
async fn a_real_sdk_host_registers_signs_in_calls_refreshes_and_is_revoked_on_every_replica() {
    use base64::Engine;
    let db = postgres_database().await;
    let port = free_port();
    let cfg = config(&db, port, "refresh_token_reuse_secs = 1");
    let seal = base64::engine::general_purpose::STANDARD.encode([5u8; 32]);
    let seal = ("MCP_GATEWAY_USER_CREDENTIALS_KEY", seal.as_str());
    let gw = start_at(&cfg, port, &[seal]).await;
    let mut replica = Gateway::start_with_env(&cfg, &[seal]).await;
    replica.admin_token = gw.admin_token.clone();
    replica.wait_up(&["fx"]).await;

    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let secrets: Vec<String> = sqlx::query_scalar("SELECT secret FROM oauth_keys")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        !secrets.is_empty() && secrets.iter().all(|s| s.contains('.') && s.len() > 60),
        "the seeds are sealed, not base64 seeds: {secrets:?}"
    );

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
    let steps = sdk_host(&gw, &pat, Some(&replica), &[("REPLAY_WAIT_MS", "1500")]).await;
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
        assert!(
            !gateway_tests::has_jwt(&log),
            "a JWT leaked into a log line"
        );
    }
}

#[tokio::test]
async fn a_real_sdk_host_named_by_its_client_metadata_document_signs_in() {
    // The host's document, served over https by a private authority the gateway trusts.
    let documents = DocumentHost::start("http://127.0.0.1:33418/callback").await;
    let document = documents.url.clone();
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, DOCUMENTS_ONLY);
    let gw = start_at(&cfg, port, &[("SSL_CERT_FILE", &documents.ca())]).await;
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
    let gw = start_at(&cfg, port, &[]).await;
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
    assert_eq!(
        seen["revision"], "2026-07-28",
        "signed in, the SDK's default client speaks the newest revision: {seen}"
    );
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

/// A host whose OAuth client is neither MCP SDK's: the Vercel AI SDK's MCP client registers,
/// sends the user to the pages, redeems the code at its callback, settles on the 2026-07-28
/// revision (it asks `server/discover` first), lists and calls with the reader's roles, and
/// refreshes its token without the user.
#[tokio::test]
async fn the_ai_sdk_mcp_client_signs_in_calls_and_refreshes() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let gw = start_at(&cfg, port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let mut cmd = node("clients/ai_sdk_host.mjs");
    cmd.env("MCP_URL", &gw.mcp).env("PAT", &pat);
    let seen = last_json_line(cmd, "the AI SDK host").await;
    signed_in_called_and_refreshed(&gw, &seen, "2026-07-28");
    assert_eq!(
        steps_of(&seen)["redirect"]["iss"],
        format!("http://127.0.0.1:{port}")
    );
    assert!(!gateway_tests::has_jwt(&gw.log()), "a JWT in the log");
}

/// The TypeScript SDK's second generation (`@modelcontextprotocol/client` 2.4): registers, its
/// host redeems the code with `finishAuth` (the SDK checks `iss`), lists and calls with the
/// reader's roles, and refreshes by itself on a 401; with the SDK's default (the 2025
/// handshake) and with `versionNegotiation: auto`, where it settles on 2026-07-28.
#[tokio::test]
async fn the_typescript_sdk_v2_client_signs_in_calls_and_refreshes() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let gw = start_at(&cfg, port, &[]).await;
    for (negotiation, revision) in [(None, "2025-11-25"), (Some("auto"), "2026-07-28")] {
        let pat = gw.token_for("ann", &["reader"]).await;
        let mut cmd = node("clients/ts_v2_host.mjs");
        cmd.env("MCP_URL", &gw.mcp).env("PAT", &pat);
        if let Some(mode) = negotiation {
            cmd.env("NEGOTIATION", mode);
        }
        let seen = last_json_line(cmd, "the TypeScript SDK v2 host").await;
        signed_in_called_and_refreshed(&gw, &seen, revision);
    }
}

#[tokio::test]
async fn mcp_remote_signs_in_through_the_gateway_and_bridges_calls() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let gw = start_at(&cfg, port, &[]).await;
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

/// A machine host (an agent acting as itself) gets a token for its own roles with its client id
/// and secret: the Python SDK's `ClientCredentialsOAuthProvider` and the TypeScript SDK's
/// `ClientCredentialsProvider` against a client of the config that names its roles. Other
/// clients may not use that grant.
#[tokio::test]
async fn the_python_sdk_client_credentials_provider_acts_with_its_own_roles() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "[[auth.server.clients]]\nclient_id = \"nightly-agent\"\nredirect_uris = []\n\
         client_secret = { env = \"AGENT_SECRET\" }\nroles = [\"reader\"]\n\
         [[auth.server.clients]]\nclient_id = \"signing-agent\"\nredirect_uris = []\n\
         public_key = { file = \"PUBLIC_KEY\" }\nroles = [\"reader\"]\n\
         [[auth.server.clients]]\nclient_id = \"web-app\"\n\
         redirect_uris = [\"https://app.example.com/cb\"]\n\
         client_secret = { env = \"WEB_SECRET\" }\n",
    );
    let keys = gateway_tests::package_dir().join("idp");
    let cfg = cfg.replace(
        "PUBLIC_KEY",
        keys.join("client-key.pub.pem").to_str().unwrap(),
    );
    let gw = start_at(
        &cfg,
        port,
        &[
            ("AGENT_SECRET", "agent-secret"),
            ("WEB_SECRET", "web-secret"),
        ],
    )
    .await;
    let meta = gw.get_json("/.well-known/oauth-authorization-server").await;
    assert!(
        meta["grant_types_supported"]
            .to_string()
            .contains("client_credentials"),
        "{meta}"
    );
    let mut cmd = Command::new(peers().join("venv/bin/python"));
    cmd.arg(gateway_tests::package_dir().join("clients/python_client_credentials.py"))
        .arg(&gw.mcp)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("nightly-agent")
        .arg("agent-secret");
    let seen = last_json_line(cmd, "the Python machine host").await;
    saw_the_readers_tools(&gw, &seen, "from a machine (nightly-agent)");
    assert_eq!(seen["revision"], "2026-07-28", "{seen}");
    assert_eq!(seen["refresh"], false, "no refresh token: {seen}");
    // The TypeScript SDK's ClientCredentialsProvider, the same way.
    let mut ts = node("clients/ts_client_credentials.mjs");
    ts.arg(&gw.mcp)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("nightly-agent")
        .arg("agent-secret");
    let seen = last_json_line(ts, "the TypeScript machine host").await;
    saw_the_readers_tools(&gw, &seen, "from a TypeScript machine (nightly-agent)");
    // Without a shared secret: the TypeScript SDK's PrivateKeyJwtProvider signs its assertions
    // with a key whose public half the config names (private_key_jwt).
    let mut ts = node("clients/ts_client_credentials.mjs");
    ts.arg(&gw.mcp)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("signing-agent")
        .arg(format!("key:{}", keys.join("client-key.pem").display()));
    let seen = last_json_line(ts, "the TypeScript signing host").await;
    saw_the_readers_tools(&gw, &seen, "from a TypeScript machine (signing-agent)");
    // And the Python SDK's PrivateKeyJWTOAuthProvider, its assertions for the issuer.
    let mut py = Command::new(peers().join("venv/bin/python"));
    py.arg(gateway_tests::package_dir().join("clients/python_client_credentials.py"))
        .arg(&gw.mcp)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("signing-agent")
        .arg(format!("key:{}", keys.join("client-key.pem").display()));
    let seen = last_json_line(py, "the Python signing host").await;
    saw_the_readers_tools(&gw, &seen, "from a machine (signing-agent)");
    assert_eq!(seen["revision"], "2026-07-28", "{seen}");
    // A key client's id with a made-up secret is refused.
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .basic_auth("signing-agent", Some("guess"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // A client that names no roles, a wrong secret, and a registered public client: refused.
    let ask = |id: &'static str, secret: &'static str| {
        reqwest::Client::new()
            .post(format!("{}/oauth/token", gw.base))
            .basic_auth(id, Some(secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
    };
    let r = ask("web-app", "web-secret").await.unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"], "unauthorized_client", "{e}");
    assert_eq!(ask("nightly-agent", "wrong").await.unwrap().status(), 401);
    let public = register(&gw, "http://127.0.0.1:9/cb", "Public host").await;
    let r = reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", public.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    let grants = gw.get_json("/admin/v1/oauth/grants").await;
    assert!(
        grants.as_array().unwrap().iter().any(|g| {
            g["subject"] == "client:nightly-agent" && g["signed_in_with"] == "client_credentials"
        }),
        "{grants}"
    );
}

/// A host whose requests all meet the expired token together refreshes once per request with
/// the same refresh token (the TypeScript SDK does not serialise its refreshes): that is no
/// replay, and its user is not signed out for it.
#[tokio::test]
async fn a_real_sdk_host_that_refreshes_several_times_at_once_stays_signed_in() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let gw = start_at(&config(&super::sqlite_url(&dir), port, ""), port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let steps = sdk_host(&gw, &pat, None, &[("CONCURRENT_CALLS", "3")]).await;
    assert_eq!(steps["call"]["text"], "hello", "{steps:#}");
    let concurrent = &steps["concurrent"];
    assert_eq!(
        concurrent["texts"],
        json!(["c0", "c1", "c2"]),
        "{steps:#}\n{}",
        gw.log()
    );
    assert_eq!(concurrent["signedInAgain"], false, "{steps:#}");
    assert_eq!(steps["after"]["text"], "after", "{steps:#}");
    assert_eq!(steps["after"]["signedInAgain"], false, "{steps:#}");
}
