//! Upstreams that hang, crash or come and go: clear JSON-RPC errors, recovery, no leaked processes.

use std::time::Duration;

use gateway_tests::{processes_matching, response_json, Gateway, RawClient};
use serde_json::json;

#[tokio::test]
async fn hanging_and_crashing_upstreams_fail_cleanly_and_recover() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&super::fixture_config(
        &super::sqlite_url(&dir),
        "timeout_secs = 1",
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;

    let r = c
        .request("tools/call", json!({"name": "fx__hang", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32001, "{r}");

    let r = c
        .request("tools/call", json!({"name": "fx__crash", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("fx"),
        "{r}"
    );

    // The supervisor restarts the server; the same session keeps working.
    let mut ok = None;
    for _ in 0..80 {
        let r = c
            .request(
                "tools/call",
                json!({"name": "fx__echo", "arguments": {"message": "back"}}),
            )
            .await;
        if r.get("result").is_some() {
            ok = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let ok = ok.expect("fixture restarted within 20 s");
    assert_eq!(ok["result"]["content"][0]["text"], "back");
}

#[tokio::test]
async fn per_session_stdio_processes_end_with_their_sessions() {
    let dir = gateway_tests::scratch();
    // A marker argument makes this test's processes countable among everything else running.
    let marker = format!("marker-{}", uuid::Uuid::new_v4().simple());
    let gw = Gateway::start(&super::fixture_config(
        &super::sqlite_url(&dir),
        &format!("args = [\"{marker}\"]\nsharing = \"per_session\""),
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    assert_eq!(
        processes_matching(&marker).len(),
        1,
        "the catalog connection"
    );
    const SESSIONS: usize = 150;
    for round in 0..SESSIONS / 10 {
        let mut clients = Vec::new();
        for _ in 0..10 {
            let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
            let r = c
                .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
                .await;
            assert!(r.get("result").is_some(), "round {round}: {r}");
            clients.push(c);
        }
        assert!(
            processes_matching(&marker).len() >= 11,
            "one process per session"
        );
        for c in clients {
            let r = c
                .http
                .delete(&c.url)
                .header("mcp-session-id", c.session.clone().unwrap())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
    }
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = processes_matching(&marker).len();
        if left == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        left, 1,
        "after {SESSIONS} sessions only the catalog connection's process is left"
    );
    gw.stop().await;
    for _ in 0..50 {
        if processes_matching(&marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("upstream processes survived the gateway's shutdown");
}

/// Issue 37, item 5: a session's first calls, sent at once, share the one process they start.
#[tokio::test]
async fn concurrent_first_calls_of_a_session_start_one_process() {
    let dir = gateway_tests::scratch();
    let marker = format!("burst-{}", uuid::Uuid::new_v4().simple());
    let gw = Gateway::start(&super::fixture_config(
        &super::sqlite_url(&dir),
        &format!("args = [\"{marker}\"]\nsharing = \"per_session\""),
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;
    let calls = (0..10).map(|i| {
        let req = c.post_builder(
            serde_json::to_vec(
                &json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                "params": {"name": "fx__pid", "arguments": {}}}),
            )
            .unwrap(),
        );
        async move { response_json(&req.send().await.unwrap().text().await.unwrap()) }
    });
    let answers = futures::future::join_all(calls).await;
    let pids: std::collections::BTreeSet<String> = answers
        .iter()
        .map(|r| {
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("every call is answered: {r}"))
                .to_string()
        })
        .collect();
    assert_eq!(pids.len(), 1, "one process served the session: {answers:?}");
    assert_eq!(
        processes_matching(&marker).len(),
        2,
        "the catalog connection and the session's"
    );
}

#[tokio::test]
async fn idle_sessions_release_their_upstream_processes_and_come_back_on_use() {
    let dir = gateway_tests::scratch();
    let marker = format!("idle-{}", uuid::Uuid::new_v4().simple());
    let gw = Gateway::start(&format!(
        "[server]\nsession_idle_secs = 1\n{}",
        super::fixture_config(
            &super::sqlite_url(&dir),
            &format!("args = [\"{marker}\"]\nsharing = \"per_session\"")
        )
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    assert!(c
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await
        .get("result")
        .is_some());
    assert_eq!(processes_matching(&marker).len(), 2);
    let mut left = 0;
    for _ in 0..100 {
        left = processes_matching(&marker).len();
        if left == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 1, "the idle session's upstream process is gone");
    // Reaping frees resources only: the id still describes the session, so the host's next
    // request rebuilds it (with a fresh upstream process) instead of failing.
    let r = c
        .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(processes_matching(&marker).len(), 2);
}

#[tokio::test]
async fn mcp_servers_file_from_the_config_is_served() {
    let dir = gateway_tests::scratch();
    std::fs::write(
        dir.join("claude.json"),
        json!({"mcpServers": {"fixture": {"command": super::fixture_bin()}}}).to_string(),
    )
    .unwrap();
    let gw = Gateway::start(&format!(
        "mcp_servers_file = \"{}/claude.json\"\n\n[database]\nurl = \"{}\"\n",
        dir.display(),
        super::sqlite_url(&dir)
    ))
    .await;
    gw.wait_up(&["fixture"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": "fixture__echo", "arguments": {"message": "imported"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "imported");
}

/// An upstream whose result is not a JSON object (its own defect) gets a 2026-07-28 host a
/// JSON-RPC error. The gateway added `resultType` by indexing the result as an object, which
/// panicked the request's task: the host's connection closed without an answer.
#[tokio::test]
async fn a_result_that_is_no_object_is_an_error_for_a_2026_host() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let call = |name: &'static str, arguments: serde_json::Value| {
        let params = json!({"name": name, "arguments": arguments});
        gateway_tests::request_2026(&gw.mcp, "tools/call", name, params)
    };
    let r = call("fx__not_an_object", json!({})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a JSON object")),
        "{r}"
    );
    // The gateway goes on answering.
    let r = call("fx__echo", json!({"message": "still here"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");
}
