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
