//! What is over does not stay forever: hosts register anew on every connection and every
//! refresh leaves its spent token behind, so a gateway that kept them all would only grow. At
//! start (and hourly) the gateway forgets clients hosts registered long ago that have no grant
//! left, grants that lapsed, and expired tokens; a client in use and its live refresh token
//! keep working.

use registry::{ClientRecord, GrantRecord, OAuthStore, SqlRegistry};

use super::*;

const DAY: i64 = 86_400_000;

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
    let clients = || async {
        let (status, list) = gw
            .send(
                reqwest::Method::GET,
                "/admin/v1/oauth/clients",
                None,
                &Value::Null,
            )
            .await;
        assert_eq!(status, 200, "{list}");
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| c["client_id"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    let mut listed = clients().await;
    for _ in 0..100 {
        if !listed.iter().any(|c| c == "long-unused") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        listed = clients().await;
    }
    assert!(
        !listed.iter().any(|c| c == "long-unused"),
        "a client registered 60 days ago and never used is still there: {listed:?}\n{}",
        gw.log()
    );
    assert!(listed.iter().any(|c| c == "in-use"), "{listed:?}");
    let (status, grants) = gw
        .send(
            reqwest::Method::GET,
            "/admin/v1/oauth/grants",
            None,
            &Value::Null,
        )
        .await;
    assert_eq!(status, 200, "{grants}");
    let grant_ids: Vec<&str> = grants
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["id"].as_str())
        .collect();
    assert_eq!(grant_ids, ["live"], "{grants}");
    assert!(gw.log().contains("forgot what had lapsed"), "{}", gw.log());

    // What is in use works as before: the host refreshes with its live token.
    let refreshed = reqwest::Client::new()
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "live-refresh-token"),
            ("client_id", "in-use"),
        ])
        .send()
        .await
        .unwrap();
    let status = refreshed.status();
    let body: Value = refreshed.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    // And a host registers as before.
    register(&gw, "http://127.0.0.1:3000/cb", "a new host").await;
}
