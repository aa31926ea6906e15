//! A host whose response stream drops mid-call resumes it with `Last-Event-ID` and misses nothing.

use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};
use tokio::process::Command;

#[tokio::test]
async fn dropped_call_stream_is_resumed_with_last_event_id() {
    let (_fixture, url) = gateway_tests::spawn_reporting_url(&mut Command::new(env!(
        "CARGO_BIN_EXE_conformance-fixture"
    )))
    .await;
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"c\"\ntransport = \"http\"\nurl = \"{url}\"\n",
        super::sqlite_url(&dir)
    ))
    .await;
    gw.wait_up(&["c"]).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;

    // test_tool_with_progress sends progress 0, 50, 100 (50 ms apart), then its result.
    let resp = c
        .post(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "c__test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "tok"}}}))
        .await;
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
    let mut last_id = None;
    let mut seen = Vec::new();
    // Read up to the first progress notification, then drop the connection.
    while let Some(Ok(ev)) = events.next().await {
        last_id = ev.id.clone().or(last_id);
        if let Some(msg) = ev
            .data
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str::<Value>(&d).unwrap())
        {
            seen.push(msg);
            break;
        }
    }
    drop(events);
    assert_eq!(seen[0]["params"]["progress"], 0);
    assert_eq!(
        seen[0]["params"]["progressToken"], "tok",
        "the host's own token comes back"
    );

    let resumed = c
        .http
        .get(&gw.mcp)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("last-event-id", last_id.expect("events carry ids"))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let mut events = sse_stream::SseStream::from_bytes_stream(resumed.bytes_stream());
    while let Some(Ok(ev)) = events.next().await {
        if let Some(msg) = ev
            .data
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str::<Value>(&d).unwrap())
        {
            let done = msg.get("id") == Some(&json!(7));
            seen.push(msg);
            if done {
                break;
            }
        }
    }
    let progress: Vec<_> = seen
        .iter()
        .filter_map(|m| m.pointer("/params/progress").cloned())
        .collect();
    assert_eq!(
        progress,
        [json!(0), json!(50), json!(100)],
        "nothing lost, nothing twice"
    );
    assert_eq!(
        seen.last().unwrap()["result"]["content"][0]["text"],
        "Tool with progress executed successfully"
    );
}

/// A call runs in the host's request while its answer can still be plain JSON: a host that goes
/// away before any answer must not cancel it (a disconnect is not a cancellation). The call
/// completes upstream and its audit row says so. (The reset makes hyper drop the request's
/// future: without the hand-over to a task of its own, no audit row is written.)
#[tokio::test]
async fn a_host_that_goes_away_before_the_answer_does_not_cancel_the_call() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;

    // The host sends the call and then drops its connection hard (a reset, as a crashed host
    // or a proxy would), so the gateway sees the request vanish mid-call.
    let addr = gw.mcp.trim_start_matches("http://");
    let (host, path) = addr.split_once('/').unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "fx__sleep", "arguments": {"ms": 700}}})
    .to_string();
    let request = format!(
        "POST /{path} HTTP/1.1\r\nhost: {host}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\nmcp-session-id: {}\r\nmcp-protocol-version: 2025-11-25\r\n\
         content-length: {}\r\n\r\n{body}",
        c.session.clone().unwrap(),
        body.len()
    );
    let mut tcp = tokio::net::TcpStream::connect(host).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut tcp, request.as_bytes())
        .await
        .unwrap();
    // The call has reached the upstream before the host goes.
    gw.wait_in_flight("fx", 1).await;
    tcp.set_zero_linger().unwrap();
    drop(tcp);

    let mut rows = Value::Null;
    for _ in 0..50 {
        rows = gw.get_json("/admin/v1/audit?target=fx__sleep").await;
        if rows.as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let rows = rows.as_array().expect("audit rows");
    assert_eq!(rows.len(), 1, "the call finished and was audited: {rows:?}");
    assert_eq!(rows[0]["outcome"], "ok");
    assert!(rows[0]["latency_ms"].as_i64().unwrap() >= 700);

    // The session goes on: the next call answers as usual.
    let resp = c
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "fx__sleep", "arguments": {"ms": 1}}}))
        .await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert!(body["result"].is_object(), "{body}");
}

/// A resume must name a stream the session issued: made-up ids are refused, not answered with
/// an endless stream that the session keeps an entry for.
#[tokio::test]
async fn a_resume_of_a_stream_never_issued_is_refused() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;
    for made_up in ["999_0", "123456_7"] {
        let resp = c
            .http
            .get(&gw.mcp)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", c.session.clone().unwrap())
            .header("last-event-id", made_up)
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{made_up}");
        let body: Value = resp.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Last-Event-ID"),
            "{body}"
        );
    }
}
