//! An audit log that keeps every call through shutdown and shows tampering.

use super::*;

#[tokio::test]
async fn audit_log_keeps_every_call_through_shutdown_and_shows_tampering() {
    const N: usize = 10_000;
    let db = gateway_tests::postgres_database().await;
    let gw = Gateway::start(&fixture_config(&db, "")).await;
    gw.wait_up(&["fx"]).await;
    let http = reqwest::Client::new();
    let started = std::time::Instant::now();
    let calls = futures::stream::iter(0..N).map(|i| {
        let http = http.clone();
        let url = gw.mcp.clone();
        async move { echo(&http, &url, i).await }
    });
    use futures::StreamExt;
    let statuses: Vec<u16> = calls.buffer_unordered(500).collect().await;
    assert!(statuses.iter().all(|s| *s == 200));
    // Shut down right after the last answer: the queue must still reach the database.
    let (status, dir) = gw.stop_keeping_dir().await;
    assert!(status.success());
    let elapsed = started.elapsed();
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let rows: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'tools/call'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(rows as usize, N, "every call has its audit row");
    assert!(
        elapsed < Duration::from_secs(60),
        "{N} calls took {elapsed:?}"
    );
    let (ok, report) = verify_cli(&dir).await;
    assert!(ok, "{report}");
    assert_eq!(report["checked"], N);

    // An edited row breaks the chain there: the CLI and the admin API say where.
    sqlx::query("UPDATE audit_log SET outcome = 'error' WHERE seq = 4321")
        .execute(&pool)
        .await
        .unwrap();
    let (ok, report) = verify_cli(&dir).await;
    assert!(!ok);
    assert_eq!(report["first_broken"]["seq"], 4321, "{report}");
    let gw = Gateway::start(&fixture_config(&db, "")).await;
    let api = gw.get_json("/admin/v1/audit/verify").await;
    assert_eq!(api["first_broken"]["seq"], 4321, "{api}");
    assert_eq!(api["ok"], false);
    // A deleted row is reported as missing.
    sqlx::query("DELETE FROM audit_log WHERE seq = 77")
        .execute(&pool)
        .await
        .unwrap();
    let (_, report) = verify_cli(&dir).await;
    assert_eq!(report["first_broken"]["seq"], 77, "{report}");
}

/// An operator verifies the chain while calls are being audited: rows written after the check
/// began are not part of it, and the chain is reported intact every time.
#[tokio::test]
async fn the_chain_verifies_while_calls_are_audited() {
    let db = gateway_tests::postgres_database().await;
    let gw = Gateway::start(&fixture_config(&db, "")).await;
    gw.wait_up(&["fx"]).await;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let url = gw.mcp.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut n = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) && n < 2000 {
                    echo(&http, &url, n).await;
                    n += 1;
                }
            })
        })
        .collect();
    let mut reports = Vec::new();
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        reports.push(gw.get_json("/admin/v1/audit/verify").await);
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in callers {
        c.await.unwrap();
    }
    let grew = reports.last().unwrap()["head_seq"].as_i64() > reports[0]["head_seq"].as_i64();
    assert!(grew, "no call was audited meanwhile: {reports:?}");
    let broken: Vec<_> = reports.iter().filter(|r| r["ok"] != true).collect();
    assert!(
        broken.is_empty(),
        "{} of 30 reports broken: {broken:?}",
        broken.len()
    );
}

/// `fx__echo` called as a 2026-07-28 request (no session), message `m{i}`: the status.
async fn echo(http: &reqwest::Client, url: &str, i: usize) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "fx__echo", "arguments": {"message": format!("m{i}")},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    http.post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "fx__echo")
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}
