//! The token and revocation endpoints while the database is away: a client is told to try
//! again (503 `temporarily_unavailable`), never that it is unknown (`invalid_client`, on which
//! a host's OAuth client throws its registration and tokens away, and its user must sign in
//! again), and a revocation that did not happen is never answered as done.

use gateway_tests::PgCluster;

use super::*;

#[tokio::test]
async fn a_database_outage_asks_clients_to_try_again_and_loses_no_sign_in() {
    let pg = PgCluster::start();
    let port = free_port();
    let gw = start_at(&config(&pg.url, port, ""), port, &[]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let id = register(&gw, "http://127.0.0.1:9/cb", "A").await;
    let (verifier, challenge) = pkce();
    let query = auth_query(&id, &challenge, port);
    let code = param(
        &location(&Walk::new(&gw).through(&as_pairs(&query), &pat).await),
        "code",
    )
    .expect("a code");
    let http = reqwest::Client::new();
    let token = |form: Vec<(&'static str, String)>, path: &'static str| {
        http.post(format!("{}{path}", gw.base)).form(&form).send()
    };
    let tokens: Value = token(
        vec![
            ("grant_type", "authorization_code".into()),
            ("code", code),
            ("code_verifier", verifier),
            ("client_id", id.clone()),
            ("redirect_uri", "http://127.0.0.1:9/cb".into()),
        ],
        "/oauth/token",
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let refresh = tokens["refresh_token"]
        .as_str()
        .expect("tokens")
        .to_string();
    let refreshing = || {
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh.clone()),
            ("client_id", id.clone()),
        ]
    };

    pg.stop();
    for (what, form, path) in [
        ("a refresh", refreshing(), "/oauth/token"),
        (
            "a revocation",
            vec![("token", refresh.clone()), ("client_id", id.clone())],
            "/oauth/revoke",
        ),
    ] {
        let r = token(form, path).await.unwrap();
        let status = r.status();
        let body: Value = r.json().await.unwrap_or_default();
        assert_eq!(
            (status.as_u16(), body["error"].as_str()),
            (503, Some("temporarily_unavailable")),
            "{what} while the database is away: {body}"
        );
    }

    pg.restart();
    let again = gateway_tests::polled(
        || async {
            token(refreshing(), "/oauth/token")
                .await
                .unwrap()
                .status()
                .as_u16()
        },
        |s| *s != 503,
    )
    .await;
    assert_eq!(again, 200, "the sign-in outlived the outage");
}
