//! Results of Streamable HTTP upstreams pass to the host as the upstream wrote them (their JSON
//! text spliced under the host's id, not parsed and written again): over a JSON answer (the
//! conformance fixture, a 2026-07-28 upstream) and an SSE answer (server-everything). What the
//! gateway reads of a result still counts: a tool's `isError` in the metrics and the audit log,
//! the text cap, and the fields a 2026-07-28 host must get.

use std::time::Duration;

use gateway_tests::{everything, free_port, wait_port, Gateway, RawClient};
use serde_json::{json, Value};
use tokio::process::Command;

/// A POST of `tools/call` under a string id; the response as JSON.
async fn call(c: &RawClient, id: &str, name: &str, arguments: Value) -> Value {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments}});
    let resp = c.post(&msg).await;
    assert_eq!(resp.status(), 200);
    gateway_tests::response_json(&resp.text().await.unwrap())
}

/// The newest audit row of `target`, once written (the writer batches).
async fn audited(gw: &Gateway, target: &str) -> Value {
    for _ in 0..100 {
        let rows = gw
            .get_json(&format!("/admin/v1/audit?target={target}&limit=1"))
            .await;
        if let Some(row) = rows.as_array().and_then(|r| r.first()) {
            return row.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no audit row for {target}\n{}", gw.log());
}

#[tokio::test]
async fn upstream_results_pass_through_and_are_still_read() {
    let (_fixture, fixture_url) = gateway_tests::spawn_reporting_url(&mut Command::new(env!(
        "CARGO_BIN_EXE_conformance-fixture"
    )))
    .await;
    let port = free_port();
    let _everything = everything("streamableHttp", port);
    wait_port(port).await;
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n\
         [[upstreams]]\nname = \"conf\"\ntransport = \"http\"\nurl = \"{fixture_url}\"\n\n\
         [[upstreams]]\nname = \"ev\"\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n\
         max_result_text_bytes = 40\n\n\
         [[upstreams]]\nname = \"evfull\"\ntransport = \"http\"\n\
         url = \"http://127.0.0.1:{port}/mcp\"\n",
        super::sqlite_url(&dir)
    ))
    .await;
    gw.wait_up(&["conf", "ev", "evfull"]).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;

    // The whole response: the host's own id, the upstream's result, less the `resultType` a
    // 2026-07-28 upstream says (a 2025 host's results have none: issue 37).
    let r = call(&c, "host-1", "conf__test_simple_text", json!({})).await;
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": "host-1", "result": {"content": [
            {"type": "text", "text": "This is a simple text response for testing."}]}}),
        "{}",
        gw.log()
    );
    let r = call(&c, "host-2", "ev__echo", json!({"message": "short"})).await;
    assert_eq!(r["id"], "host-2", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Echo: short", "{r}");

    // A long text is still cut to the upstream's cap, and says so.
    let r = call(
        &c,
        "host-3",
        "ev__echo",
        json!({"message": "y".repeat(5000)}),
    )
    .await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("[trimmed by the gateway: 40 of"), "{r}");
    assert!(text.len() < 200, "{text}");

    // A tool's own failure is a tool error to the metrics and the audit log, from either kind
    // of answer. (`ev`'s error text is over its cap: the audit reads the cut result, rebuilt as
    // a tree, while the metrics read the passed one.)
    let r = call(&c, "host-4", "conf__test_error_handling", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = call(&c, "host-5", "ev__get-sum", json!({"a": "not a number"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    for (target, upstream) in [("conf__test_error_handling", "conf"), ("ev__get-sum", "ev")] {
        let row = audited(&gw, target).await;
        assert_eq!(row["outcome"], "error", "{row}");
        assert_eq!(row["error_class"], "tool_error", "{row}");
        let metrics = gw.metrics().await;
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("mcp_gateway_tool_calls")
                    && l.contains(&format!("upstream=\"{upstream}\""))
                    && l.contains("outcome=\"tool_error\"")),
            "{upstream}: {metrics}"
        );
    }
    let row = audited(&gw, "conf__test_simple_text").await;
    assert_eq!(row["outcome"], "ok", "{row}");

    // A 2026-07-28 host gets `resultType` in every result: as the 2026-07-28 upstream says it,
    // and added to the 2025 upstream's (`evfull`, the same server without a text cap, whose
    // result is not rebuilt for the cap).
    for (name, arguments, text) in [
        (
            "conf__test_simple_text",
            json!({}),
            "This is a simple text response for testing.",
        ),
        ("evfull__echo", json!({"message": "new"}), "Echo: new"),
    ] {
        let params = json!({"name": name, "arguments": arguments});
        let resp = gateway_tests::request_2026(&gw.mcp, "tools/call", name, params).await;
        assert_eq!(resp["id"], 9, "{resp}");
        assert_eq!(resp["result"]["resultType"], "complete", "{resp}");
        assert_eq!(resp["result"]["content"][0]["text"], text, "{resp}");
    }
}
