//! Messages between upstream and host outside plain request/response: an upstream's
//! `tools/list_changed` reaches open sessions with the new catalog, and a host's cancellation
//! reaches the upstream under the upstream's own request id.

use std::time::Duration;

use futures::StreamExt;
use gateway_tests::RawClient;
use serde_json::{json, Value};

#[tokio::test]
async fn upstream_list_changed_reaches_open_sessions() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let mut stream = Box::pin(c.listen().await);
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__add_tool", "arguments": {"name": "fresh"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "added");
    let note = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("list_changed within 10 s");
    assert_eq!(note.unwrap()["method"], "notifications/tools/list_changed");
    let tools = c.request("tools/list", json!({})).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "fx__fresh"),
        "{tools}"
    );
}

/// The request ids the fixture upstream was told to cancel so far.
async fn cancellations(probe: &mut RawClient) -> Value {
    let r = probe
        .request(
            "tools/call",
            json!({"name": "fx__cancellations", "arguments": {}}),
        )
        .await;
    serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn host_cancellation_reaches_the_upstream() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;
    let url = gw.mcp.clone();
    let session = c.session.clone();
    let hanging = tokio::spawn(async move {
        let mut h = RawClient::new(&url);
        h.session = session;
        h.post(&json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call", "params": {"name": "fx__hang", "arguments": {}}}))
            .await
            .text()
            .await
            .unwrap()
    });
    // The call is in flight once the upstream has it; cancel until the upstream has seen it.
    let mut seen = Value::Null;
    let mut probe = RawClient::initialize(&gw.mcp, json!({})).await;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = c
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "call-1", "reason": "user"}}))
            .await;
        assert_eq!(r.status(), 202);
        seen = cancellations(&mut probe).await;
        if !seen.as_array().unwrap().is_empty() {
            break;
        }
    }
    let ids = seen.as_array().unwrap();
    assert_eq!(
        ids.len(),
        1,
        "one cancellation reached the upstream: {seen}"
    );
    assert!(
        ids[0].is_i64(),
        "under the gateway's upstream-side id, not the host's \"call-1\": {seen}"
    );
    // The host's request is answered (with an error) rather than left hanging.
    let answer = tokio::time::timeout(Duration::from_secs(5), hanging)
        .await
        .expect("cancelled call answered")
        .unwrap();
    assert!(answer.contains("call-1"), "{answer}");
}

