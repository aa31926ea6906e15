//! The token and revocation endpoints while the database is away: a client is told to try
//! again (503 `temporarily_unavailable`), never that it is unknown (`invalid_client`, on which
//! a host's OAuth client throws its registration and tokens away, and its user must sign in
//! again), and a revocation that did not happen is never answered as done.

use gateway_tests::PgCluster;
use tokio::process::Command;

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

#[tokio::test]
async fn a_hosts_metadata_document_out_of_reach_loses_no_sign_in() {
    // The host's document, served over https by a private authority the gateway trusts.
    let redirect = "http://127.0.0.1:33418/callback";
    let doc_port = free_port();
    let certs = gateway_tests::scratch();
    let mut documents = Command::new(peers().join("venv/bin/python"))
        .arg(gateway_tests::package_dir().join("clients/tls_server.py"))
        .arg(doc_port.to_string())
        .arg(&certs)
        .arg(redirect)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    gateway_tests::wait_port(doc_port).await;
    let ca = certs.join("ca.pem");
    let document = format!("https://localhost:{doc_port}/client.json");
    let dir = gateway_tests::scratch();
    let port = free_port();
    let cfg = config(
        &super::sqlite_url(&dir),
        port,
        "registration = \"off\"\nclient_metadata_allow_private = true",
    );
    let listen = format!("127.0.0.1:{port}");
    let env = [
        ("SSL_CERT_FILE", ca.to_str().unwrap()),
        ("MCP_GATEWAY_LISTEN", listen.as_str()),
    ];
    let gw = start_at(&cfg, port, &env[..1]).await;
    let pat = gw.token_for("ann", &["reader"]).await;
    let (verifier, challenge) = pkce();
    let mut query = auth_query(&document, &challenge, port);
    query.retain(|(k, _)| *k != "redirect_uri");
    query.push(("redirect_uri", redirect.into()));
    let code = param(
        &location(&Walk::new(&gw).through(&as_pairs(&query), &pat).await),
        "code",
    )
    .expect("a code");
    let http = reqwest::Client::new();
    let tokens: Value = http
        .post(format!("{}/oauth/token", gw.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("code_verifier", &verifier),
            ("client_id", &document),
            ("redirect_uri", redirect),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let refresh = tokens["refresh_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{tokens}"))
        .to_string();

    // The document's site is down, and the gateway (restarted) has not read it lately.
    documents.kill().await.unwrap();
    let _ = documents.wait().await;
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
