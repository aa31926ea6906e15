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
    let tokens = signed_in(&gw, &id, "http://127.0.0.1:9/cb", port, &pat).await;
    let http = reqwest::Client::new();
    let token = |form: Vec<(&'static str, String)>, path: &'static str| {
        http.post(format!("{}{path}", gw.base)).form(&form).send()
    };
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

#[tokio::test]
async fn a_hosts_metadata_document_out_of_reach_loses_no_sign_in() {
    let redirect = "http://127.0.0.1:33418/callback";
    let mut documents = DocumentHost::start(redirect).await;
    let (ca, document) = (documents.ca(), documents.url.clone());
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(&super::sqlite_url(&dir), port, DOCUMENTS_ONLY);
    let listen = format!("127.0.0.1:{port}");
    let env = [
        ("SSL_CERT_FILE", ca.as_str()),
        ("MCP_GATEWAY_LISTEN", listen.as_str()),
    ];
    let gw = start_at(&cfg, port, &env[..1]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let tokens = signed_in(&gw, &document, redirect, port, &pat).await;
    let http = reqwest::Client::new();
    let refresh = tokens["refresh_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"))
        .to_string();

    // The document's site is down, and the gateway (restarted) has not read it lately.
    documents.server.kill().await.unwrap();
    let _ = documents.server.wait().await;
    let gw = gw.restart(&env).await;
    let r = http
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &document),
        ])
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or_default();
    assert_eq!(
        status,
        200,
        "a refresh while the host's document is out of reach: {body}\n{}",
        gw.log()
    );
}
