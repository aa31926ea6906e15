//! The sign-in and consent pages in Chromium, and the console's sign-ins: a grant revoked,
//! a client blocked.

use super::*;

#[tokio::test]
async fn the_sign_in_and_consent_pages_work_in_chromium_without_javascript() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let gw = start_at(&cfg, port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    // A native app: its redirect is on loopback, on whatever port it gets.
    let client = register(&gw, "http://127.0.0.1/cb", "Native <b>App</b>").await;
    let seen = in_chromium(&gw, &dir, &client, port, &[("PAT", &pat)]).await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert_eq!(seen["signInTitle"], "Sign in to MCP Gateway");
    // The client's name is shown as text, never as markup.
    assert!(
        seen["signInText"]
            .as_str()
            .unwrap()
            .contains("Native <b>App</b>"),
        "{seen}"
    );
    assert!(seen["wrongTokenText"]
        .as_str()
        .unwrap()
        .contains("not valid"));
    let consent = seen["consentText"].as_str().unwrap();
    assert!(consent.contains("ann") && consent.contains("mcp") && consent.contains("127.0.0.1"));
    assert_eq!(seen["state"], "browser-state", "{seen:#}");
    assert_eq!(seen["iss"], format!("http://127.0.0.1:{port}"));
    assert_eq!(
        seen["errors"],
        json!([]),
        "no CSP violation or page error: {seen}"
    );
    assert!(seen["csp"][0]
        .as_str()
        .unwrap()
        .contains("default-src 'none'"));
    if let Some(w) = seen["scrollWidth"].as_u64() {
        assert!(w <= 400, "the pages fit 400 px: {w}");
    }

    // The code the browser brought back is good for tokens.
    let tokens = redeem(&gw, &client, &seen).await;
    assert_eq!(tokens["token_type"], "Bearer", "{tokens}");
    assert_eq!(tokens["scope"], "mcp");
}

#[tokio::test]
async fn the_console_lists_sign_ins_and_revokes_a_grant_and_blocks_a_client() {
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, "");
    let gw = start_at(&cfg, port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let id = register(&gw, "http://127.0.0.1:9/cb", "Laptop host").await;
    let id = id.as_str();
    let (verifier, challenge) = pkce();
    let query = auth_query(id, &challenge, port);
    let q = as_pairs(&query);
    let back = Walk::new(&gw).through(&q, &pat).await;
    let seen = json!({"code": param(&location(&back), "code"), "verifier": verifier,
                      "redirect": "http://127.0.0.1:9/cb"});
    let tokens = redeem(&gw, id, &seen).await;
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(fx_tools(&gw, &access).await, ["fx__echo"]);
    let grants = gw.get_json("/admin/v1/oauth/grants").await;
    let grant = grants[0]["id"].as_str().unwrap().to_string();

    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/console_sign_ins.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("CONSOLE_TOKEN", gw.admin_token.as_deref().unwrap())
        .env("GRANT_ID", &grant)
        .env("CLIENT_ID", id)
        .env("ARTIFACTS", &artifacts)
        .env("HOME", &dir);
    let seen = last_json_line(cmd, "the browser").await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert!(seen["grantRow"].as_str().unwrap().contains("ann"), "{seen}");
    assert!(
        seen["grantRow"].as_str().unwrap().contains("Laptop host"),
        "{seen}"
    );
    assert!(
        seen["clientRow"].as_str().unwrap().contains("dcr"),
        "{seen}"
    );
    assert_eq!(
        seen["dialogs"].as_array().unwrap().len(),
        2,
        "each asked first: {seen}"
    );
    assert_eq!(seen["errors"], json!([]));

    // Revoked in the console: the host's token is refused; blocked: no new sign-in either.
    let r = reqwest::Client::new()
        .post(&gw.mcp)
        .bearer_auth(&access)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let page = Walk::new(&gw).authorize(&q).await;
    assert_eq!(page.status(), 403);
    assert!(page.text().await.unwrap().contains("blocked"));
}
