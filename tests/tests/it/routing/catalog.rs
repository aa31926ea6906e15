//! The catalog seen through routing: virtual servers by mode and `auto` sessions, a changed
//! description found by its new wording with stored embeddings reused, RBAC before ranking,
//! and the lexical mode without a model.

use std::time::Duration;

use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::{admin, config, fixture_config, names, search, sqlite_url, wait_indexed, UPSTREAMS};

#[tokio::test]
async fn virtual_servers_list_by_mode_and_auto_sessions_grow_after_a_search() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&config(&sqlite_url(&dir), "", &dir)).await;
    gw.wait_up(&UPSTREAMS).await;
    wait_indexed(&gw, true).await;
    let (s, v) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "ops", "mode": "auto", "upstreams": ["time", "everything"],
               "pinned": ["everything__echo"], "auto_k": 4}),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["path"], "/mcp/v/ops");
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "finder", "mode": "search"}),
    )
    .await;
    assert_eq!(s, 201);
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "ops"}),
    )
    .await;
    assert_eq!(s, 409, "names are unique");
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "a b"}),
    )
    .await;
    assert_eq!(s, 400);

    let url = format!("{}/mcp/v/ops", gw.base);
    let mut c = RawClient::initialize(&url, json!({})).await;
    let listed = |r: &Value| -> Vec<String> {
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = listed(&c.request("tools/list", json!({})).await);
    assert_eq!(before, ["search_tools", "call_tool", "everything__echo"]);

    let mut events = Box::pin(c.listen().await);
    let found = search(&mut c, "convert a time between two time zones", 3).await;
    assert_eq!(found[0], "time__convert_time", "{found:?}");
    assert!(
        found
            .iter()
            .all(|n| n.starts_with("time__") || n.starts_with("everything__")),
        "only the server's upstreams: {found:?}"
    );
    let note = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("list_changed arrives")
        .unwrap();
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let after = listed(&c.request("tools/list", json!({})).await);
    assert!(
        after.contains(&"time__convert_time".to_string()),
        "{after:?}"
    );
    assert!(
        after.contains(&"everything__echo".to_string()),
        "pinned stays"
    );
    assert!(
        after.len() <= 2 + 1 + 4,
        "auto_k bounds the found tools: {after:?}"
    );

    // A tool outside the server is unknown here, also through call_tool; one inside is called
    // by its name without being listed.
    let r = c
        .request("tools/call", json!({"name": "call_tool", "arguments": {"name": "memory__read_graph", "arguments": {}}}))
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{r}"
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__get-sum", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains('5'),
        "{r}"
    );

    // The session belongs to its endpoint.
    let mut other = RawClient::new(&gw.mcp);
    other.session = c.session.clone();
    let resp = other
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    assert_eq!(resp.status().as_u16(), 404);

    // `search` mode: the meta-tools only (nothing pinned); an unknown server is 404.
    let mut f = RawClient::initialize(&format!("{}/mcp/v/finder", gw.base), json!({})).await;
    assert_eq!(
        listed(&f.request("tools/list", json!({})).await),
        ["search_tools", "call_tool"]
    );
    let resp = RawClient::new(&format!("{}/mcp/v/nope", gw.base))
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    assert_eq!(resp.status().as_u16(), 404);

    // Stored in the registry: a restart keeps them.
    let (s, _) = admin(
        &gw,
        reqwest::Method::DELETE,
        "/admin/v1/virtual-servers/finder",
        Value::Null,
    )
    .await;
    assert_eq!(s, 204);
    let config_text = std::fs::read_to_string(gw.dir.join("gateway.toml")).unwrap();
    gw.stop().await;
    let gw = Gateway::start(&config_text).await;
    let list = gw.get_json("/admin/v1/virtual-servers").await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ops"]);
    assert_eq!(list[0]["mode"], "auto");
}

