//! Issue 38: `POST /mcp` is served in front of the router (`hot_path`), every other MCP request
//! by the router. The same request must get the same answer either way: a guard added to one
//! and not the other would show here. A virtual server of every upstream (`/mcp/v/all`, the
//! router's) stands beside `/mcp` (the hot path).

use gateway_tests::Gateway;
use reqwest::Method;
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

/// A request: what it is, its headers and its body.
type Case = (&'static str, Vec<(&'static str, &'static str)>, String);

/// Status, the headers that carry meaning, and the body (JSON when it is JSON).
async fn answer(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, Value) {
    let mut req = reqwest::Client::new().post(url).body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let kept = [
        "content-type",
        "www-authenticate",
        "allow",
        "access-control-allow-origin",
    ];
    let mut hs: Vec<(String, String)> = r
        .headers()
        .iter()
        .filter(|(k, _)| kept.contains(&k.as_str()))
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    hs.sort();
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, hs, body)
}

#[tokio::test]
async fn the_hot_path_and_the_router_answer_alike() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&fixture_config(&sqlite_url(&dir), "")).await;
    gw.wait_up(&["fx"]).await;
    let all = json!({"name": "all", "upstreams": ["*"]});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/virtual-servers", None, &all)
        .await;
    assert_eq!(status, 201, "{body}");
    let json_accept = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let with = |extra: (&'static str, &'static str)| {
        let mut h = json_accept.to_vec();
        h.push(extra);
        h
    };
    let cases: Vec<Case> = vec![
        ("initialize", json_accept.to_vec(), init.into()),
        ("malformed JSON", json_accept.to_vec(), "{not json".into()),
        (
            "not JSON-RPC",
            json_accept.to_vec(),
            r#"{"hello":1}"#.into(),
        ),
        (
            "no accept",
            vec![("content-type", "application/json")],
            init.into(),
        ),
        (
            "text body",
            vec![("content-type", "text/plain")],
            init.into(),
        ),
        (
            "unknown session",
            with(("mcp-session-id", "nope")),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.into(),
        ),
        (
            "foreign origin",
            with(("origin", "https://evil.example")),
            init.into(),
        ),
        ("foreign host", with(("host", "evil.example")), init.into()),
        ("loopback host", with(("host", "127.0.0.1")), init.into()),
        ("a batch", json_accept.to_vec(), format!("[{init}]")),
        (
            "2026 without envelope",
            with(("mcp-protocol-version", "2026-07-28")),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#.into(),
        ),
    ];
    let hot = gw.mcp.clone();
    let routed = format!("{}/v/all", gw.mcp);
    let mut seen = std::collections::BTreeSet::new();
    for (what, headers, body) in &cases {
        let a = answer(&hot, headers, body).await;
        seen.insert(a.0);
        let b = answer(&routed, headers, body).await;
        // Only what names the endpoint may differ.
        let b_body = serde_json::from_str::<Value>(&b.2.to_string().replace("/mcp/v/all", "/mcp"))
            .unwrap_or(b.2.clone());
        assert_eq!(
            (a.0, &a.1, &a.2),
            (b.0, &b.1, &b_body),
            "{what}: /mcp (hot path) and /mcp/v/all (router) answered differently"
        );
    }
    // The cases reach the guards, not only the handler.
    for status in [200, 400, 403, 404] {
        assert!(
            seen.contains(&status),
            "no case answered {status}: {seen:?}"
        );
    }
}
