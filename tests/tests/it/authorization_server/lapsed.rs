//! What is over does not stay forever: hosts register anew on every connection and every
//! refresh leaves its spent token behind, so a gateway that kept them all would only grow. At
//! start (and hourly) the gateway forgets clients hosts registered (or named by a metadata
//! document) long ago that have no grant left, grants that lapsed, and expired tokens; a client
//! in use and its live refresh token keep working.

use registry::{ClientRecord, GrantRecord, OAuthStore, SqlRegistry};

use super::*;

const DAY: i64 = 86_400_000;
const UNUSED_DOCUMENT: &str = "https://host.example/unused/client.json";
const BLOCKED_DOCUMENT: &str = "https://host.example/blocked/client.json";

#[tokio::test]
async fn registrations_and_grants_long_over_are_forgotten_and_live_ones_kept() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // Months of use, as the store would hold them: written before the gateway starts.
    {
        let store = SqlRegistry::open(&db, Default::default()).await.unwrap();
        let now = registry::now_ms();
        for id in ["long-unused", "in-use"] {
            store
                .create_client(&ClientRecord {
                    client_id: id.into(),
                    metadata: json!({
                        "redirect_uris": ["http://127.0.0.1:3000/cb"],
                        "token_endpoint_auth_method": "none",
                        "grant_types": ["authorization_code", "refresh_token"],
                        "response_types": ["code"],
                    }),
                    secret_hash: None,
                    source: "dcr".into(),
                    created_at: now - 60 * DAY,
                    blocked_at: None,
                })
                .await
                .unwrap();
        }
        // Hosts that name themselves by a metadata document: one that came once long ago,
        // and one an operator blocked, whose block must stay.
        for (id, blocked) in [(UNUSED_DOCUMENT, false), (BLOCKED_DOCUMENT, true)] {
            store
                .create_client(&ClientRecord {
                    client_id: id.into(),
                    metadata: json!({
                        "client_id": id,
                        "redirect_uris": ["http://127.0.0.1:3000/cb"],
                        "token_endpoint_auth_method": "none",
                    }),
                    secret_hash: None,
                    source: "cimd".into(),
                    created_at: now - 60 * DAY,
                    blocked_at: blocked.then_some(now - 60 * DAY),
                })
                .await
                .unwrap();
        }
        store
            .put_consent("root", "long-unused", "mcp")
            .await
            .unwrap();
        for id in ["live", "lapsed"] {
            store
                .create_grant(&GrantRecord {
                    id: id.into(),
                    subject: "root".into(),
                    client_id: "in-use".into(),
                    roles: vec!["admin".into()],
                    scope: "mcp".into(),
                    resource: resource.clone(),
                    signed_in_with: "oidc:http://idp.example".into(),
                    created_at: now - 50 * DAY,
                    revoked_at: None,
                })
                .await
                .unwrap();
        }
        // The live grant was refreshed yesterday (its spent token expired two days ago, an
        // earlier one); the lapsed one's last refresh token expired twenty days ago.
        for (token, grant, expires) in [
            ("live-refresh-token", "live", now + 29 * DAY),
            ("spent-refresh-token", "live", now - 2 * DAY),
            ("lapsed-refresh-token", "lapsed", now - 20 * DAY),
        ] {
            store
                .create_refresh_token(
                    &registry::hash::text_hash(token),
                    grant,
                    now - 31 * DAY,
                    expires,
                )
                .await
                .unwrap();
        }
    }
    let gw = start_at(&config(&db, port, ""), port, &[]).await;
    let clients = gateway_tests::polled(
        || ids(&gw, "clients", "client_id"),
        |clients| !clients.iter().any(|c| c == "long-unused"),
    )
    .await;
    assert!(
        !clients.iter().any(|c| c == "long-unused"),
        "a client registered 60 days ago and never used is still there: {clients:?}\n{}",
        gw.log()
    );
    assert!(clients.iter().any(|c| c == "in-use"), "{clients:?}");
    // A metadata document's client is fetched again when its host comes back; a block stays.
    assert!(
        !clients.iter().any(|c| c == UNUSED_DOCUMENT),
        "a metadata-document client last seen 60 days ago is still there: {clients:?}"
    );
    assert!(clients.iter().any(|c| c == BLOCKED_DOCUMENT), "{clients:?}");
    assert_eq!(ids(&gw, "grants", "id").await, ["live"]);
    assert!(gw.log().contains("forgot what had lapsed"), "{}", gw.log());

    // What is in use works as before: the host refreshes with its live token.
    let (status, body) = refresh(&gw, "in-use", "live-refresh-token").await;
    assert_eq!(status, 200, "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    // A host whose registration was forgotten is told its client is unknown (`invalid_client`,
    // on which the SDKs register again), and registers as any host does.
    let (status, body) = refresh(&gw, "long-unused", "a-token-of-long-ago").await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"], "invalid_client", "{body}");
    register(&gw, "http://127.0.0.1:3000/cb", "a new host").await;
}

/// The `key` of each item the admin API lists at `/admin/v1/oauth/{what}`.
async fn ids(gw: &Gateway, what: &str, key: &str) -> Vec<String> {
    let path = format!("/admin/v1/oauth/{what}");
    let (status, list) = gw
        .send(reqwest::Method::GET, &path, None, &Value::Null)
        .await;
    assert_eq!(status, 200, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c[key].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A refresh at the token endpoint by `client` (a public one) with `token`: status and body.
async fn refresh(gw: &Gateway, client: &str, token: &str) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", token),
            ("client_id", client),
        ])
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}
