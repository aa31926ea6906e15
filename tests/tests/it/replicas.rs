//! Two gateway processes on one Postgres: registry changes made through one replica's admin API
//! reach the other within a second or two (LISTEN/NOTIFY), without polling.

use std::time::Duration;

use gateway_tests::{Gateway, RawClient};
use serde_json::json;

async fn call_echo(gw: &Gateway, tool: &str) -> Option<String> {
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {"message": "hi"}}),
        )
        .await;
    r.pointer("/result/content/0/text")
        .and_then(|t| t.as_str())
        .map(str::to_string)
}

#[tokio::test]
async fn upstream_added_on_one_replica_is_served_by_the_other() {
    let db = gateway_tests::postgres_database().await;
    let config = format!("[database]\nurl = \"{db}\"\n");
    let a = Gateway::start(&config).await;
    let b = Gateway::start(&config).await;
    let http = reqwest::Client::new();
    let spec = json!({"name": "fx", "transport": "stdio", "command": super::fixture_bin()});
    let r = http
        .post(format!("{}/admin/v1/upstreams", a.base))
        .json(&spec)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);

    let mut got = None;
    for _ in 0..40 {
        got = call_echo(&b, "fx__echo").await;
        if got.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        got.as_deref(),
        Some("hi"),
        "replica b serves the upstream added through a:\n{}",
        b.log()
    );

    let r = http
        .delete(format!("{}/admin/v1/upstreams/fx", b.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let mut gone = false;
    for _ in 0..40 {
        if call_echo(&a, "fx__echo").await.is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(gone, "replica a dropped the upstream deleted through b");
}
