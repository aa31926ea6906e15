//! Postgres stopped while serving: traffic goes on from memory, admin writes get a clear 503,
//! readiness says so, and everything recovers when the database is back. Calls go on while their
//! audit rows fit in the queue (`audit.when_unwritable = "buffer"`); the default refuses them
//! once the audit log cannot be written (full_disk.rs).

use gateway_tests::{Gateway, PgCluster, RawClient};
use serde_json::{json, Value};

#[tokio::test]
async fn postgres_stopped_while_serving() {
    let pg = PgCluster::start();
    let gw = Gateway::start(&format!(
        "[audit]\nwhen_unwritable = \"buffer\"\n\n{}",
        super::fixture_config(&pg.url, "")
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let http = reqwest::Client::new();
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let call = json!({"name": "fx__echo", "arguments": {"message": "m"}});
    assert_eq!(
        c.request("tools/call", call.clone()).await["result"]["content"][0]["text"],
        "m"
    );

    pg.stop();
    assert_eq!(
        c.request("tools/call", call.clone()).await["result"]["content"][0]["text"],
        "m",
        "calls do not need the database"
    );
    assert!(
        c.request("tools/list", json!({})).await["result"]["tools"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );
    let mut late = RawClient::initialize(&gw.mcp, json!({})).await;
    assert!(
        late.request("tools/call", call.clone())
            .await
            .get("result")
            .is_some(),
        "new sessions too"
    );
    let spec = json!({"name": "fx2", "transport": "stdio", "command": super::fixture_bin()});
    let r = http
        .post(format!("{}/admin/v1/upstreams", gw.base))
        .json(&spec)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("database"),
        "{body}"
    );
    let ready = http
        .get(format!("{}/readyz", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);

    pg.restart();
    let mut created = None;
    for _ in 0..40 {
        let r = http
            .post(format!("{}/admin/v1/upstreams", gw.base))
            .json(&spec)
            .send()
            .await
            .unwrap();
        if r.status() != 503 {
            created = Some(r.status());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(
        created,
        Some(reqwest::StatusCode::CREATED),
        "admin writes work again once the database is back"
    );
    gw.wait_up(&["fx", "fx2"]).await;
    // Ready once the audit rows kept meanwhile are written too (the writer tries every second).
    let mut status = 0;
    for _ in 0..40 {
        let r = http
            .get(format!("{}/readyz", gw.base))
            .send()
            .await
            .unwrap();
        status = r.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(status, 200);

    // Announcements reach it again: a session another replica ends now is ended here too.
    let session = c.session.clone().unwrap();
    let hash = registry::hash::text_hash(&session);
    let db = sqlx::PgPool::connect(&pg.url).await.unwrap();
    sqlx::query("INSERT INTO terminated_sessions (id_hash, terminated_at) VALUES ($1, $2)")
        .bind(&hash)
        .bind(registry::now_ms())
        .execute(&db)
        .await
        .unwrap();
    let ended = gateway_tests::polled(
        || {
            let (db, hash) = (db.clone(), hash.clone());
            let mut host = RawClient::new(&gw.mcp);
            host.session = Some(session.clone());
            async move {
                sqlx::query("SELECT pg_notify('mcp_gateway_upstreams', $1)")
                    .bind(format!("elsewhere session:{hash}"))
                    .execute(&db)
                    .await
                    .unwrap();
                host.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
                    .await
                    .status()
                    .as_u16()
            }
        },
        |s| *s == 404,
    )
    .await;
    assert_eq!(
        ended, 404,
        "a session ended after the outage is still served"
    );
}
