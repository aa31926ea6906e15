//! Stored tool vectors do not stay forever: every text a tool ever had (a description edited,
//! an upstream upgraded or removed, another model) left its vector in `tool_embeddings` for
//! good. Vectors no replica has used for 30 days are forgotten; the vectors of the tools in the
//! catalog stay, however old, so a restart still embeds nothing again.

use super::*;

const DAY_MS: i64 = 86_400_000;

#[tokio::test]
async fn vectors_no_tool_has_used_for_long_are_forgotten_and_the_catalogs_kept() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    let cfg = fixture_config(&db, "");
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    // A tool whose description an upstream changed: both texts were embedded and stored.
    let weather = [("forecast", "Tells tomorrow's weather")];
    add_fixture_tools(&gw, &mut c, &weather, "will it rain tomorrow").await;
    let money = [("forecast", "Converts an amount of money between currencies")];
    add_fixture_tools(&gw, &mut c, &money, "how many euros is 20 dollars").await;
    wait_indexed(&gw, true).await;
    gw.stop().await;

    // Two months pass. The fixture's process starts anew without the added tool, so both of
    // its texts are no tool's any more.
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    let stored = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM tool_embeddings")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    let before = stored().await;
    sqlx::query("UPDATE tool_embeddings SET created_at = created_at - $1")
        .bind(60 * DAY_MS)
        .execute(&pool)
        .await
        .unwrap();

    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    let catalog = wait_indexed(&gw, true).await["tools"].as_u64().unwrap() as i64;
    assert_eq!(before, catalog + 2, "{}", gw.log());
    let log = gateway_tests::polled(
        || async { gw.log() },
        |log| log.contains("forgot stored tool vectors"),
    )
    .await;
    assert_eq!(
        stored().await,
        catalog,
        "the vectors of texts no tool has had for 60 days are still stored\n{log}"
    );
    // The catalog's own vectors were as old, and stay: this start embedded nothing.
    let ready = vectors_ready(&log);
    assert_eq!(ready["embedded"], 0, "{ready}");
    assert_eq!(ready["reused"], catalog, "{ready}");
    gw.stop().await;

    // And the next start still reuses every one of them.
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    wait_indexed(&gw, true).await;
    assert_eq!(vectors_ready(&gw.log())["embedded"], 0);
    assert_eq!(stored().await, catalog);
}

/// The fields of the first "tool vectors ready" line of a log: `embedded`, `reused`.
fn vectors_ready(log: &str) -> Value {
    let line = log
        .lines()
        .find(|l| l.contains("tool vectors ready"))
        .unwrap_or_else(|| panic!("no vectors line in\n{log}"));
    serde_json::from_str::<Value>(line).unwrap()["fields"].clone()
}
