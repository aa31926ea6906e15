//! `search_tools` and `call_tool` through the official Python SDK client against real
//! upstreams, and `POST /v1/route` on the same gateway: its ranking, filters, bounds and the
//! readings of requests (steps, then everyday words: `steps`, `everyday`).

use std::time::Duration;

use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::{config, search, sqlite_url, tool_names, wait_indexed, UPSTREAMS};

#[tokio::test]
async fn search_tools_then_call_tool_with_a_real_client() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&config(&sqlite_url(&dir), "", &dir)).await;
    gw.wait_up(&UPSTREAMS).await;
    let status = wait_indexed(&gw, true).await;
    assert_eq!(status["mode"], "semantic", "the model is loaded: {status}");

    // The official Python SDK: the meta-tools are in its list; a natural-language search finds
    // the time tool first; call_tool calls it by the name the search gave.
    let calls = json!([
        ["search_tools", {"query": "what time is it in Tokyo right now", "k": 3}],
        ["call_tool", {"name": "time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}],
        ["search_tools", {"query": "add two numbers together"}],
    ]);
    let out = gateway_tests::python_client(&gw.mcp, "legacy", &calls, &gw.log()).await;
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(&tools[..2], ["search_tools", "call_tool"], "{tools:?}");
    assert!(
        tools.contains(&"time__get_current_time"),
        "mode all lists everything"
    );
    let found: Value = serde_json::from_str(out["results"][0].as_str().unwrap()).unwrap();
    assert_eq!(
        found["tools"][0]["name"], "time__get_current_time",
        "{found}"
    );
    assert!(found["tools"][0]["inputSchema"]["properties"]["timezone"].is_object());
    assert!(found["tools"].as_array().unwrap().len() <= 3);
    assert!(
        out["results"][1].as_str().unwrap().contains("Asia/Tokyo"),
        "call_tool reached the time server: {}",
        out["results"][1]
    );
    let sum: Value = serde_json::from_str(out["results"][2].as_str().unwrap()).unwrap();
    let top5 = tool_names(&sum["tools"]);
    assert!(top5.iter().any(|n| n == "everything__get-sum"), "{top5:?}");

    // The call that followed the first search was a hit; the pair is exported in the
    // evaluation set's format; the audit log names the real tool, not call_tool.
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("mcp_gateway_routing_followups_total{result=\"hit\"} 1"),
        "{metrics}"
    );
    assert!(metrics
        .contains("mcp_gateway_routing_searches_total{mode=\"semantic\",surface=\"meta\"} 2"));
    let pairs = reqwest::get(format!("{}/admin/v1/routing/pairs", gw.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let pair: Value = serde_json::from_str(pairs.lines().next().unwrap()).unwrap();
    assert_eq!(pair["query"], "what time is it in Tokyo right now");
    assert_eq!(
        pair["relevant"][0],
        json!({"server": "time", "name": "get_current_time"})
    );
    assert_eq!(pair["found"], true);
    let mut audit = Value::Null;
    for _ in 0..50 {
        audit = gw
            .get_json("/admin/v1/audit?target=time__get_current_time")
            .await;
        if audit.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(audit.as_array().map(Vec::len), Some(1), "{audit}");
    assert_eq!(audit[0]["action"], "tools/call");
    assert_eq!(audit[0]["upstream"], "time");

    // A repeated query is served from the cache.
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    search(&mut c, "what time is it in Tokyo right now", 3).await;
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("mcp_gateway_routing_query_cache_total{result=\"hit\"} 1"),
        "{metrics}"
    );

    // POST /v1/route: ranked tools; filters narrow before ranking.
    let route = |body: Value| super::route(&gw, body);
    // A request as large as a body may be is read to its first 8 KiB: its readings look at
    // words around words, and a 700 KB request cost 29 s of CPU before it was bounded. The
    // answer serves what the request opens with.
    let huge = format!(
        "What time is it in Tokyo right now? {}",
        "Make a chart of my Strava runs and ".repeat(30_000)
    );
    let r = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .timeout(std::time::Duration::from_secs(20))
        .json(&json!({ "query": huge, "k": 3 }))
        .send()
        .await
        .expect("an answer within 20 s");
    assert_eq!(r.status().as_u16(), 200);
    let r: Value = r.json().await.unwrap();
    assert!(
        tool_names(&r["tools"])
            .iter()
            .any(|n| n == "time__get_current_time"),
        "{r}"
    );
    let (s, r) = route(json!({"query": "remember a new fact about a person", "k": 5})).await;
    assert_eq!(s, 200, "{r}");
    let ranked = tool_names(&r["tools"]);
    assert!(
        ranked.iter().any(|n| n.starts_with("memory__")),
        "{ranked:?}"
    );
    let scores: Vec<f64> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "ranked by score: {scores:?}"
    );
    let (_, r) = route(
        json!({"query": "what time is it", "k": 5, "filters": {"upstreams": ["everything"]}}),
    )
    .await;
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["upstream"] == "everything"),
        "{r}"
    );
    super::steps::served_step_by_step(&gw).await;
    super::everyday::read_in_the_tools_words(&gw).await;
}