#[tokio::test]
async fn a_changed_description_is_found_by_its_new_wording_and_embeddings_are_reused() {
    let dir = gateway_tests::scratch();
    let cfg = fixture_config(&sqlite_url(&dir), "");
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    c.request("tools/call", json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": "Tells tomorrow's weather"}})).await;
    // The first result of a search, once it is `fx__forecast` described as `description`.
    let wait_for = |c: &RawClient, query: &'static str, description: &'static str| {
        let mut c2 = RawClient::new(&c.url);
        c2.session = c.session.clone();
        async move {
            let mut last = Value::Null;
            for _ in 0..100 {
                let r = c2
                    .request(
                        "tools/call",
                        json!({"name": "search_tools", "arguments": {"query": query, "k": 1}}),
                    )
                    .await;
                last = r["result"]["structuredContent"]["tools"][0].clone();
                if last["name"] == "fx__forecast" && last["description"] == description {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("search for {query:?} found {last}");
        }
    };
    wait_for(&c, "will it rain tomorrow", "Tells tomorrow's weather").await;
    let money = "Converts an amount of money between currencies";
    c.request(
        "tools/call",
        json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": money}}),
    )
    .await;
    wait_for(&c, "how many euros is 20 dollars", money).await;
    // Words only the new description has find it lexically too, once the index has it (the
    // view changes first; the index follows asynchronously, later under load).
    let mut r = Value::Null;
    for _ in 0..100 {
        r = reqwest::Client::new()
            .post(format!("{}/v1/route", gw.base))
            .json(&json!({"query": "currencies", "k": 1}))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        if r["tools"][0]["name"] == "fx__forecast" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(r["tools"][0]["name"], "fx__forecast", "{r}");
    let first = gw.log();
    assert!(first.contains("tool vectors ready"), "{first}");
    gw.stop().await;

    // A restart on the same database embeds nothing again.
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    for _ in 0..100 {
        if gw.log().contains("tool vectors ready") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let line = gw
        .log()
        .lines()
        .find(|l| l.contains("tool vectors ready"))
        .map(str::to_string)
        .expect("vectors line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["fields"]["embedded"], 0, "{line}");
    let tools = gw.get_json("/admin/v1/catalog").await;
    let count = tools.as_array().unwrap().len();
    assert_eq!(v["fields"]["reused"], count, "{line}");
    // The default model is the one trained for tools that this repository ships.
    let model = gw.get_json("/readyz").await["routing"]["model"].clone();
    assert!(
        model
            .as_str()
            .is_some_and(|m| m.starts_with("minilm-tools:")),
        "{model}"
    );
    // It names the graph that runs: on x86-64 the integer-GEMM rewrite `fetch-model` made.
    let graph = gw.get_json("/readyz").await["routing"]["graph"].clone();
    let expected = match cfg!(target_arch = "x86_64") {
        true => "minilm-tools.matmul-integer.onnx",
        false => "minilm-tools.onnx",
    };
    assert_eq!(graph, expected, "{graph}");
    gw.stop().await;

    // The published model stays selectable; switching embeds every tool again with it.
    let gw = Gateway::start_with_env(&cfg, &[("MCP_GATEWAY_ROUTING_MODEL", "minilm")]).await;
    gw.wait_up(&["fx"]).await;
    let mut line = None;
    for _ in 0..300 {
        line = gw
            .log()
            .lines()
            .find(|l| l.contains("tool vectors ready"))
            .map(str::to_string);
        if line.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let line = line.expect("vectors line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["fields"]["embedded"], count, "{line}");
    assert_eq!(v["fields"]["reused"], 0, "{line}");
    let model = gw.get_json("/readyz").await["routing"]["model"].clone();
    assert!(
        model.as_str().is_some_and(|m| m.starts_with("model:")),
        "{model}"
    );
    // Tools live in the fixture's process, which started anew: the tool is added again.
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    c.request(
        "tools/call",
        json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": money}}),
    )
    .await;
    wait_for(&c, "how many euros is 20 dollars", money).await;
}

#[tokio::test]
async fn searches_see_only_what_the_caller_may_call() {
    let db = gateway_tests::postgres_database().await;
    let dir = gateway_tests::scratch();
    let roles = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "clock"
upstreams = ["time"]
"#;
    let cfg = format!(
        "{}{roles}\n[auth]\nmode = \"required\"\n",
        config(&db, "", &dir)
    );
    let gw = Gateway::start_secured(&cfg, &[]).await;
    gw.wait_up(&UPSTREAMS).await;
    wait_indexed(&gw, true).await;
    let token = gw.token_for("dana", &["clock"]).await;
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;
    let found = search(&mut c, "add two numbers", 10).await;
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|n| n.starts_with("time__")),
        "only what the role allows: {found:?}"
    );
    let r = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .json(&json!({"query": "store a memory", "k": 10}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        401,
        "the route endpoint needs a token too"
    );
    let r: Value = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .bearer_auth(&token)
        .json(&json!({"query": "store a memory", "k": 10}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["upstream"] == "time"),
        "{r}"
    );
}

#[tokio::test]
async fn without_the_model_search_is_lexical_and_says_so() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start_with_env(
        &config(&sqlite_url(&dir), "", &dir),
        &[("MCP_GATEWAY_MODEL_DIR", "/nonexistent/model")],
    )
    .await;
    gw.wait_up(&UPSTREAMS).await;
    let status = wait_indexed(&gw, false).await;
    assert_eq!(status["mode"], "lexical");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/model"),
        "{status}"
    );
    assert!(gw.log().contains("DEGRADED"), "the log says so");
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request("tools/call", json!({"name": "search_tools", "arguments": {"query": "get the current time in a timezone", "k": 3}}))
        .await;
    assert_eq!(r["result"]["structuredContent"]["mode"], "lexical");
    assert_eq!(names(&r["result"])[0], "time__get_current_time", "{r}");
}
