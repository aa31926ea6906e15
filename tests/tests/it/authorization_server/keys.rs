//! The authorization server's signing keys at rest.

use super::*;

/// A gateway that ran without `user_credentials.key` stored its signing key as it was. Restarted
/// with the key, it seals that key in place (the database then holds no seed) and keeps signing
/// with it: the published key is the same one.
#[tokio::test]
async fn a_signing_key_stored_unsealed_is_sealed_once_the_key_is_set() {
    use base64::Engine;
    let dir = gateway_tests::scratch();
    let db = super::sqlite_url(&dir);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let gw =
        Gateway::start_secured(&config(&db, port, ""), &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let secrets = || async {
        let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
        let s: Vec<String> = sqlx::query_scalar("SELECT secret FROM oauth_keys")
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        s
    };
    let before = secrets().await;
    assert!(
        before.len() == 1 && !before[0].contains('.'),
        "no key to seal with: stored as it was: {before:?}"
    );
    assert!(gw.log().contains("stored unsealed"), "{}", gw.log());
    let jwks = gw.get_json("/oauth/jwks").await;

    let seal = base64::engine::general_purpose::STANDARD.encode([6u8; 32]);
    let gw = gw
        .restart(&[
            ("MCP_GATEWAY_LISTEN", &listen),
            ("MCP_GATEWAY_USER_CREDENTIALS_KEY", &seal),
        ])
        .await;
    gw.wait_up(&["fx"]).await;
    let after = secrets().await;
    assert!(
        after.len() == 1 && after[0].contains('.') && after[0] != before[0],
        "sealed in place: {after:?}"
    );
    assert_eq!(gw.get_json("/oauth/jwks").await, jwks, "the same key signs");
}
