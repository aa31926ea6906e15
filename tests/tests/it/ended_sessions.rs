//! Sessions a host ended do not weigh on the store for good. A session id carries the session
//! (any replica restores it), so an ended one is recorded (`terminated_sessions`) to stay
//! ended; every DELETE of every host added a row that was never removed. Ids now carry when
//! they were issued and are not restored after 30 days, so a record older than that guards
//! nothing and is forgotten; a live session still moves across restarts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{fixture_config, sqlite_url};

const DAY_MS: i64 = 86_400_000;
const KEY: [(&str, &str); 1] = [("MCP_GATEWAY_SESSION_KEY", "ended-sessions-test-key")];

#[tokio::test]
async fn records_of_sessions_ended_long_ago_are_forgotten_and_live_sessions_restored() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    let config = fixture_config(&db, "");
    let gw = Gateway::start_with_env(&config, &KEY).await;
    gw.wait_up(&["fx"]).await;
    let ended = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = ended
        .http
        .delete(&gw.mcp)
        .header("mcp-session-id", ended.session.clone().unwrap())
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut live = RawClient::initialize(&gw.mcp, json!({})).await;
    gw.stop().await;

    // Two months pass.
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    let recorded = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM terminated_sessions")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(recorded().await, 1);
    sqlx::query("UPDATE terminated_sessions SET terminated_at = terminated_at - $1")
        .bind(60 * DAY_MS)
        .execute(&pool)
        .await
        .unwrap();

    let gw = Gateway::start_with_env(&config, &KEY).await;
    gw.wait_up(&["fx"]).await;
    let left = gateway_tests::polled(recorded, |n| *n == 0).await;
    assert_eq!(
        left,
        0,
        "a session ended 60 days ago is still recorded\n{}",
        gw.log()
    );
    // A session issued today is restored from its id by the new process, as before.
    live.url = gw.mcp.clone();
    let r = live
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "still here"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");

    // An id 29 days old is restored; one 31 days old, whose end may have been forgotten, is
    // not: its host is told the session is unknown and starts a new one, as the spec has it.
    let id = live.session.clone().unwrap();
    for (days, status) in [(29, 200), (31, 404)] {
        let mut host = RawClient::new(&gw.mcp);
        host.session = Some(issued_days_ago(&id, days));
        let r = host
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        assert_eq!(r.status(), status, "an id issued {days} days ago");
    }
}

/// `id` sealed again as the gateway seals ids (XChaCha20-Poly1305 under the SHA-256 of the
/// shared key, the nonce first), saying it was issued `days` ago.
fn issued_days_ago(id: &str, days: i64) -> String {
    let cipher = XChaCha20Poly1305::new(&Sha256::digest(KEY[0].1.as_bytes()));
    let bytes = URL_SAFE_NO_PAD.decode(id).unwrap();
    let (nonce, sealed) = bytes.split_at(24);
    let plain = cipher.decrypt(XNonce::from_slice(nonce), sealed).unwrap();
    let mut state: Value = serde_json::from_slice(&plain).unwrap();
    state["t"] = json!(registry::now_ms() / 1000 - days * DAY_MS / 1000);
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    let sealed = cipher
        .encrypt(&nonce, serde_json::to_vec(&state).unwrap().as_slice())
        .unwrap();
    URL_SAFE_NO_PAD.encode([nonce.as_slice(), &sealed].concat())
}
