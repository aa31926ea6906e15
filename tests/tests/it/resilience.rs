//! Upstreams that restart, start slowly, go away or answer too much (issue 12): a restarted HTTP
//! upstream is used again at once, tools added just after start are listed, a call to a
//! restarting upstream is told to retry, and one huge answer costs one call, not the gateway.

use std::time::Duration;

use gateway_tests::{everything, free_port, peers, wait_port, Gateway, RawClient};
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn health_of(health: &Value, name: &str) -> Value {
    health
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

/// server-everything over Streamable HTTP on a port of its own, and a gateway in front of it as
/// upstream `ev` (`extra`: more of that upstream's settings), once `ev` is up.
async fn everything_behind_a_gateway(extra: &str) -> (u16, tokio::process::Child, Gateway) {
    let port = free_port();
    let server = everything("streamableHttp", port);
    wait_port(port).await;
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"ev\"\ntransport = \"http\"\n\
         url = \"http://127.0.0.1:{port}/mcp\"\n{extra}",
        super::SQLITE_IN_ITS_FOLDER
    ))
    .await;
    gw.wait_up(&["ev"]).await;
    (port, server, gw)
}

#[tokio::test]
async fn a_restarted_http_upstream_is_used_again_and_late_tools_are_listed() {
    let (port, mut server, gw) = everything_behind_a_gateway("timeout_secs = 3\n").await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;

    // server-everything adds tools right after `initialized` and announces them on a stream the
    // gateway opens a moment later: they must still be listed.
    let mut names = Vec::new();
    for _ in 0..40 {
        names = tool_names(&c.request("tools/list", json!({})).await);
        if names.iter().any(|n| n == "ev__trigger-sampling-request") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        names.iter().any(|n| n == "ev__trigger-sampling-request"),
        "tools added after start are missing: {names:?}\n{}",
        gw.log()
    );

    let echo = json!({"name": "ev__echo", "arguments": {"message": "hi"}});
    assert_eq!(
        c.request("tools/call", echo.clone()).await["result"]["content"][0]["text"],
        "Echo: hi"
    );

    // Down: a call is told the upstream is unreachable and to retry, never "unknown tool".
    server.kill().await.unwrap();
    let _ = server.wait().await;
    let r = c.request("tools/call", echo.clone()).await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert_eq!(r["error"]["data"]["upstream"], "ev", "{r}");
    let r = c.request("tools/call", echo.clone()).await;
    assert_eq!(
        r["error"]["code"], -32000,
        "a second call while it is down: {r}"
    );
    assert_eq!(r["error"]["data"]["upstream"], "ev", "{r}");

    // Back on the same port with no memory of our session: it is used again at once, from the
    // old host session and from new ones.
    let _server = everything("streamableHttp", port);
    wait_port(port).await;
    let mut answered = None;
    for _ in 0..40 {
        let r = c.request("tools/call", echo.clone()).await;
        if r.get("result").is_some() {
            answered = Some(r);
            break;
        }
        assert_eq!(r["error"]["code"], -32000, "{r}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let r = answered.unwrap_or_else(|| panic!("never used again; log:\n{}", gw.log()));
    assert_eq!(r["result"]["content"][0]["text"], "Echo: hi");
    let mut fresh = RawClient::initialize(&gw.mcp, json!({})).await;
    assert_eq!(
        fresh.request("tools/call", echo.clone()).await["result"]["content"][0]["text"],
        "Echo: hi"
    );
    let h = health_of(&gw.get_json("/admin/v1/health").await, "ev");
    assert_eq!(h["status"], "up", "{h}");
    assert!(h["restarts"].as_u64().unwrap() >= 1, "{h}");
    assert!(
        h["last_restart_reason"].as_str().is_some(),
        "health says why it restarted: {h}"
    );
}

#[tokio::test]
async fn a_lost_session_is_re_initialised_and_the_call_replayed_once() {
    let (port, mut server, gw) = everything_behind_a_gateway("").await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let echo = json!({"name": "ev__echo", "arguments": {"message": "again"}});
    assert!(c
        .request("tools/call", echo.clone())
        .await
        .get("result")
        .is_some());
    // Restarted between two calls, before any ping: the server answers our old session with
    // HTTP 400, and the very next call succeeds.
    server.kill().await.unwrap();
    let _ = server.wait().await;
    let _server = everything("streamableHttp", port);
    wait_port(port).await;
    let r = c.request("tools/call", echo).await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Echo: again",
        "{r}\n{}",
        gw.log()
    );
    assert!(gw.log().contains("call replayed"), "{}", gw.log());
    let h = health_of(&gw.get_json("/admin/v1/health").await, "ev");
    assert!(
        h["last_restart_reason"]
            .as_str()
            .is_some_and(|r| r.contains("session")),
        "{h}"
    );
}

#[tokio::test]
async fn one_huge_answer_costs_one_call_not_the_connection() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&fixture_config(
        &sqlite_url(&dir),
        "\n[server]\nmax_upstream_message_bytes = 100000\n",
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let pid = |r: Value| r["result"]["content"][0]["text"].clone();
    let before = pid(c
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await);
    let big = "x".repeat(200_000);
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": big}}),
        )
        .await;
    let message = r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(message.contains("max_upstream_message_bytes"), "{message}");
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "small"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "small", "{r}");
    let after = pid(c
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await);
    assert_eq!(before, after, "the stdio upstream was not restarted");
}

