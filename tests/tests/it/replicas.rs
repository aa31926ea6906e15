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

/// Two replicas of `config` sharing the session key in `key`, their fixture up.
/// The HTTP status of a ping on `session` at `url`.
async fn ping_status(url: String, session: String) -> u16 {
    let mut host = RawClient::new(&url);
    host.session = Some(session);
    host.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await
        .status()
        .as_u16()
}

async fn two_replicas(config: &str, key: &[(&str, &str)]) -> (Gateway, Gateway) {
    let a = Gateway::start_with_env(config, key).await;
    let b = Gateway::start_with_env(config, key).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;
    (a, b)
}

#[tokio::test]
async fn a_session_continues_on_another_replica_when_its_replica_dies() {
    let db = gateway_tests::postgres_database().await;
    let config = super::fixture_config(&db, "sharing = \"per_session\"");
    let key = [("MCP_GATEWAY_SESSION_KEY", "test-shared-session-key")];
    let (a, b) = two_replicas(&config, &key).await;

    // A tiny round-robin in front of the two replicas: the session alternates between them.
    let mut c = RawClient::initialize(&a.mcp, json!({})).await;
    let mut pids = Vec::new();
    for (i, url) in [&a.mcp, &b.mcp, &a.mcp, &b.mcp].into_iter().enumerate() {
        c.url = url.clone();
        let r = c
            .request(
                "tools/call",
                json!({"name": "fx__echo", "arguments": {"message": format!("m{i}")}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("m{i}"),
            "call {i}: {r}"
        );
        let r = c
            .request("tools/call", json!({"name": "fx__pid", "arguments": {}}))
            .await;
        pids.push(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(
        pids[0], pids[2],
        "replica a keeps the session's own upstream process"
    );
    assert_eq!(
        pids[1], pids[3],
        "replica b rebuilt the session with an upstream process of its own"
    );
    assert_ne!(pids[0], pids[1]);

    a.kill().await;
    c.url = b.mcp.clone();
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "after"}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "after",
        "the session goes on without replica a"
    );

    let other_key =
        Gateway::start_with_env(&config, &[("MCP_GATEWAY_SESSION_KEY", "another key")]).await;
    let mut foreign = RawClient::new(&other_key.mcp);
    foreign.session = c.session.clone();
    assert_eq!(
        foreign
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status(),
        404,
        "a replica with another key cannot read the id"
    );

    let r = c
        .http
        .delete(&b.mcp)
        .header("mcp-session-id", c.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let d = Gateway::start_with_env(&config, &key).await;
    let mut late = RawClient::new(&d.mcp);
    late.session = c.session.clone();
    assert_eq!(
        late.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status(),
        404,
        "an ended session stays ended on every replica"
    );
}

/// A host ends its session through one replica while another holds it in memory (a load
/// balancer without affinity): the other stops serving it too, as the spec asks of an ended
/// session (404), instead of going on until it idles out.
#[tokio::test]
async fn a_session_ended_through_one_replica_is_ended_on_the_one_that_holds_it() {
    let db = gateway_tests::postgres_database().await;
    let config = super::fixture_config(&db, "");
    let key = [("MCP_GATEWAY_SESSION_KEY", "ended-on-every-replica")];
    let (a, b) = two_replicas(&config, &key).await;
    let c = RawClient::initialize(&a.mcp, json!({})).await;
    let session = c.session.clone().unwrap();
    let ping = |url: String| ping_status(url, session.clone());
    assert_eq!(ping(a.mcp.clone()).await, 200);
    let r = c
        .http
        .delete(&b.mcp)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let status = gateway_tests::polled(|| ping(a.mcp.clone()), |s| *s == 404).await;
    assert_eq!(
        status, 404,
        "the replica holding the session still serves it after its host ended it elsewhere"
    );
}

#[tokio::test]
async fn a_session_ended_while_its_replica_heard_nothing_is_ended_once_it_hears_again() {
    use sqlx::Connection;
    let db = gateway_tests::postgres_database().await;
    let config = super::fixture_config(&db, "");
    let a = Gateway::start_with_env(&config, &[("MCP_GATEWAY_SESSION_KEY", "ended-unheard")]).await;
    a.wait_up(&["fx"]).await;
    let c = RawClient::initialize(&a.mcp, json!({})).await;
    let session = c.session.clone().unwrap();
    let ping = || ping_status(a.mcp.clone(), session.clone());
    assert_eq!(ping().await, 200);
    // Another replica ended it and its announcement never arrived: the record is there, and
    // this replica's listener then loses its connection (it reconnects by itself).
    let mut pg = sqlx::PgConnection::connect(&db).await.unwrap();
    sqlx::query("INSERT INTO terminated_sessions (id_hash, terminated_at) VALUES ($1, $2)")
        .bind(registry::hash::text_hash(&session))
        .bind(registry::now_ms())
        .execute(&mut pg)
        .await
        .unwrap();
    let cut = sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&mut pg)
    .await
    .unwrap();
    assert_eq!(cut.len(), 1, "the replica's one listener");
    let status = gateway_tests::polled(ping, |s| *s == 404).await;
    assert_eq!(
        status, 404,
        "a session ended elsewhere while the replica heard nothing is still served"
    );
}
