//! Roles that see and call different tools, denials audited; rate limits per principal.

use super::*;

#[tokio::test]
async fn roles_see_and_call_different_tools_and_denials_are_audited() {
    let gw = fixture_with_roles().await;
    let mut tokens = Vec::new();
    // Rita also holds `reader-extra`, a role of the API's that grants nothing yet.
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader-extra",
        Some(json!({"name": "reader-extra"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    for (owner, role, roles) in [
        ("rita", "reader", json!(["reader", "reader-extra"])),
        ("otto", "ops", json!(["ops"])),
    ] {
        let (status, t) = admin(
            &gw,
            reqwest::Method::POST,
            "/admin/v1/tokens",
            Some(json!({"name": role, "owner": owner, "roles": roles})),
        )
        .await;
        assert_eq!(status, 201);
        tokens.push(t["token"].as_str().unwrap().to_string());
    }
    let mut reader = RawClient::initialize_as(&gw.mcp, json!({}), Some(&tokens[0])).await;
    let mut ops = RawClient::initialize_as(&gw.mcp, json!({}), Some(&tokens[1])).await;
    let names = |r: &Value| -> Vec<String> { tool_names(r) };
    let seen_by_reader = names(&reader.request("tools/list", json!({})).await);
    let seen_by_ops = names(&ops.request("tools/list", json!({})).await);
    assert_eq!(seen_by_reader, ["fx__echo"]);
    assert!(seen_by_ops.len() > 3 && seen_by_ops.contains(&"fx__pid".to_string()));

    // Denied looks exactly like unknown.
    let denied = reader
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await;
    let unknown = reader
        .request(
            "tools/call",
            json!({"name": "fx__nothing", "arguments": {}}),
        )
        .await;
    assert_eq!(denied["error"]["code"], unknown["error"]["code"]);
    assert_eq!(denied["error"]["message"], "unknown tool: fx__pid");
    let ok = reader
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "hi", "api_key": "k"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    let ok = ops
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await;
    assert!(ok["result"].is_object(), "{ok}");

    // Another principal cannot use the reader's session.
    let mut thief = RawClient::new(&gw.mcp);
    thief.session = reader.session.clone();
    thief.token = Some(tokens[1].clone());
    let resp = thief
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    assert_eq!(resp.status(), 404);

    // The audit log has the denial, the calls, arguments with the secret redacted.
    let mut rows = Value::Null;
    for _ in 0..50 {
        rows = gw.get_json("/admin/v1/audit?principal=pat:rita").await;
        if rows.as_array().is_some_and(|r| r.len() >= 3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rows = rows.as_array().unwrap();
    let denial = rows
        .iter()
        .find(|r| r["target"] == "fx__pid")
        .expect("denial audited");
    assert_eq!(denial["outcome"], "denied");
    assert_eq!(denial["action"], "tools/call");
    let echo = rows.iter().find(|r| r["target"] == "fx__echo").unwrap();
    assert_eq!(echo["outcome"], "ok");
    assert_eq!(echo["upstream"], "fx");
    assert!(echo["arguments"].as_str().unwrap().contains("[REDACTED]"));
    assert!(!echo["arguments"].as_str().unwrap().contains("\"k\""));
    assert!(echo["token_id"].is_string() && echo["session"].is_string());

    // A role the config file defines is changed there; the API says where (issue 37).
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader",
        Some(json!({"name": "reader", "tools": ["fx__echo", "fx__pid"]})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    // A role the API defines changes at once: the reader, granted it too, sees the ops tools.
    let (status, body) = admin(
        &gw,
        reqwest::Method::PUT,
        "/admin/v1/roles/reader-extra",
        Some(json!({"name": "reader-extra", "tools": ["fx__pid"]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let now = names(&reader.request("tools/list", json!({})).await);
    assert_eq!(now, ["fx__echo", "fx__pid"]);
    // A non-admin token is refused by the admin API.
    let resp = reqwest::Client::new()
        .get(format!("{}/admin/v1/tokens", gw.base))
        .bearer_auth(&tokens[1])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn rate_limits_answer_429_with_retry_after_per_principal() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "{}{ROLES}\n[auth]\nmode = \"required\"\nrate_limit = {{ per_second = 1, burst = 3 }}\n",
        fixture_config(&sqlite_url(&dir), "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    let admin_token = gw.admin_token.clone().unwrap();
    let (_, t) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/tokens",
        Some(json!({"name": "busy", "owner": "bea", "roles": ["reader"]})),
    )
    .await;
    let busy = t["token"].as_str().unwrap().to_string();
    let mut statuses = Vec::new();
    let mut retry = None;
    for _ in 0..5 {
        let (status, h, _) = call_as(&gw.mcp, Some(&busy), "tools/list", json!({})).await;
        statuses.push(status);
        if status == 429 {
            retry = h
                .get("retry-after")
                .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
        }
    }
    assert_eq!(&statuses[..3], [200, 200, 200], "the burst passes");
    assert!(statuses[3..].contains(&429), "{statuses:?}");
    assert!(retry.is_some_and(|s| s >= 1), "Retry-After in seconds");
    let (status, _, _) = call_as(&gw.mcp, Some(&admin_token), "tools/list", json!({})).await;
    assert_eq!(status, 200, "another principal has its own budget");
}