/// Issue 37, item 6: on a busy shared stdio upstream (no way to tell which call asks), a
/// question is still delivered when every call in flight belongs to one session; when calls of
/// several sessions are in flight, the upstream is told why the gateway cannot deliver it.
#[tokio::test]
async fn a_shared_upstream_asks_the_one_session_whose_calls_are_in_flight() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({"elicitation": {}})).await;
    let mut get = Box::pin(c.listen().await);
    let post = |c: &RawClient, id: &str, tool: &str, args: Value| {
        let req = c.post_builder(
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}))
            .unwrap(),
        );
        tokio::spawn(async move {
            gateway_tests::response_json(&req.send().await.unwrap().text().await.unwrap())
        })
    };
    let sleeping = post(&c, "slow", "fx__sleep", json!({"ms": 4000}));
    // The sleep is in flight upstream before the question comes.
    gw.wait_in_flight("fx", 1).await;
    let asking = post(&c, "ask", "fx__ask_name", json!({}));
    let question = loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), get.next())
            .await
            .expect("the question within 10 s")
            .expect("the stream stays open");
        if msg["method"] == "elicitation/create" {
            break msg;
        }
    };
    let r = c
        .post(&json!({"jsonrpc": "2.0", "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    assert!(r.status().is_success());
    let answer = asking.await.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "Hello, Ada!",
        "{answer}"
    );

    // Another session's question while this session's sleep runs: which one asks is unknown.
    let sleeping_too = post(&c, "slow-2", "fx__sleep", json!({"ms": 3000}));
    // Both sleeps are in flight (the first runs 4 s).
    gw.wait_in_flight("fx", 2).await;
    let mut other = RawClient::initialize(&gw.mcp, json!({"elicitation": {}})).await;
    let r = other
        .request(
            "tools/call",
            json!({"name": "fx__ask_name", "arguments": {}}),
        )
        .await;
    // The fixture greets "nobody" when its question is refused: it was not asked of the
    // session whose sleep runs.
    assert_eq!(r["result"]["content"][0]["text"], "Hello, nobody!", "{r}");
    let stray = tokio::time::timeout(Duration::from_millis(300), get.next()).await;
    assert!(
        !matches!(&stray, Ok(Some(m)) if m["method"] == "elicitation/create"),
        "another session's question reached this one: {stray:?}"
    );
    sleeping.await.unwrap();
    sleeping_too.await.unwrap();
    let _ = c.request("ping", json!({})).await;
}

/// Issue 37, item 7: a 2026-07-28 host cancels by closing its request (it has no session to
/// send `notifications/cancelled` on): the upstream is told, under its own request id.
#[tokio::test]
async fn a_2026_host_that_closes_its_request_cancels_the_upstream_call() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_millis(1500))
        .build()
        .unwrap();
    let aborted = http
        .post(&gw.mcp)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "fx__hang")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "fx__hang", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}),
        )
        .send()
        .await;
    // The host gives up (its client timeout closes the connection), with or without headers.
    if let Ok(r) = aborted {
        assert!(r.text().await.is_err(), "the hanging call never answers");
    }
    let mut probe = RawClient::initialize(&gw.mcp, json!({})).await;
    let mut seen = Value::Null;
    for _ in 0..50 {
        seen = cancellations(&mut probe).await;
        if !seen.as_array().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        seen.as_array().unwrap().len(),
        1,
        "the upstream was told the call is cancelled: {seen}"
    );
}

/// A `tools/call` whose upstream may ask the host for its roots: answered with `roots`.
async fn call_answering_roots(c: &mut RawClient, tool: &str, roots: Value) -> Value {
    let params = json!({"name": tool, "arguments": {}});
    c.request_answering("tools/call", params, |m| {
        (m["method"] == "roots/list").then(|| json!({ "roots": roots.clone() }))
    })
    .await
    .1
}

/// Issue 37, item 16: roots are each host's own. A shared upstream is not given any (it kept the
/// first host's and showed them to the next); a per-session one sees each host's.
#[tokio::test]
async fn hosts_never_see_each_others_roots() {
    let dir = gateway_tests::scratch();
    let bin = gateway_tests::peers().join("node_modules/.bin/mcp-server-everything");
    let gw = gateway_tests::Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"evs\"\ntransport = \"stdio\"\n\
         command = \"{b}\"\n\n[[upstreams]]\nname = \"evp\"\ntransport = \"stdio\"\n\
         command = \"{b}\"\nsharing = \"per_session\"\n",
        super::sqlite_url(&dir),
        b = bin.display()
    ))
    .await;
    gw.wait_up(&["evs", "evp"]).await;
    let caps = json!({"roots": {"listChanged": true}});
    let mut ann = RawClient::initialize(&gw.mcp, caps.clone()).await;
    let mut bob = RawClient::initialize(&gw.mcp, caps).await;
    let root = |who: &str| json!([{"uri": format!("file:///home/{who}"), "name": who}]);
    let mut seen = Vec::new();
    for (c, who) in [(&mut ann, "ann"), (&mut bob, "bob")] {
        let shared = call_answering_roots(c, "evs__get-roots-list", root(who)).await;
        seen.push(shared.to_string());
        // server-everything may register the tool a moment after its session starts.
        let mut own = Value::Null;
        for _ in 0..50 {
            own = call_answering_roots(c, "evp__get-roots-list", root(who)).await;
            if own.to_string().contains(&format!("/home/{who}")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            own.to_string().contains(&format!("/home/{who}")),
            "a per-session upstream sees its host's roots: {own}"
        );
    }
    assert!(
        !seen[1].contains("/home/ann"),
        "bob saw ann's roots through the shared upstream: {}",
        seen[1]
    );
}
