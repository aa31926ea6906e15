//! An audit log kept for a set time (`audit.retention_days`). Without it the log only grew (a
//! row per call), and rows an operator deleted by hand broke `audit verify`. Rows older than the
//! retention are removed from the start of the chain; the verifier starts from the last removed
//! row's hash, so a row missing or edited after that is still found.

use registry::{AccessStore, AuditEntry, AuditStore, SqlRegistry, TokenRecord};

use super::*;

const DAY: i64 = 86_400_000;

fn entry(at: i64, i: usize) -> AuditEntry {
    AuditEntry {
        at,
        principal: "pat:ann".into(),
        token_id: None,
        session: None,
        action: "tools/call".into(),
        upstream: Some("fx".into()),
        target: Some("fx__echo".into()),
        outcome: "ok".into(),
        error_class: None,
        latency_ms: 1,
        arguments: Some(format!("{{\"message\":\"m{i}\"}}")),
    }
}

fn token(id: &str, expires_at: Option<i64>, revoked_at: Option<i64>) -> TokenRecord {
    TokenRecord {
        id: id.into(),
        name: id.into(),
        owner: "ann".into(),
        roles: vec![],
        token_hash: registry::hash::text_hash(id),
        created_at: registry::now_ms() - 90 * DAY,
        expires_at,
        last_used_at: None,
        revoked_at,
    }
}

#[tokio::test]
async fn rows_older_than_the_retention_go_and_the_chain_still_verifies() {
    let db = gateway_tests::postgres_database().await;
    {
        let store = SqlRegistry::open(&db, Default::default()).await.unwrap();
        let now = registry::now_ms();
        let old: Vec<_> = (0..50)
            .map(|i| entry(now - 60 * DAY + i as i64, i))
            .collect();
        let recent: Vec<_> = (50..80).map(|i| entry(now - 10 * DAY, i)).collect();
        store.append_audit(&old).await.unwrap();
        store.append_audit(&recent).await.unwrap();
        // Tokens that ended before the retention: no audit row left can name them.
        for t in [
            token("revoked-long-ago", None, Some(now - 60 * DAY)),
            token("expired-long-ago", Some(now - 60 * DAY), None),
            token("revoked-lately", None, Some(now - 10 * DAY)),
            token("expired-lately", Some(now - 10 * DAY), None),
            token("live", Some(now + 10 * DAY), None),
            token("forever", None, None),
        ] {
            store.create_token(&t).await.unwrap();
        }
    }
    let config = fixture_config(&db, "[audit]\nretention_days = 30\n");
    let gw = Gateway::start(&config).await;
    let report = gateway_tests::polled(
        || gw.get_json("/admin/v1/audit/verify"),
        |r| r["pruned_through"] == 50,
    )
    .await;
    assert_eq!(report["pruned_through"], 50, "{report}\n{}", gw.log());
    assert_eq!(report["ok"], true, "{report}");
    assert!(report["checked"].as_u64().unwrap() >= 30, "{report}");
    let month_ago = registry::now_ms() - 30 * DAY;
    let older = gw
        .get_json(&format!("/admin/v1/audit?until={month_ago}"))
        .await;
    assert_eq!(older.as_array().map(Vec::len), Some(0), "{older}");
    let kept = gw.get_json("/admin/v1/audit?target=fx__echo").await;
    assert_eq!(kept.as_array().map(Vec::len), Some(30), "{kept}");
    assert!(gw.log().contains("audit rows past their retention removed"));
    let tokens = gateway_tests::polled(
        || gw.get_json("/admin/v1/tokens"),
        |t| t.as_array().map(Vec::len) == Some(4),
    )
    .await;
    let mut ids: Vec<&str> = tokens
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        ["expired-lately", "forever", "live", "revoked-lately"],
        "tokens that ended before the audit's retention are still listed"
    );
    let (status, dir) = gw.stop_keeping_dir().await;
    assert!(status.success());

    // Removing the oldest remaining row by hand is not retention: the verifier says so.
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    sqlx::query("DELETE FROM audit_log WHERE seq = 51")
        .execute(&pool)
        .await
        .unwrap();
    let (ok, report) = verify_cli(&dir).await;
    assert!(!ok, "{report}");
    assert_eq!(report["first_broken"]["seq"], 51, "{report}");
}