#[tokio::test]
async fn tool_errors_meta_tool_arguments_and_2026_reads() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"everything\"\ntransport = \"stdio\"\n\
         command = \"{}\"\nmax_result_text_bytes = 40\n",
        sqlite_url(&dir),
        peers()
            .join("node_modules/.bin/mcp-server-everything")
            .display()
    ))
    .await;
    gw.wait_up(&["everything"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;

    // A long tool text is cut to the upstream's max_result_text_bytes, and says so.
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__echo", "arguments": {"message": "y".repeat(5000)}}),
        )
        .await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(text.len() < 200, "{text}");
    assert!(text.contains("[trimmed by the gateway: 40 of"), "{text}");
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__echo", "arguments": {"message": "short"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "Echo: short", "{r}");

    // A meta-tool given arguments it cannot use answers a tool error the model can read.
    let r = c
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].is_string(), "{r}");
    let r = c
        .request(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"arguments": 3}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");

    // A tool that fails (isError) is counted as a tool error, not as ok.
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__get-sum", "arguments": {"a": "not a number"}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let metrics = gw.metrics().await;
    assert!(
        metrics.lines().any(|l| l.starts_with("mcp_gateway_")
            && l.contains("outcome=\"tool_error\"")
            && l.contains("tools/call")),
        "{metrics}"
    );

    // A 2026-07-28 host reading from a 2025-only upstream gets the caching fields it requires.
    let uri = "demo://resource/dynamic/text/1";
    let resp =
        gateway_tests::request_2026(&gw.mcp, "resources/read", uri, json!({"uri": uri})).await;
    let result = &resp["result"];
    assert!(result["contents"].is_array(), "{resp}");
    assert!(result["ttlMs"].is_u64(), "{resp}");
    assert!(result["cacheScope"].is_string(), "{resp}");
    assert_eq!(result["resultType"], "complete", "{resp}");
}

/// server-everything answers every call with an SSE stream that it ends right after the
/// answer. The gateway stopped reading at the answer and so closed the connection: one new TCP
/// connection per call (on a 2-core VM the upstream's p50 through the gateway was 1.34× direct).
/// The rest of the stream is now read in passing and the connection reused.
#[tokio::test]
async fn calls_answered_by_sse_reuse_the_upstream_connection() {
    let (port, _server, gw) = everything_behind_a_gateway("").await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let calls = 30;
    for i in 0..calls {
        let r = c
            .request(
                "tools/call",
                json!({"name": "ev__echo", "arguments": {"message": format!("m{i}")}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("Echo: m{i}"),
            "{r}"
        );
    }
    let used = gateway_tests::connections_to(port);
    assert!(
        used < 10,
        "{used} connections to the upstream for {calls} calls (the catalog's, the listening \
         stream's and the session's should do)"
    );
}
