//! The admin API: upstreams registered at run time reach open sessions.

use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

#[tokio::test]
async fn upstream_added_through_the_api_appears_in_open_sessions_and_goes_away() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n",
        super::sqlite_url(&dir)
    ))
    .await;
    let http = reqwest::Client::new();
    let api = format!("{}/admin/v1/upstreams", gw.base);
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    // No upstream yet: only the gateway's own meta-tools.
    let names: Vec<Value> = c.request("tools/list", json!({})).await["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("search_tools"), json!("call_tool")]);
    let mut stream = Box::pin(c.listen().await);

    let bad = http
        .post(&api)
        .json(&json!({"name": "x", "transport": "stdio"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let msg: Value = bad.json().await.unwrap();
    assert!(
        msg["error"]["message"]
            .as_str()
            .unwrap()
            .contains("command"),
        "{msg}"
    );

    let spec = json!({"name": "fx", "transport": "stdio", "command": super::fixture_bin()});
    let created = http.post(&api).json(&spec).send().await.unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(
        http.post(&api).json(&spec).send().await.unwrap().status(),
        409
    );

    let note = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
        .await
        .expect("list_changed within 30 s");
    assert_eq!(note.unwrap()["method"], "notifications/tools/list_changed");
    let tools = c.request("tools/list", json!({})).await;
    let echo = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fx__echo")
        .cloned()
        .expect("fx__echo listed");
    // Byte-faithful passthrough: only the name is rewritten.
    assert_eq!(
        serde_json::to_string(&echo).unwrap(),
        r#"{"name":"fx__echo","description":"Echoes its message back","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]},"execution":{"taskSupport":"optional"},"annotations":{"readOnlyHint":true},"_meta":{"fixture/custom":[1,2,3]},"x-unknown-field":{"kept":true}}"#
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "hello"}}),
        )
        .await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "hello"}], "structuredContent": {"echoed": "hello"}, "_meta": {"fixture/result": true}})
    );

    let catalog = gw.get_json("/admin/v1/catalog").await;
    assert!(catalog
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["exposed"] == "fx__echo" && e["original"] == "echo"));
    let openapi = gw.get_json("/admin/v1/openapi.json").await;
    assert!(openapi["paths"]["/admin/v1/upstreams/{name}"]["delete"].is_object());

    assert_eq!(
        http.delete(format!("{api}/fx"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        http.delete(format!("{api}/fx"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "x"}}),
        )
        .await;
    assert_eq!(
        r["error"]["code"], -32602,
        "a removed upstream's tools are gone"
    );
}
