//! Issue 37, item 4: one principal cannot open sessions without limit, and an idle session keeps
//! one pending `list_changed` of each kind, not hundreds.

use std::time::{Duration, Instant};

use futures::stream::BoxStream;
use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use reqwest::Method;
use serde_json::{json, Value};

use super::{fixture_bin, sqlite_url, ADMIN_ROLE};

async fn initialize(gw: &Gateway, token: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(&gw.mcp)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "0"}}}),
        )
        .send()
        .await
        .unwrap()
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1.0)
}

#[tokio::test]
async fn one_principal_holds_at_most_its_share_of_sessions() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[server]\nmax_sessions_per_principal = 20\n\n[auth]\nmode = \"required\"\n\n\
         [database]\nurl = \"{}\"\n\n{ADMIN_ROLE}[[roles]]\nname = \"user\"\nupstreams = [\"*\"]\n",
        sqlite_url(&dir)
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    let ann = gw.token_for("ann", &["user"]).await;
    let bob = gw.token_for("bob", &["user"]).await;
    let mut ids = Vec::new();
    for _ in 0..20 {
        let r = initialize(&gw, &ann).await;
        assert_eq!(r.status(), 200);
        ids.push(r.headers()["mcp-session-id"].to_str().unwrap().to_string());
    }
    // The flood: every further session of this principal is refused, saying why.
    for i in 0..500 {
        let r = initialize(&gw, &ann).await;
        assert_eq!(r.status(), 429, "attempt {i}");
        if i == 0 {
            let body: Value = r.json().await.unwrap();
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("max_sessions_per_principal"),
                "the refusal names the setting: {body}"
            );
        }
    }
    assert_eq!(
        metric(&gw.metrics().await, "mcp_gateway_sessions_active"),
        20.0
    );
    // Another principal is not affected; a session ended makes room.
    assert_eq!(initialize(&gw, &bob).await.status(), 200);
    let r = reqwest::Client::new()
        .delete(&gw.mcp)
        .bearer_auth(&ann)
        .header("mcp-session-id", &ids[0])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(initialize(&gw, &ann).await.status(), 200);
    assert_eq!(initialize(&gw, &ann).await.status(), 429);
}

#[tokio::test]
async fn an_idle_session_keeps_one_pending_list_change_not_one_per_change() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!("[database]\nurl = \"{}\"\n", sqlite_url(&dir))).await;
    let up = json!({"name": "fx", "transport": "stdio", "command": fixture_bin()});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/upstreams", None, &up)
        .await;
    assert_eq!(status, 201, "{body}");
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    // Seen once on the GET stream: the event id to resume after.
    let mut stream = get_stream(&c, None).await;
    let curate = |include: &str| json!({ "include": [include] });
    let (status, body) = gw
        .send(
            Method::PUT,
            "/admin/v1/upstreams/fx/tools",
            None,
            &curate("*"),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let resume_after = loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect("a list change within 20 s")
            .expect("the stream stays open");
        if ev
            .data
            .as_deref()
            .is_some_and(|d| d.contains("list_changed"))
        {
            break ev.id.expect("events carry ids");
        }
    };
    drop(stream);

    // Changes while the host is away.
    for (i, include) in ["echo", "pid", "echo", "pid", "*"].iter().enumerate() {
        let (status, body) = gw
            .send(
                Method::PUT,
                "/admin/v1/upstreams/fx/tools",
                None,
                &curate(include),
            )
            .await;
        assert_eq!(status, 200, "change {i}: {body}");
        let want = if *include == "*" { 2 } else { 1 };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let tools = c.request("tools/list", json!({})).await;
            let n = tools["result"]["tools"].as_array().map_or(0, |t| {
                t.iter()
                    .filter(|t| t["name"].as_str().unwrap_or("").starts_with("fx__"))
                    .count()
            });
            if (*include == "*" && n >= want) || (*include != "*" && n == want) {
                break;
            }
            assert!(Instant::now() < deadline, "change {i} applied: {tools}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let missed = replay(&c, &resume_after).await;
    let changes = missed
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .count();
    assert_eq!(changes, 1, "one pending tools/list_changed: {missed:?}");
}

/// The session's GET stream, resumed after event `after` when given.
async fn get_stream(c: &RawClient, after: Option<&str>) -> BoxStream<'static, sse_stream::Sse> {
    let mut req = c
        .http
        .get(&c.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(after) = after {
        req = req.header("last-event-id", after);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    sse_stream::SseStream::from_bytes_stream(resp.bytes_stream())
        .filter_map(|e| async move { e.ok() })
        .boxed()
}

/// What a resume after `after` replays, read until the stream is quiet for a moment.
async fn replay(c: &RawClient, after: &str) -> Vec<Value> {
    let mut events = get_stream(c, Some(after)).await;
    let mut out = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_millis(500), events.next()).await {
        if let Some(d) = ev.data.filter(|d| !d.is_empty()) {
            out.push(serde_json::from_str(&d).unwrap());
        }
    }
    out
}
